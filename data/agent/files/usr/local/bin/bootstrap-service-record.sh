#!/bin/bash
# Service records: what a unit's script did and how it ended, kept for
# agent-gather and support. Each service has a JSON array in
# /var/log/openshift/<service>.json (the place and entry format upstream's
# hosts use), one object per event:
#   timestamp     UTC, 2006-01-02T15:04:05Z
#   phase         "service start", "service end", "stage start", "stage end"
#   stage         the stage's name (stage events)
#   result        "success" or "failure" (end events)
#   errorMessage  why a stage or the script failed: the message given, or
#                 the exit status and the unit's last journal lines
# Empty fields are left out.
#
# Source this file at the top of a script. It records the service start
# at once and, when the script exits, the service end with its result
# (and the end of a stage left open). In between:
#   record_service_stage_start NAME
#   record_service_stage_success
#   record_service_stage_failure [MESSAGE]
# The service is the systemd unit running the script (without .service),
# or the script's name outside a unit; SERVICE_NAME overrides it. Recording
# never makes the script fail. AGENT_ROOT prefixes every path (for tests).

SERVICE_RECORDS_DIR=${SERVICE_RECORDS_DIR:-${AGENT_ROOT:-}/var/log/openshift}

# _service_record_unit prints the systemd service running this script, if any.
_service_record_unit() {
	local cgroup
	cgroup=$(sed -n 's|^0::||p' "${AGENT_ROOT:-}/proc/self/cgroup" 2>/dev/null) || true
	cgroup=${cgroup##*/}
	if [[ "${cgroup}" == *.service ]]; then
		printf '%s\n' "${cgroup}"
	fi
}

_service_record_systemd_unit=$(_service_record_unit)
if [ -z "${SERVICE_NAME:-}" ]; then
	SERVICE_NAME=${_service_record_systemd_unit%.service}
	if [ -z "${SERVICE_NAME}" ]; then
		SERVICE_NAME=$(basename "$0" .sh)
	fi
fi
_service_record_stage=""

# _service_record PHASE [RESULT [ERROR_MESSAGE]] appends one entry to the
# service's record file.
_service_record() {
	local file="${SERVICE_RECORDS_DIR}/${SERVICE_NAME}.json" entry size
	mkdir -p "${SERVICE_RECORDS_DIR}" 2>/dev/null || return 0
	# A unit that fails and restarts for hours must not fill the memory of
	# the live system: past 1 MiB the file becomes <service>.json.1.
	size=$(stat -c %s "${file}" 2>/dev/null) || size=0
	if [ "${size}" -gt 1048576 ]; then
		mv -f "${file}" "${file}.1"
	fi
	entry=$(jq -cn \
		--arg timestamp "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
		--arg phase "$1" \
		--arg stage "${_service_record_stage}" \
		--arg result "${2:-}" \
		--arg errorMessage "${3:-}" \
		'{$timestamp, $phase, $stage, $result, $errorMessage} | with_entries(select(.value != ""))') || return 0
	if { if [ -s "${file}" ]; then cat "${file}"; else echo '[]'; fi; } |
		jq --argjson entry "${entry}" '. + [$entry]' >"${file}.tmp" 2>/dev/null; then
		mv -f "${file}.tmp" "${file}"
	else
		rm -f "${file}.tmp"
		echo "service records: could not append to ${file}" >&2
	fi
	return 0
}

record_service_stage_start() {
	if [ -n "${_service_record_stage}" ]; then
		_service_record "stage end" failure "stage ${1} started before this one ended"
	fi
	_service_record_stage=$1
	_service_record "stage start"
}

record_service_stage_success() {
	_service_record "stage end" success
	_service_record_stage=""
}

record_service_stage_failure() {
	_service_record "stage end" failure "${1:-}"
	_service_record_stage=""
}

# _service_record_exit STATUS records the end of the script.
_service_record_exit() {
	local status=$1 result=success message="" journal=""
	if [ "${status}" -ne 0 ]; then
		result=failure
		message="exit status ${status}"
		if [ -n "${_service_record_systemd_unit}" ]; then
			journal=$(journalctl --unit="${_service_record_systemd_unit}" --lines=3 --output=cat 2>/dev/null) || true
		fi
		if [ -n "${journal}" ]; then
			message="${message}; last log lines:"$'\n'"${journal}"
		fi
	fi
	if [ -n "${_service_record_stage}" ]; then
		_service_record "stage end" "${result}" "${message}"
		_service_record_stage=""
	fi
	_service_record "service end" "${result}" "${message}"
}

_service_record "service start"
trap '_service_record_exit "$?"' EXIT
