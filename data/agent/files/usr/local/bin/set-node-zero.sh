#!/bin/bash
# Decides whether this host is the rendezvous host ("node zero"): it is when
# one of its interfaces holds NODE_ZERO_IP. node zero gets /etc/assisted/node0,
# which the assisted-service units require.
set -euo pipefail

# shellcheck source=/dev/null
source /usr/local/bin/issue_status.sh

env_file=/etc/assisted/rendezvous-host.env
motd_file=/etc/motd.d/60-rendezvous-host

while [ ! -f "${env_file}" ]; do
	set_issue 60-rendezvous-host "Not configured - no Rendezvous IP set"
	echo "Not configured - no Rendezvous IP set" >"${motd_file}"
	sleep 30
done

# shellcheck source=/dev/null
source "${env_file}"

holds_ip() {
	ip -j address | jq -e --arg ip "${NODE_ZERO_IP}" \
		'[.[].addr_info] | flatten | map(.local == $ip) | any' >/dev/null
}

is_node_zero=false
for _ in 1 2 3 4 5 6; do
	if holds_ip; then
		is_node_zero=true
		break
	fi
	sleep 5
done

if [ "${is_node_zero}" = true ]; then
	mac=$(ip -j address | jq -r --arg ip "${NODE_ZERO_IP}" \
		'[.[] | select(any(.addr_info[]?; .local == $ip)) | .address][0] // ""')
	cat >/etc/assisted/node0 <<NODE0
# This host holds the rendezvous IP ${NODE_ZERO_IP} and runs assisted-service.
BOOTSTRAP_HOST_MAC=${mac}
NODE0
	message="This host (${NODE_ZERO_IP}) is the rendezvous host."
	cat >/etc/motd <<MOTD
${message}
Watch the installation with: sudo journalctl -u assisted-service.service -f
MOTD
else
	message="This host is not the rendezvous host. The rendezvous host is at ${NODE_ZERO_IP}."
fi
echo "${message}"
echo "${message}" >"${motd_file}"
set_issue 60-rendezvous-host "${message}"
