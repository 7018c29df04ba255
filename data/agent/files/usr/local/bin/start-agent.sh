#!/bin/bash
# Waits until assisted-service on the rendezvous host lists the infra-env,
# then runs the discovery agent against it.
set -euo pipefail

# shellcheck source=/dev/null
source /usr/local/bin/common.sh
# shellcheck source=/dev/null
source /usr/local/bin/release-image.sh

agent_image=$(image_for agent-installer-node-agent)

infra_env_id=""
until [ -n "${infra_env_id}" ]; do
	infra_env_id=$(curl_assisted_service /infra-envs GET --fail 2>/dev/null | jq -r '.[0].id // empty' 2>/dev/null || true)
	if [ -z "${infra_env_id}" ]; then
		echo "Waiting for the infra-env to be registered at ${SERVICE_BASE_URL}"
		sleep 5
	fi
done

echo "Starting the agent for infra-env ${infra_env_id}"
exec /usr/local/bin/agent --url "${SERVICE_BASE_URL}" --infra-env-id "${infra_env_id}" \
	--agent-version "${agent_image}" --insecure=true
