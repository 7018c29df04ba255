#!/usr/bin/env bash
# make demo: the whole agentiso flow on the bundled HA example, offline, in
# well under a minute. No RHCOS download: the base ISO is a synthetic one
# with the RHCOS live-ISO layout, and the install is played by the built-in
# rendezvous simulator.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./bin/agentiso
out=${DEMO_DIR:-demo-out}
rm -rf "$out"
mkdir -p "$out/cluster"
cp examples/ha/install-config.yaml examples/ha/agent-config.yaml "$out/cluster/"

step() { printf "\n== %s\n" "$*"; }

step "1. a synthetic RHCOS-layout base ISO (256 MiB, sparse)"
"$bin" dev make-test-iso --output-file "$out/rhcos-live.x86_64.iso" --size 256MiB
"$bin" iso info "$out/rhcos-live.x86_64.iso"

# agentiso pins no default release. The demo installs nothing, so a made-up
# digest of a supported release does, given offline with its version.
release=(--offline --release-version 4.20.0
	--release-image quay.io/openshift-release-dev/ocp-release@sha256:4200000000000000000000000000000000000000000000000000000000000000)

step "2. agentiso create image --dir $out/cluster --base-iso $out/rhcos-live.x86_64.iso ${release[*]}"
time "$bin" create image --dir "$out/cluster" --base-iso "$out/rhcos-live.x86_64.iso" "${release[@]}"

step "3. what was written"
ls -l "$out/cluster" "$out/cluster/auth"

step "4. agentiso iso info $out/cluster/agent.x86_64.iso"
"$bin" iso info "$out/cluster/agent.x86_64.iso"

step "5. files and units embedded in the ISO's Ignition config"
"$bin" iso ignition show --files "$out/cluster/agent.x86_64.iso"

step "6. wait-for install-complete against the rendezvous simulator (HA 3+2, 120x speed)"
sim="$out/sim"
"$bin" dev init-dir --dir "$sim" --rendezvous-ip 127.0.0.1 --local
"$bin" dev simulate --dir "$sim" --scenario ha-happy --speed 120 --log-level warn &
simpid=$!
trap 'kill $simpid 2>/dev/null || true' EXIT
"$bin" wait-for install-complete --dir "$sim" --time-scale 120
