#!/bin/bash
# Resolves the agent installer component images from the release payload
# and records them in agent-images.env for the assisted-service units.
# AGENT_ROOT prefixes every path (for tests).
set -euo pipefail

"${AGENT_ROOT:-}/usr/local/bin/release-image-download.sh"
# shellcheck source=/dev/null
source "${AGENT_ROOT:-}/usr/local/bin/release-image.sh"

env_file=${AGENT_ROOT:-}/usr/local/share/assisted-service/agent-images.env
service_image=$(image_for agent-installer-api-server)
controller_image=$(image_for agent-installer-csr-approver)
installer_image=$(image_for agent-installer-orchestrator)
agent_image=$(image_for agent-installer-node-agent)
# agent-tui and the nmstate library, for upstream's interactive console.
# Nothing on this ISO runs it yet, so a payload without it is no reason
# to stop the installation.
if ! utils_image=$(image_for agent-installer-utils); then
	echo "The release has no agent-installer-utils image; AGENT_INSTALLER_UTILS_IMAGE stays empty" >&2
	utils_image=""
fi

tmp=$(mktemp "${env_file}.XXXXXX")
cat >"${tmp}" <<ENV
SERVICE_IMAGE=${service_image}
CONTROLLER_IMAGE=${controller_image}
INSTALLER_IMAGE=${installer_image}
AGENT_DOCKER_IMAGE=${agent_image}
AGENT_INSTALLER_UTILS_IMAGE=${utils_image}
ENV
mv -f "${tmp}" "${env_file}"
echo "Wrote ${env_file}"
