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
# is kept. A directory without mac_addresses can never be matched (agentiso
# refuses such a host when it builds the ISO): it is reported and skipped.
# A request assisted-service answers with HTTP 400 is refused for good (it
# validates installer arguments and Ignition): it is reported and not
# retried. Anything else is retried until it succeeds. AGENT_ROOT prefixes
# every path (for tests).
set -euo pipefail

# shellcheck source=/dev/null
source "${AGENT_ROOT:-}/usr/local/bin/common.sh"

hostconfig_dir=${AGENT_ROOT:-}/etc/assisted/hostconfig

shopt -s nullglob
dirs=()
for dir in "${hostconfig_dir}"/*/; do
	if [ -f "${dir}installer-args.json" ] || [ -f "${dir}ignition-config-overrides.json" ]; then
		if [ ! -f "${dir}mac_addresses" ]; then
			echo "$(basename "${dir}"): no mac_addresses file, so no host can be matched to it: its installer arguments and Ignition override are NOT applied" >&2
			continue
		fi
		dirs+=("${dir}")
	fi
done
if [ "${#dirs[@]}" -eq 0 ]; then
	echo "No installer arguments or Ignition overrides to apply"
	exit 0
fi

patch_host() {
	# patch_host HOST_ID PATH_SUFFIX BODY: 0 when applied, 2 when refused
	# for good (HTTP 400, the reason printed), 1 when worth retrying.
	local code reason
	reason=$(mktemp)
	code=$(curl_assisted_service "/infra-envs/${INFRA_ENV_ID}/hosts/$1/$2" PATCH \
		--data "$3" --output "${reason}" --write-out '%{http_code}') || true
	case "${code}" in
	201) rm -f "${reason}"; return 0 ;;
	400)
		echo "PATCH $2 for host $1 refused with HTTP 400: $(head -c 1000 "${reason}")" >&2
		rm -f "${reason}"
		return 2
		;;
	esac
	rm -f "${reason}"
	echo "PATCH $2 for host $1 returned HTTP ${code}" >&2
	return 1
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
	local macs host host_id body rc ok=0
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
		rc=0
		patch_host "${host_id}" installer-args "${body}" || rc=$?
		case "${rc}" in
		0) echo "${name}: installer arguments set on host ${host_id}" ;;
		2) echo "${name}: installer arguments NOT applied to host ${host_id}" >&2 ;;
		*) ok=1 ;;
		esac
	fi
	if [ -f "${dir}ignition-config-overrides.json" ]; then
		body=$(jq -Rsc '{config: .}' "${dir}ignition-config-overrides.json")
		rc=0
		patch_host "${host_id}" ignition "${body}" || rc=$?
		case "${rc}" in
		0) echo "${name}: Ignition config override set on host ${host_id}" ;;
		2) echo "${name}: Ignition config override NOT applied to host ${host_id}" >&2 ;;
		*) ok=1 ;;
		esac
	fi
	return "${ok}"
}

until apply_all; do
	echo "Retrying in 15 seconds for: ${dirs[*]}"
	sleep 15
done
echo "All installer arguments and Ignition overrides applied"
