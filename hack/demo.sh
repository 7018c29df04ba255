#!/usr/bin/env bash
# make demo: the whole agentiso flow on the bundled HA example, offline, in
# well under a minute, then day 2 (a worker added to an installed cluster). No RHCOS download: the base ISO is a synthetic one
# with the RHCOS live-ISO layout, and the install is played by the
# rendezvous simulator. The developer aids (the ISO, the simulator, the
# day-2 cluster) are agentiso-dev's (make build-dev); every agentiso command
# is the shipped binary's, which links none of them.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./bin/agentiso
dev=./bin/agentiso-dev
out=${DEMO_DIR:-demo-out}
rm -rf "$out"
mkdir -p "$out/cluster"
cp examples/ha/install-config.yaml examples/ha/agent-config.yaml "$out/cluster/"

step() { printf "\n== %s\n" "$*"; }

step "1. a synthetic RHCOS-layout base ISO (256 MiB, sparse)"
"$dev" make-test-iso --output-file "$out/rhcos-live.x86_64.iso" --size 256MiB
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
"$dev" init-dir --dir "$sim" --rendezvous-ip 127.0.0.1 --local
"$dev" simulate --dir "$sim" --scenario ha-happy --speed 120 --log-level warn &
simpid=$!
trap 'kill $simpid 2>/dev/null || true' EXIT
"$bin" wait-for install-complete --dir "$sim" --time-scale 120

# Day 2 (docs/add-nodes.md): a simulated installed cluster on loopback (its
# API, its release in a loopback registry), and a new worker at 127.0.0.83
# whose own assisted-service and CSRs agentiso-dev cluster plays once its image is
# built.
day2="$out/day2"
mkdir -p "$day2"
cat >"$day2/nodes-config.yaml" <<'EOF'
hosts:
  - hostname: worker-3
    interfaces:
      - name: eth0
        macAddress: 52:54:00:00:00:33
    networkConfig:
      interfaces:
        - name: eth0
          type: ethernet
          state: up
          mac-address: 52:54:00:00:00:33
          ipv4:
            enabled: true
            address:
              - ip: 127.0.0.83
                prefix-length: 8
EOF
step "7. day 2: agentiso node-image create --dir $day2 --kubeconfig $day2/kubeconfig (a simulated installed cluster)"
"$dev" cluster --dir "$day2" --step 1s --log-level warn &
clusterpid=$!
trap 'kill $simpid $clusterpid 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -f "$day2/kubeconfig" ] && break; sleep 0.1; done
cat "$day2/nodes-config.yaml"
"$bin" node-image create --dir "$day2" --kubeconfig "$day2/kubeconfig" --base-iso "$out/rhcos-live.x86_64.iso"
ls -l "$day2"

step "8. node-image monitor --approve-csrs: the host's own assisted-service, then its CSRs, until it is a Ready node"
"$bin" node-image monitor --dir "$day2" --kubeconfig "$day2/kubeconfig" --ip-addresses 127.0.0.83 --approve-csrs --interval 1s
