#!/bin/bash
# Add-nodes workflow: this host runs its own assisted-service, into which
# agent-import-cluster.service imported the installed cluster. Once this
# host is known (validations pass) it starts the host's own installation;
# the cluster then sees its certificate signing requests.
# AGENT_ROOT prefixes every path (for tests).
set -uo pipefail

# shellcheck source=/dev/null
source "${AGENT_ROOT:-}/usr/local/bin/common.sh"
# shellcheck source=/dev/null
source "${AGENT_ROOT:-}/usr/local/bin/issue_status.sh"

status_issue=90_add-node

cluster_id=""
until [ -n "${cluster_id}" ]; do
	cluster_id=$(curl_assisted_service /clusters GET --fail 2>/dev/null | jq -r '.[0].id // empty' 2>/dev/null || true)
	if [ -z "${cluster_id}" ]; then
		echo "Waiting for the installed cluster to be imported"
		sleep 2
	fi
done
echo "Imported cluster ID: ${cluster_id}"

host_id=""
while true; do
	hosts=$(curl_assisted_service "/infra-envs/${INFRA_ENV_ID}/hosts" GET --fail 2>/dev/null || true)
	status=$(jq -r '.[0].status // empty' <<<"${hosts:-[]}" 2>/dev/null || true)
	if [ "${status}" = "known" ]; then
		host_id=$(jq -r '.[0].id' <<<"${hosts}")
		break
	fi
	message="Waiting for this host to be ready to join the cluster (status: ${status:-not registered})"
	echo "${message}"
	set_issue "${status_issue}" "${message}"
	sleep 10
done
clear_issue "${status_issue}"

code=$(curl_assisted_service "/infra-envs/${INFRA_ENV_ID}/hosts/${host_id}/actions/install" POST \
	--output /dev/null --write-out '%{http_code}' || true)
if [ "${code}" != "202" ]; then
	message="Could not start this host's installation (HTTP ${code:-no answer}); see journalctl -u agent-add-node"
	echo "${message}"
	set_issue "${status_issue}" "${message}"
	exit 1
fi
echo "Host ${host_id} installation started: it joins cluster ${CLUSTER_NAME:-} after its certificate signing requests are approved"
