#!/bin/bash
# Applies per-host installer arguments and Ignition config overrides, the
# settings a hub passes through the BareMetalHost annotations
#   bmac.agent-install.openshift.io/installer-args
#   bmac.agent-install.openshift.io/ignition-config-overrides
# Each /etc/assisted/hostconfig/<host>/ directory may hold
#   installer-args.json              a JSON array of coreos-installer arguments
#   ignition-config-overrides.json   an Ignition config (JSON) merged into the
#                                    host's installed Ignition
# The host is found by matching its mac_addresses against the MAC addresses
# in the inventories of the hosts registered with assisted-service. A
# --copy-network the host already has (agent-set-host-copy-network-arg.sh)
# is kept. AGENT_ROOT prefixes every path (for tests).
set -euo pipefail

# shellcheck source=/dev/null
source "${AGENT_ROOT:-}/usr/local/bin/common.sh"

hostconfig_dir=${AGENT_ROOT:-}/etc/assisted/hostconfig

shopt -s nullglob
dirs=()
for dir in "${hostconfig_dir}"/*/; do
	if [ -f "${dir}installer-args.json" ] || [ -f "${dir}ignition-config-overrides.json" ]; then
		dirs+=("${dir}")
	fi
done
if [ "${#dirs[@]}" -eq 0 ]; then
	echo "No installer arguments or Ignition overrides to apply"
	exit 0
fi

patch_host() {
	# patch_host HOST_ID PATH_SUFFIX BODY
	local code
	code=$(curl_assisted_service "/infra-envs/${INFRA_ENV_ID}/hosts/$1/$2" PATCH \
		--data "$3" --output /dev/null --write-out '%{http_code}')
	if [ "${code}" != "201" ]; then
		echo "PATCH $2 for host $1 returned HTTP ${code}" >&2
		return 1
	fi
}

# apply_all applies every pending directory and removes it from the list once
# done, so a retry only repeats what failed.
apply_all() {
	local hosts dir name macs host_id body failed=0 remaining=()
	if ! hosts=$(curl_assisted_service "/infra-envs/${INFRA_ENV_ID}/hosts" GET --fail); then
		return 1
	fi
	for dir in "${dirs[@]}"; do
		name=$(basename "${dir}")
		if ! apply_dir; then
			failed=1
			remaining+=("${dir}")
		fi
	done
	dirs=("${remaining[@]}")
	return "${failed}"
}

# apply_dir uses dir, name and hosts from apply_all.
apply_dir() {
	local macs host host_id body ok=0
	if [ ! -f "${dir}mac_addresses" ]; then
		echo "${name}: no mac_addresses file, cannot find the host" >&2
		return 1
	fi
	macs=$(tr '[:upper:]' '[:lower:]' <"${dir}mac_addresses")
	host=$(jq -c --arg macs "${macs}" '
		($macs | split("\n") | map(select(length > 0))) as $want
		| [.[] | select(
			((.inventory // "") | if . == "" then {} else fromjson end
				| [.interfaces[]?.mac_address // empty | ascii_downcase])
			as $have | any($want[]; . as $m | $have | index($m) != null))]
		| .[0] // empty' <<<"${hosts}")
	if [ -z "${host}" ]; then
		echo "${name}: no registered host has one of its MAC addresses yet" >&2
		return 1
	fi
	host_id=$(jq -r '.id' <<<"${host}")
	if [ -f "${dir}installer-args.json" ]; then
		# The user's arguments, plus --copy-network when the host has it.
		body=$(jq -c --argjson host "${host}" '
			(($host.installer_args // "") | if . == "" then [] else fromjson end) as $current
			| {args: (. + (if any($current[]; . == "--copy-network") and (any(.[]; . == "--copy-network") | not)
				then ["--copy-network"] else [] end))}' "${dir}installer-args.json")
		if patch_host "${host_id}" installer-args "${body}"; then
			echo "${name}: installer arguments set on host ${host_id}"
		else
			ok=1
		fi
	fi
	if [ -f "${dir}ignition-config-overrides.json" ]; then
		body=$(jq -Rsc '{config: .}' "${dir}ignition-config-overrides.json")
		if patch_host "${host_id}" ignition "${body}"; then
			echo "${name}: Ignition config override set on host ${host_id}"
		else
			ok=1
		fi
	fi
	return "${ok}"
}

until apply_all; do
	echo "Retrying in 15 seconds for: ${dirs[*]}"
	sleep 15
done
echo "All installer arguments and Ignition overrides applied"
