#!/usr/bin/env bash
# Builds the REAL distribution/distribution registry (cmd/registry, the
# program upstream's appliance and the Machine Config Operator run as
# /usr/bin/distribution from the payload's docker-registry image) for the
# live lab's payload (test/live/mirror: the docker-registry component, which
# the extended ISO's hosts load and run on :22625; docs/e2e.md "The
# registry-less extended ISO"). Pinned by hack/distribution/go.mod and go.sum
# (module proxy versions), built static into a cache directory outside the
# clone. The last line on stdout is the binary's path.
#
# Usage:
#   hack/build-distribution.sh          build (or reuse) the binary
#   hack/build-distribution.sh --path   print the binary's path, build nothing
#                                       (exit 1 when not built)
#
# Cache: ${XDG_CACHE_HOME:-$HOME/.cache}/agentiso/distribution/<key>/ with
# key = sha256 of (go.mod, go.sum, go version, this script), built in a temp
# directory and renamed into place, one build per key at a time (flock).
# Layout: registry, BUILDINFO (key=value), logs/.
#
# Build: GOFLAGS=-mod=readonly GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0
# GOOS=linux GOARCH=amd64 (the lab's guests), -trimpath -ldflags "-s -w", nice.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SCRIPT="$ROOT/hack/build-distribution.sh"
SRC="$ROOT/hack/distribution"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/agentiso/distribution"
PKG=github.com/distribution/distribution/v3/cmd/registry

log() { printf 'build-distribution: %s\n' "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}

sha() { sha256sum "$@" | cut -d' ' -f1; }

key() {
	local gov f
	gov=$(GOTOOLCHAIN=local go env GOVERSION | tr '\n' ' ') || die "go not found"
	KEYTEXT="go=$gov target=linux/amd64 script=$(sha "$SCRIPT")"
	for f in go.mod go.sum; do
		[ -r "$SRC/$f" ] || die "$SRC/$f not readable"
		KEYTEXT="$KEYTEXT $f=$(sha "$SRC/$f")"
	done
	OUT="$CACHE/$(printf '%s' "$KEYTEXT" | sha | cut -c1-16)"
}

complete() { [ -f "$1/BUILDINFO" ] && grep -qx 'status=complete' "$1/BUILDINFO" && [ -x "$1/registry" ]; }

build() {
	key
	if complete "$OUT"; then
		log "cached: $OUT"
		echo "$OUT/registry"
		return 0
	fi
	mkdir -p "$CACHE"
	exec 9>"$OUT.lock"
	if ! flock -n 9; then
		log "another build holds $OUT.lock; waiting"
		flock 9
	fi
	if complete "$OUT"; then
		log "built by another process"
		echo "$OUT/registry"
		return 0
	fi
	rm -rf "$OUT"
	local tmp t0 rc=0
	tmp=$(mktemp -d "$CACHE/.build.XXXXXX")
	# shellcheck disable=SC2064
	trap "rm -rf '$tmp'" EXIT
	mkdir -p "$tmp/logs"
	t0=$(date +%s)
	log "building $PKG ..."
	(cd "$SRC" && nice -n 10 env GOFLAGS=-mod=readonly GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOOS=linux GOARCH=amd64 \
		go build -trimpath -ldflags "-s -w" -o "$tmp/registry" "$PKG") >"$tmp/logs/registry.log" 2>&1 || rc=$?
	if [ $rc -ne 0 ]; then
		log "FAILED after $(($(date +%s) - t0))s; last lines of the log:"
		tail -n 15 "$tmp/logs/registry.log" | sed 's/^/    /' >&2
		die "the registry did not build"
	fi
	{
		echo "distribution=$(grep -m1 -o 'github.com/distribution/distribution/v3 v[^ ]*' "$SRC/go.mod" | cut -d' ' -f2)"
		echo "package=$PKG"
		echo "go=$(go env GOVERSION) linux/amd64"
		echo "key=$KEYTEXT"
		echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "seconds.total=$(($(date +%s) - t0))"
		echo "status=complete"
	} >"$tmp/BUILDINFO"
	chmod 0755 "$tmp"
	mv -T "$tmp" "$OUT"
	trap - EXIT
	log "done in $(($(date +%s) - t0))s: $OUT"
	echo "$OUT/registry"
}

case "${1:-}" in
--path)
	key
	if complete "$OUT"; then
		echo "$OUT/registry"
	else
		log "not built ($OUT); run hack/build-distribution.sh"
		exit 1
	fi
	;;
"") build ;;
*)
	sed -n '2,/^set -euo/p' "$SCRIPT" | sed '$d' | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
