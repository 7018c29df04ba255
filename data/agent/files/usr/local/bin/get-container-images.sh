#!/bin/bash
# Resolves the agent installer component images from the release payload
# and records them in agent-images.env for the assisted-service units.
set -euo pipefail

/usr/local/bin/release-image-download.sh
# shellcheck source=/dev/null
source /usr/local/bin/release-image.sh

env_file=/usr/local/share/assisted-service/agent-images.env
service_image=$(image_for agent-installer-api-server)
controller_image=$(image_for agent-installer-csr-approver)
installer_image=$(image_for agent-installer-orchestrator)
agent_image=$(image_for agent-installer-node-agent)

tmp=$(mktemp "${env_file}.XXXXXX")
cat >"${tmp}" <<ENV
SERVICE_IMAGE=${service_image}
CONTROLLER_IMAGE=${controller_image}
INSTALLER_IMAGE=${installer_image}
AGENT_DOCKER_IMAGE=${agent_image}
ENV
mv -f "${tmp}" "${env_file}"
echo "Wrote ${env_file}"
