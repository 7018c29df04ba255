#!/usr/bin/env bash
# make demo: run agentiso on the bundled HA example, offline, in a scratch
# directory, and show what it produced.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./bin/agentiso
out=${DEMO_DIR:-demo-out}
rm -rf "$out"
mkdir -p "$out"
cp examples/ha/install-config.yaml examples/ha/agent-config.yaml "$out"/
echo "== agentiso create cluster-manifests --dir $out"
"$bin" create cluster-manifests --dir "$out"
echo
echo "== files written"
find "$out" -type f ! -name '*.yaml' -o -type f -path '*cluster-manifests*' | sort
echo
echo "== $out/cluster-manifests/agent-cluster-install.yaml"
cat "$out/cluster-manifests/agent-cluster-install.yaml"
