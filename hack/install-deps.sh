#!/bin/sh
# install-deps.sh installs the Debian packages the tests use (idempotent).
#   xorriso: independent ISO 9660 reader for pkg/isoeditor's cross-check test.
set -eu

missing=""
command -v xorriso >/dev/null 2>&1 || missing="$missing xorriso"

if [ -z "$missing" ]; then
	echo "install-deps: nothing to install"
	exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
	sudo="sudo"
fi
echo "install-deps: installing$missing"
$sudo apt-get update -qq
# shellcheck disable=SC2086 # word splitting of the package list is intended
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
