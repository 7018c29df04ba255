#!/usr/bin/env bash
# Installs the Debian packages the agentiso tests use. Idempotent: packages
# that are already present are not reinstalled and apt-get update runs only
# when something is missing.
#   shellcheck  - lints the shell scripts embedded in data/
#   systemd     - systemd-analyze verify for the embedded unit files
#   ignition    - ignition-validate and the ignition binary (files stage)
#   xorriso     - independent ISO 9660 reader for the isoeditor cross-check
set -euo pipefail

packages=(shellcheck systemd ignition xorriso)

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

if [ "${#missing[@]}" -eq 0 ]; then
	echo "install-deps: all packages present (${packages[*]})"
	exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "${missing[@]}"
