#!/bin/bash
# Fills HW_VALIDATOR_REQUIREMENTS in assisted-service.env with the minimum
# host hardware per role. A cluster that carries an internal release image
# (extra manifest internalreleaseimage.yaml) needs larger disks.
set -euo pipefail

env_file=/usr/local/share/assisted-service/assisted-service.env

disk_gb=100
arbiter_disk_gb=50
if [ -f /etc/assisted/extra-manifests/internalreleaseimage.yaml ]; then
	disk_gb=220
	arbiter_disk_gb=220
fi

role() {
	# role CPU_CORES RAM_MIB DISK_GB LATENCY_MS PACKET_LOSS_PERCENT
	printf '{"cpu_cores":%d,"ram_mib":%d,"disk_size_gb":%d,"installation_disk_speed_threshold_ms":10,"network_latency_threshold_ms":%d,"packet_loss_percentage":%d}' \
		"$1" "$2" "$3" "$4" "$5"
}

requirements=$(printf '[{"version":"default","master":%s,"arbiter":%s,"worker":%s,"sno":%s}]' \
	"$(role 4 16384 "${disk_gb}" 100 0)" \
	"$(role 2 8192 "${arbiter_disk_gb}" 1000 0)" \
	"$(role 2 8192 "${disk_gb}" 1000 10)" \
	"$(role 4 16384 "${disk_gb}" 0 0)")

tmp=$(mktemp "${env_file}.XXXXXX")
grep -v '^HW_VALIDATOR_REQUIREMENTS=' "${env_file}" >"${tmp}" || true
printf 'HW_VALIDATOR_REQUIREMENTS=%s\n' "${requirements}" >>"${tmp}"
# Keep the file's inode, mode and SELinux label; only replace its contents.
cat "${tmp}" >"${env_file}"
rm -f "${tmp}"
