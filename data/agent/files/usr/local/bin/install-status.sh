#!/bin/bash
# Shows on the console which rendezvous-host services are still pending and
# any host configuration failures, refreshing every 5 seconds.
#
# The services are those of the ISO's workflow, as upstream lists them: an
# add-nodes ISO (/etc/assisted/add-nodes.env) imports the installed cluster
# and adds this host to it (agent-import-cluster, agent-add-node), and never
# runs the install's agent-register-cluster, agent-apply-host-overrides and
# start-cluster-installation. AGENT_ROOT prefixes every path (for tests).
set -uo pipefail

# shellcheck source=/dev/null
source "${AGENT_ROOT:-}/usr/local/bin/issue_status.sh"

failures_file=${AGENT_ROOT:-}/run/agent-installer/host-config-failures

workflow_services() {
	if [ -f "${AGENT_ROOT:-}/etc/assisted/add-nodes.env" ]; then
		echo assisted-service agent-import-cluster agent-register-infraenv apply-host-config agent-add-node
	else
		echo assisted-service agent-register-cluster agent-register-infraenv apply-host-config agent-apply-host-overrides start-cluster-installation
	fi
}

while true; do
	pending=()
	read -ra services <<<"$(workflow_services)"
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
