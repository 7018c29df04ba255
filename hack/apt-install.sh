#!/usr/bin/env bash
# Installs the given Debian packages that are not installed yet. Idempotent:
# nothing happens (not even apt-get update) when all are present.
# Usage: hack/apt-install.sh LABEL PACKAGE...
set -euo pipefail
label=${1:?usage: $0 LABEL PACKAGE...}
shift
missing=()
for p in "$@"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
if [ "${#missing[@]}" -eq 0 ]; then
	echo "$label: all packages present ($*)"
	exit 0
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
echo "$label: installing ${missing[*]}"
"${sudo[@]}" apt-get update -o DPkg::Lock::Timeout=600
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends \
	-o DPkg::Lock::Timeout=600 "${missing[@]}"
