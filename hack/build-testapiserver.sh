#!/usr/bin/env bash
# Builds the REAL Kubernetes API server the tests run against
# (internal/testapiserver, docs/add-nodes.md "Tests against a real API
# server"):
#   kube-apiserver   k8s.io/kubernetes/cmd/kube-apiserver
#   etcd             go.etcd.io/etcd/server/v3
#   crds/openshift/  the OpenShift CRDs node-image reads (github.com/openshift/api)
#   crds/hub/        hive, metal3 and agent-install CRDs (assisted-service's
#                    hack/crds and config/crd/bases)
# pinned by the go.mod and go.sum files in hack/testapiserver/{kube-apiserver,
# etcd,crds} (module proxy versions; k8s.io/kubernetes's staging modules at
# the matching v0.x) and by assisted-service release-4.23's tree commit in
# test/upstream/upstream.lock (its sources resolved by hack/build-upstream.sh
# --source), into a cache directory outside the clone. The last line on
# stdout is that directory.
#
# Usage:
#   hack/build-testapiserver.sh          build (or reuse) both binaries
#   hack/build-testapiserver.sh --path   print the directory, build nothing
#                                        (exit 1 when not built)
#
# Cache: ${XDG_CACHE_HOME:-$HOME/.cache}/agentiso/testapiserver/<key>/ with
# key = sha256 of (the go.mod and go.sum files, the assisted-service tree
# commit, go version, this script),
# built in a temp directory and renamed into place, one build per key at a
# time (flock). Layout: kube-apiserver, etcd, BUILDINFO (key=value), logs/.
#
# Build: GOFLAGS=-mod=readonly GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0,
# -trimpath -ldflags "-s -w", nice. The modules come from the Go module
# proxy (GOPROXY as set; verified against the go.sum files).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SCRIPT="$ROOT/hack/build-testapiserver.sh"
SRC="$ROOT/hack/testapiserver"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/agentiso/testapiserver"
LOCK="$ROOT/test/upstream/upstream.lock"
HUB_BRANCH=release-4.23
# The CRDs, as paths in their module or repository (the feature-set split
# ones in their Default variant, as a cluster without a feature set serves).
OPENSHIFT_CRDS=(
	config/v1/zz_generated.crd-manifests/0000_00_cluster-version-operator_01_clusterversions-Default.crd.yaml
	config/v1/zz_generated.crd-manifests/0000_03_config-operator_01_proxies.crd.yaml
	config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_imagecontentpolicies.crd.yaml
	config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_imagedigestmirrorsets.crd.yaml
	config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_imagetagmirrorsets.crd.yaml
	config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_infrastructures-Default.crd.yaml
	operator/v1alpha1/zz_generated.crd-manifests/0000_10_config-operator_01_imagecontentsourcepolicies.crd.yaml
	machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineconfigs.crd.yaml
	machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineconfigpools-Default.crd.yaml
)
HUB_CRDS=(
	hack/crds/hive/hive.openshift.io_clusterdeployments.yaml
	hack/crds/hive/hive.openshift.io_clusterimagesets.yaml
	hack/crds/metal3/metal3.io_baremetalhosts.yaml
	hack/crds/metal3/metal3.io_preprovisioningimages.yaml
	config/crd/bases/agent-install.openshift.io_agentclassifications.yaml
	config/crd/bases/agent-install.openshift.io_agents.yaml
	config/crd/bases/agent-install.openshift.io_agentserviceconfigs.yaml
	config/crd/bases/agent-install.openshift.io_infraenvs.yaml
	config/crd/bases/agent-install.openshift.io_nmstateconfigs.yaml
	config/crd/bases/extensions.hive.openshift.io_agentclusterinstalls.yaml
)

log() { printf 'build-testapiserver: %s\n' "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}

sha() { sha256sum "$@" | cut -d' ' -f1; }

key() {
	local gov f
	gov=$(GOTOOLCHAIN=local go env GOVERSION GOOS GOARCH | tr '\n' ' ') || die "go not found"
	[ -r "$LOCK" ] || die "lock file $LOCK not readable"
	HUB_TREE=$(awk -v b="$HUB_BRANCH" '$1 == "assisted-service" && $2 == b {print $3}' "$LOCK")
	[ -n "$HUB_TREE" ] || die "$LOCK has no assisted-service $HUB_BRANCH line"
	KEYTEXT="go=$gov script=$(sha "$SCRIPT") assisted-service=$HUB_TREE crds=${OPENSHIFT_CRDS[*]} ${HUB_CRDS[*]}"
	for f in kube-apiserver/go.mod kube-apiserver/go.sum etcd/go.mod etcd/go.sum crds/go.mod crds/go.sum; do
		[ -r "$SRC/$f" ] || die "$SRC/$f not readable"
		KEYTEXT="$KEYTEXT $f=$(sha "$SRC/$f")"
	done
	OUT="$CACHE/$(printf '%s' "$KEYTEXT" | sha | cut -c1-16)"
}

complete() { [ -f "$1/BUILDINFO" ] && grep -qx 'status=complete' "$1/BUILDINFO"; }

gobuild() { # NAME MODULEDIR OUTFILE LOGFILE PACKAGE
	local name=$1 dir=$2 out=$3 logf=$4 pkg=$5 t0 rc=0
	t0=$(date +%s)
	log "building $name ($pkg) ..."
	(cd "$dir" && nice -n 10 env GOFLAGS=-mod=readonly GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 \
		go build -trimpath -ldflags "-s -w" -o "$out" "$pkg") >"$logf" 2>&1 || rc=$?
	SECONDS_TAKEN=$(($(date +%s) - t0))
	if [ $rc -ne 0 ]; then
		log "$name: FAILED after ${SECONDS_TAKEN}s; last lines of $logf:"
		tail -n 15 "$logf" | sed 's/^/    /' >&2
		return 1
	fi
	log "$name: built in ${SECONDS_TAKEN}s"
}

# stage_crds DIR: the OpenShift CRDs from the module proxy, the hub's from
# assisted-service's pinned tree.
stage_crds() {
	local out=$1 api as f
	mkdir -p "$out/openshift" "$out/hub"
	api=$(cd "$SRC/crds" && GOFLAGS=-mod=readonly GOTOOLCHAIN=local GOWORK=off \
		go mod download -json github.com/openshift/api | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[ -n "$api" ] && [ -d "$api" ] || die "github.com/openshift/api: go mod download gave no directory"
	for f in "${OPENSHIFT_CRDS[@]}"; do
		[ -f "$api/$f" ] || die "github.com/openshift/api has no $f"
		cp "$api/$f" "$out/openshift/"
	done
	as=$(bash "$ROOT/hack/build-upstream.sh" --source assisted-service "$HUB_BRANCH" | tail -n1)
	for f in "${HUB_CRDS[@]}"; do
		[ -f "$as/$f" ] || die "assisted-service $HUB_BRANCH ($as) has no $f"
		cp "$as/$f" "$out/hub/"
	done
	chmod -R a+rX "$out"
}

build() {
	key
	if complete "$OUT"; then
		log "cached: $OUT"
		echo "$OUT"
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
		echo "$OUT"
		return 0
	fi
	rm -rf "$OUT"
	local tmp t_all secs=()
	tmp=$(mktemp -d "$CACHE/.build.XXXXXX")
	# shellcheck disable=SC2064
	trap "rm -rf '$tmp'" EXIT
	mkdir -p "$tmp/logs"
	t_all=$(date +%s)
	gobuild etcd "$SRC/etcd" "$tmp/etcd" "$tmp/logs/etcd.log" go.etcd.io/etcd/server/v3 ||
		die "etcd did not build (see above)"
	secs+=("seconds.etcd=$SECONDS_TAKEN")
	gobuild kube-apiserver "$SRC/kube-apiserver" "$tmp/kube-apiserver" "$tmp/logs/kube-apiserver.log" \
		k8s.io/kubernetes/cmd/kube-apiserver || die "kube-apiserver did not build (see above)"
	secs+=("seconds.kube-apiserver=$SECONDS_TAKEN")
	stage_crds "$tmp/crds"
	{
		echo "kube-apiserver=$(awk '$1 == "k8s.io/kubernetes" {print $2; exit}' "$SRC/kube-apiserver/go.mod" | head -n1)"
		echo "etcd=$(grep -m1 -o 'go.etcd.io/etcd/server/v3 v[^ ]*' "$SRC/etcd/go.mod" | cut -d' ' -f2)"
		echo "openshift-api=$(grep -m1 -o 'github.com/openshift/api v[^ ]*' "$SRC/crds/go.mod" | cut -d' ' -f2)"
		echo "assisted-service.$HUB_BRANCH.tree=$HUB_TREE"
		echo "go=$(go env GOVERSION) $(go env GOOS)/$(go env GOARCH)"
		echo "key=$KEYTEXT"
		echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "seconds.total=$(($(date +%s) - t_all))"
		printf '%s\n' "${secs[@]}"
		echo "status=complete"
	} >"$tmp/BUILDINFO"
	chmod 0755 "$tmp"
	mv -T "$tmp" "$OUT"
	trap - EXIT
	log "done in $(($(date +%s) - t_all))s: $OUT"
	echo "$OUT"
}

case "${1:-}" in
--path)
	key
	if complete "$OUT"; then
		echo "$OUT"
	else
		log "not built ($OUT); run hack/build-testapiserver.sh"
		exit 1
	fi
	;;
"") build ;;
*)
	sed -n '2,/^set -euo/p' "$SCRIPT" | sed '$d' | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
