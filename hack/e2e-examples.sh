#!/usr/bin/env bash
# Builds the agent ISO of every example with the bootable fixture as the
# base, and writes the cases file the QEMU boot test reads: for each ISO the
# guest must see exactly the example's agent.ign as /config.ign and every
# kernel argument of the ISO (the ones agentiso appended included).
#
# Usage: hack/e2e-examples.sh BIN FIXTURE.iso OUT.json
set -euo pipefail
bin=$(realpath "${1:?usage: $0 BIN FIXTURE.iso OUT.json}")
fixture=$(realpath "${2:?usage: $0 BIN FIXTURE.iso OUT.json}")
# agentiso pins no default release (docs/release.md). These boots check what
# reaches the kernel, never a payload: a made-up digest of a supported release,
# given offline with its version, as make demo does.
release=(--offline --release-version 4.20.0
	--release-image quay.io/openshift-release-dev/ocp-release@sha256:4200000000000000000000000000000000000000000000000000000000000000)
out=${3:?usage: $0 BIN FIXTURE.iso OUT.json}
cd "$(dirname "$0")/.."
work=.cache/e2e-examples
rm -rf "$work"
args=()
for ex in examples/*/; do
	name=$(basename "$ex")
	# A minimal-ISO example (minimalISO: true, or platform external) needs a
	# base with real minimal-ISO data and its root file system served over
	# HTTP: the minimal-ISO boot test covers those, not this loop.
	if grep -qE '^[[:space:]]*(minimalISO:[[:space:]]*true|external:)' "$ex"/*.yaml; then
		echo "e2e-examples: $name builds a minimal ISO; skipped here"
		continue
	fi
	dir="$work/$name"
	mkdir -p "$dir"
	cp -r "$ex". "$dir"/
	"$bin" create ignition --dir "$dir" --base-iso "$fixture" --log-level warn "${release[@]}"
	"$bin" create image --dir "$dir" --base-iso "$fixture" --log-level warn "${release[@]}"
	# The boot checks the ISO's Ignition against agent.ign: both must come
	# from the same inputs (stop 41's CI failed on a create ignition that
	# lacked --base-iso, only after the boots).
	if grep -q 'on disk is out of date' "$dir/.agentiso.log"; then
		echo "e2e-examples: $name: create image built from other inputs than the files on disk:" >&2
		grep 'on disk is out of date' "$dir/.agentiso.log" >&2
		exit 1
	fi
	args+=("$name" "$dir/agent.x86_64.iso" "$dir/agent.ign")
done
bash hack/e2e-cases.sh "$out" "${args[@]}"
echo "e2e-examples: wrote $out with ${#args[@]} fields ($(( ${#args[@]} / 3 )) ISOs)"
