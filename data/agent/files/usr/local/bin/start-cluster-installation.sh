#!/bin/bash
# Starts the cluster installation once every expected host is known and the
# cluster is ready, then reports progress on the console.
set -uo pipefail

# shellcheck source=/dev/null
source /usr/local/bin/common.sh
# shellcheck source=/dev/null
source /usr/local/bin/issue_status.sh

status_issue=90_start-install

cluster_id=""
until [ -n "${cluster_id}" ]; do
	cluster_id=$(curl_assisted_service /clusters GET --fail 2>/dev/null | jq -r '.[0].id // empty' 2>/dev/null || true)
	if [ -z "${cluster_id}" ]; then
		echo "Waiting for the cluster to be registered"
		sleep 2
	fi
done
echo "Cluster ID: ${cluster_id}"

required=$((${REQUIRED_MASTER_NODES:-0} + ${REQUIRED_ARBITER_NODES:-0} + ${REQUIRED_WORKER_NODES:-0}))
while true; do
	known=$(curl_assisted_service "/infra-envs/${INFRA_ENV_ID}/hosts" GET --fail 2>/dev/null |
		jq '[.[] | select(.status == "known")] | length' 2>/dev/null || echo 0)
	message="Hosts known and ready for cluster installation (${known}/${required})"
	echo "${message}"
	set_issue "${status_issue}" "${message}"
	if [ "${known}" -ge "${required}" ]; then
		break
	fi
	sleep 10
done

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
