#!/bin/bash
# Shows on the console which rendezvous-host services are still pending and
# any host configuration failures, refreshing every 5 seconds.
set -uo pipefail

# shellcheck source=/dev/null
source /usr/local/bin/issue_status.sh

services=(assisted-service agent-register-cluster agent-register-infraenv apply-host-config agent-apply-host-overrides start-cluster-installation)
failures_file=/run/agent-installer/host-config-failures

while true; do
	pending=()
	for service in "${services[@]}"; do
		if ! systemctl is-active --quiet "${service}.service"; then
			pending+=("${service}")
		fi
	done
	if [ "${#pending[@]}" -gt 0 ]; then
		set_issue 70_agent-services "Waiting for services: ${pending[*]}"
	else
		clear_issue 70_agent-services
	fi

	if [ -s "${failures_file}" ]; then
		set_issue 80_host-config "$(cat "${failures_file}")"
	else
		clear_issue 80_host-config
	fi
	sleep 5
done
