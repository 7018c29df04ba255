#!/bin/bash
# Writes HW_VALIDATOR_REQUIREMENTS (minimum hardware per role) into
# assisted-service.env. Single-node hosts need 8 cores before OpenShift 4.22
# and 4 from 4.22 (version from RELEASE_IMAGES; unknown keeps 8). An internal
# release image raises control-plane and single-node disks to 220 GB.
# AGENT_ROOT prefixes every path (for tests).
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
fi
echo "OpenShift ${version/ /.}: single-node hosts need ${sno_cores} cores" >&2

role() {
	# role CPU_CORES RAM_MIB DISK_GB LATENCY_MS PACKET_LOSS_PERCENT
	printf '{"cpu_cores":%d,"ram_mib":%d,"disk_size_gb":%d,"installation_disk_speed_threshold_ms":10,"network_latency_threshold_ms":%d,"packet_loss_percentage":%d}' \
		"$1" "$2" "$3" "$4" "$5"
}

sno() {
	# sno CPU_CORES DISK_GB (no peers: no latency or packet loss limits)
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
