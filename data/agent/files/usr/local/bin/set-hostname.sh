#!/bin/bash
# Sets the hostname from /etc/assisted/hostnames/<mac> when one of this
# host's MAC addresses has an entry there.
set -euo pipefail

cat >/etc/motd <<'MOTD'
The primary service is agent.service. To watch its status, run:
  sudo journalctl -u agent.service -f
MOTD
mkdir -p /etc/motd.d
echo "Waiting for network..." >/etc/motd.d/60-rendezvous-host

hostnames_dir=/etc/assisted/hostnames
if [ ! -d "${hostnames_dir}" ]; then
	exit 0
fi

for mac in $(ip -j link | jq -r '.[].address // empty' | tr '[:upper:]' '[:lower:]'); do
	file="${hostnames_dir}/${mac}"
	if [ -f "${file}" ]; then
		name=$(tr -d '[:space:]' <"${file}")
		if [ -n "${name}" ]; then
			echo "Setting hostname to ${name} (MAC ${mac})"
			hostnamectl set-hostname "${name}"
			exit 0
		fi
	fi
done
echo "No hostname configured for this host's MAC addresses"
