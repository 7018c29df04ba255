#!/bin/bash
# Makes coreos-installer copy this host's network configuration to the
# installed system (--copy-network) when the network was configured by hand:
# when /etc/NetworkManager/system-connections holds a keyfile (a file with a
# [connection] section) that nm-initrd-generator did not write, as upstream
# decides. Runs on every host once the agent has started.
#
# The argument is added to the host's installer arguments in
# assisted-service, keeping the ones already set (apply-host-overrides.sh
# keeps --copy-network in turn), and read back until it is there.
# AGENT_ROOT prefixes every path (for tests).
set -uo pipefail

# shellcheck source=/dev/null
source "${AGENT_ROOT:-}/usr/local/bin/common.sh"

connections_dir=${AGENT_ROOT:-}/etc/NetworkManager/system-connections
sys_class_net=${AGENT_ROOT:-}/sys/class/net

manual=()
for keyfile in "${connections_dir}"/*; do
	if [ ! -f "${keyfile}" ] || ! grep -q '^\[connection\]' "${keyfile}"; then
		continue
	fi
	if grep -q 'org\.freedesktop\.NetworkManager\.origin=nm-initrd-generator' "${keyfile}"; then
		continue
	fi
	manual+=("$(basename "${keyfile}")")
done
if [ "${#manual[@]}" -eq 0 ]; then
	echo "No hand-made NetworkManager keyfiles in ${connections_dir}: nothing to do"
	exit 0
fi
echo "Hand-made NetworkManager keyfiles: ${manual[*]}; the installation of this host gets --copy-network"

# This host's MAC addresses, to find it among the registered hosts.
macs=$(cat "${sys_class_net}"/*/address 2>/dev/null | tr '[:upper:]' '[:lower:]' | grep -v '^00:00:00:00:00:00$' | sort -u)
if [ -z "${macs}" ]; then
	echo "This host has no MAC address; cannot find it in assisted-service" >&2
	exit 1
fi

refused=0
while true; do
	infra_env_id=$(curl_assisted_service /infra-envs GET --fail 2>/dev/null | jq -r '.[0].id // empty' 2>/dev/null || true)
	host=""
	if [ -n "${infra_env_id}" ]; then
		host=$(curl_assisted_service "/infra-envs/${infra_env_id}/hosts" GET --fail 2>/dev/null |
			jq -c --arg macs "${macs}" '
				($macs | split("\n") | map(select(length > 0))) as $mine
				| [.[] | select(
					((.inventory // "") | if . == "" then {} else fromjson end
						| [.interfaces[]?.mac_address // empty | ascii_downcase])
					as $have | any($mine[]; . as $m | any($have[]; . == $m)))]
				| .[0] // empty' 2>/dev/null || true)
	fi
	if [ -z "${host}" ]; then
		echo "Waiting for this host to register with assisted-service"
		sleep 5
		continue
	fi
	host_id=$(jq -r '.id' <<<"${host}")
	args=$(jq -c '(.installer_args // "") | if . == "" then [] else fromjson end' <<<"${host}")
	if jq -e 'any(.[]; . == "--copy-network")' <<<"${args}" >/dev/null; then
		echo "Host ${host_id} has --copy-network"
		exit 0
	fi
	code=$(curl_assisted_service "/infra-envs/${infra_env_id}/hosts/${host_id}/installer-args" PATCH \
		--data "$(jq -c '{args: (. + ["--copy-network"])}' <<<"${args}")" \
		--output /dev/null --write-out '%{http_code}' || true)
	if [ "${code}" = "201" ]; then
		echo "Asked for --copy-network on host ${host_id}; checking"
		refused=0
	else
		refused=$((refused + 1))
		echo "Setting --copy-network on host ${host_id} failed (HTTP ${code})" >&2
		if [ "${refused}" -ge 12 ]; then
			echo "assisted-service refused --copy-network 12 times; giving up" >&2
			exit 1
		fi
	fi
	sleep 5
done
