#!/usr/bin/env bash
# Writes a cases file for the QEMU boot test (test/e2e, AGENTISO_E2E_CASES):
# one case per NAME ISO IGNITION triple. IGNITION is the Ignition config the
# ISO embeds; the test requires the guest's /config.ign to have its sha256.
# The test also requires every kernel argument in the ISO's kargs embed areas
# (coreos/kargs.json) to reach /proc/cmdline.
# Relative paths are resolved against the current directory.
#
# Usage: hack/e2e-cases.sh OUT.json NAME ISO IGNITION [NAME ISO IGNITION ...]
set -euo pipefail
out=${1:?usage: $0 OUT.json NAME ISO IGNITION [...]}
shift
[ $# -gt 0 ] && [ $(($# % 3)) -eq 0 ] || { echo "usage: $0 OUT.json NAME ISO IGNITION [...]" >&2; exit 2; }
json_str() { # refuse what would need escaping rather than escape it
  case $1 in *[\"\\]* | *$'\n'*) echo "$0: unsupported character in '$1'" >&2; exit 2 ;; esac
  printf '"%s"' "$1"
}
tmp="$out.tmp.$$"
{
  echo "["
  sep=""
  while [ $# -gt 0 ]; do
    name=$1 iso=$(realpath -m "$2") ign=$(realpath -m "$3")
    shift 3
    [ -f "$iso" ] || { echo "$0: $name: ISO $iso not found" >&2; exit 1; }
    [ -f "$ign" ] || { echo "$0: $name: Ignition file $ign not found" >&2; exit 1; }
    printf '%s  {"name": %s, "iso": %s, "ignitionFile": %s}' "$sep" "$(json_str "$name")" "$(json_str "$iso")" "$(json_str "$ign")"
    sep=$',\n'
  done
  printf '\n]\n'
} >"$tmp"
mv -f "$tmp" "$out"
