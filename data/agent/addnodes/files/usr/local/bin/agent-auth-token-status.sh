#!/bin/bash
# Add-nodes workflow: the node ISO's assisted-service tokens expire at
# AUTH_TOKEN_EXPIRY (RFC 3339, /etc/assisted/add-nodes.env). Once they have,
# this host's own assisted-service refuses its agent and the host cannot
# join the cluster: the console says so, and what to do, until the clock
# says otherwise (a wrong hardware clock corrected by chrony clears it).
# AGENT_ROOT prefixes every path (for tests).
set -uo pipefail

# shellcheck source=/dev/null
source "${AGENT_ROOT:-}/usr/local/bin/issue_status.sh"

status_issue=65_token

if [ -z "${AUTH_TOKEN_EXPIRY:-}" ]; then
	echo "No AUTH_TOKEN_EXPIRY in /etc/assisted/add-nodes.env: this ISO's tokens do not expire"
	exit 0
fi
if ! expiry=$(date -u -d "${AUTH_TOKEN_EXPIRY}" +%s 2>/dev/null); then
	echo "AUTH_TOKEN_EXPIRY \"${AUTH_TOKEN_EXPIRY}\" in /etc/assisted/add-nodes.env is not a date" >&2
	exit 1
fi
echo "This ISO's authentication tokens expire at ${AUTH_TOKEN_EXPIRY}"

message="The authentication token of this ISO expired at ${AUTH_TOKEN_EXPIRY}: this host cannot join the cluster with it. Build a new ISO with \"agentiso node-image create\" (or \"oc adm node-image create\"), then boot this host from it."
expired=""
while true; do
	now=$(date -u +%s)
	if [ "${now}" -gt "${expiry}" ]; then
		if [ -z "${expired}" ]; then
			echo "${message}"
			expired=yes
		fi
		set_issue "${status_issue}" "${message}"
	else
		if [ -n "${expired}" ]; then
			echo "The clock is before ${AUTH_TOKEN_EXPIRY} again: the tokens are valid"
			expired=""
		fi
		clear_issue "${status_issue}"
	fi
	sleep 5
done
