#!/bin/bash
# Starts the cluster installation once every expected host is known and the
# cluster is ready, then reports progress on the console.
# AGENT_ROOT prefixes every path (for tests).
set -uo pipefail

# shellcheck source=/dev/null
source "${AGENT_ROOT:-}/usr/local/bin/common.sh"
# shellcheck source=/dev/null
source "${AGENT_ROOT:-}/usr/local/bin/issue_status.sh"
# shellcheck source=/dev/null
source "${AGENT_ROOT:-}/usr/local/bin/bootstrap-service-record.sh"

status_issue=90_start-install

record_service_stage_start wait-for-cluster
cluster_id=""
until [ -n "${cluster_id}" ]; do
	cluster_id=$(curl_assisted_service /clusters GET --fail 2>/dev/null | jq -r '.[0].id // empty' 2>/dev/null || true)
	if [ -z "${cluster_id}" ]; then
		echo "Waiting for the cluster to be registered"
		sleep 2
	fi
done
echo "Cluster ID: ${cluster_id}"
record_service_stage_success

# The installation starts when exactly the expected number of hosts is
# known (as upstream): with more, an extra host would be installed into the
# cluster, so it does not start and says why on the console.
record_service_stage_start wait-for-hosts
required=$((${REQUIRED_MASTER_NODES:-0} + ${REQUIRED_ARBITER_NODES:-0} + ${REQUIRED_WORKER_NODES:-0}))
while true; do
	hosts=$(curl_assisted_service "/infra-envs/${INFRA_ENV_ID}/hosts" GET --fail 2>/dev/null || true)
	known=$(jq '[.[] | select(.status == "known")] | length' <<<"${hosts:-[]}" 2>/dev/null || echo 0)
	insufficient=$(jq '[.[] | select(.status == "insufficient")] | length' <<<"${hosts:-[]}" 2>/dev/null || echo 0)
	echo "Hosts known and ready for cluster installation (${known}/${required})"
	if [ "${known}" -eq "${required}" ]; then
		break
	fi
	if [ "${known}" -gt "${required}" ]; then
		message="${known} hosts are ready but the installation expects ${required}, so it does not start: boot only the cluster's hosts from this ISO (an extra host stays registered), or build the ISO for ${known} hosts"
	else
		message="Waiting for all hosts to be ready: ${required} expected, ${known} ready, ${insufficient} not validated"
	fi
	echo "${message}"
	set_issue "${status_issue}" "${message}"
	sleep 10
done
record_service_stage_success

record_service_stage_start install-cluster
while true; do
	status=$(curl_assisted_service /clusters GET --fail 2>/dev/null | jq -r '.[0].status // empty' 2>/dev/null || true)
	case "${status}" in
	ready)
		code=$(curl_assisted_service "/clusters/${cluster_id}/actions/install" POST \
			--output /dev/null --write-out '%{http_code}' || true)
		if [ "${code}" = "202" ]; then
			message="Cluster installation in progress"
		else
			message="Starting the cluster installation failed (HTTP ${code}), retrying"
		fi
		;;
	installed)
		echo "Cluster installation complete"
		clear_issue "${status_issue}"
		record_service_stage_success
		exit 0
		;;
	preparing-for-installation | installing | finalizing)
		message="Cluster installation in progress"
		;;
	"")
		message="Waiting for the cluster status"
		;;
	*)
		message="Installation cannot proceed: Cluster status: ${status}"
		;;
	esac
	echo "${message}"
	set_issue "${status_issue}" "${message}"
	sleep 5
done
