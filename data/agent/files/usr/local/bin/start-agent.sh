#!/bin/bash
# Waits until assisted-service on the rendezvous host lists the infra-env,
# then runs the discovery agent against it. An error answer (a refused
# token, a failing service) is printed with the service's message, once per
# change, instead of waiting in silence.
set -euo pipefail

# shellcheck source=/dev/null
source "${AGENT_ROOT:-}/usr/local/bin/common.sh"
# shellcheck source=/dev/null
source "${AGENT_ROOT:-}/usr/local/bin/release-image.sh"

agent_image=$(image_for agent-installer-node-agent)

infra_env_id=""
until [ -n "${infra_env_id}" ]; do
	get_assisted_service /infra-envs
	case "${ANSWER_CODE}" in
	2??)
		infra_env_id=$(printf '%s' "${ANSWER_BODY}" | jq -r '.[0].id // empty' 2>/dev/null) || infra_env_id=""
		[ -n "${infra_env_id}" ] || echo "Waiting for the infra-env to be registered at ${SERVICE_BASE_URL}"
		;;
	[1-5]??)
		say_once "$(answer_said)"
		;;
	*)
		echo "Waiting for assisted-service at ${SERVICE_BASE_URL}"
		;;
	esac
	[ -n "${infra_env_id}" ] || sleep 5
done

echo "Starting the agent for infra-env ${infra_env_id}"
exec "${AGENT_ROOT:-}/usr/local/bin/agent" --url "${SERVICE_BASE_URL}" --infra-env-id "${infra_env_id}" \
	--agent-version "${agent_image}" --insecure=true
