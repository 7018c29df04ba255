#!/bin/bash
# Copies the discovery agent binary out of the release payload's
# agent-installer-node-agent image into /usr/local/bin.
set -euo pipefail

/usr/local/bin/release-image-download.sh
# shellcheck source=/dev/null
source /usr/local/bin/release-image.sh

if [ -x /usr/local/bin/agent ]; then
	exit 0
fi
agent_image=$(image_for agent-installer-node-agent)
echo "Extracting the agent from ${agent_image}"
podman run --privileged --rm -v /usr/local/bin:/hostbin "${agent_image}" cp /usr/bin/agent /hostbin
