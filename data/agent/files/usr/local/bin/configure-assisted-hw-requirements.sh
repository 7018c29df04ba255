#!/bin/bash
# Fills HW_VALIDATOR_REQUIREMENTS in assisted-service.env with the minimum
# host hardware per role, for the release this ISO installs.
#
# - The release's major.minor is read from RELEASE_IMAGES in the same env
#   file (agentiso writes it from the release version). A single-node
#   cluster needs 8 cores before OpenShift 4.22 and 4 from 4.22 on, the
#   values assisted-service itself uses; the assisted-service of an older
#   release cannot apply a version-dependent rule itself, so the value is
#   chosen here. An unknown version keeps the stricter 8.
# - A cluster that carries an internal release image (extra manifest
#   internalreleaseimage.yaml, no registry) needs 220 GB disks on control
#   plane and single-node hosts; arbiter and worker disks do not change.
#
# AGENT_ROOT prefixes every path (tests run the script in a scratch root).
set -euo pipefail

root=${AGENT_ROOT:-}
env_file=${root}/usr/local/share/assisted-service/assisted-service.env

control_plane_disk_gb=100
if [ -f "${root}/etc/assisted/extra-manifests/internalreleaseimage.yaml" ]; then
	control_plane_disk_gb=220
fi

sno_cores=8
version=$(sed -n 's/^RELEASE_IMAGES=.*"openshift_version":"\([0-9][0-9]*\)\.\([0-9][0-9]*\)".*/\1 \2/p' "${env_file}" | head -n 1)
if [ -n "${version}" ]; then
	read -r major minor <<<"${version}"
	if [ "${major}" -gt 4 ] || { [ "${major}" -eq 4 ] && [ "${minor}" -ge 22 ]; }; then
		sno_cores=4
	fi
	echo "OpenShift ${major}.${minor}: single-node hosts need ${sno_cores} CPU cores" >&2
else
	echo "No openshift_version in RELEASE_IMAGES; single-node hosts need ${sno_cores} CPU cores" >&2
fi

role() {
	# role CPU_CORES RAM_MIB DISK_GB LATENCY_MS PACKET_LOSS_PERCENT
	printf '{"cpu_cores":%d,"ram_mib":%d,"disk_size_gb":%d,"installation_disk_speed_threshold_ms":10,"network_latency_threshold_ms":%d,"packet_loss_percentage":%d}' \
		"$1" "$2" "$3" "$4" "$5"
}

sno() {
	# sno CPU_CORES DISK_GB: single-node hosts have no peers, so no network
	# latency or packet loss requirement.
	printf '{"cpu_cores":%d,"ram_mib":16384,"disk_size_gb":%d,"installation_disk_speed_threshold_ms":10}' "$1" "$2"
}

requirements=$(printf '[{"version":"default","master":%s,"arbiter":%s,"worker":%s,"sno":%s}]' \
	"$(role 4 16384 "${control_plane_disk_gb}" 100 0)" \
	"$(role 2 8192 50 1000 0)" \
	"$(role 2 8192 100 1000 10)" \
	"$(sno "${sno_cores}" "${control_plane_disk_gb}")")

tmp=$(mktemp "${env_file}.XXXXXX")
grep -v '^HW_VALIDATOR_REQUIREMENTS=' "${env_file}" >"${tmp}" || true
printf 'HW_VALIDATOR_REQUIREMENTS=%s\n' "${requirements}" >>"${tmp}"
# Keep the file's inode, mode and SELinux label; only replace its contents.
cat "${tmp}" >"${env_file}"
rm -f "${tmp}"
