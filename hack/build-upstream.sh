#!/usr/bin/env bash
# Builds the REAL upstream components of one branch for the live lab and the
# upstream oracle test (docs/e2e.md, "Upstream components"):
#   assisted-service          the service (upstream: ./cmd -> /assisted-service)
#   agent-installer-client    ./cmd/agentbasedinstaller/client
#   agent/agent               assisted-installer-agent's src/agent/main, with
#                             upstream's step names as symlinks to it
# from the commits pinned in test/upstream/upstream.lock, into a cache
# directory outside the clone. The last line on stdout is that directory.
#
# Usage:
#   hack/build-upstream.sh BRANCH            build (or reuse) BRANCH's binaries
#   hack/build-upstream.sh --path BRANCH     print the directory, build nothing
#                                            (exit 1 when not built)
#   hack/build-upstream.sh --source REPO BRANCH
#                                            resolve and print a checkout of the
#                                            pinned commit of REPO
#   hack/build-upstream.sh --list            the branches in the lock file
#
# Examples:
#   dir=$(hack/build-upstream.sh release-4.20 | tail -n1)
#   "$dir/assisted-service" --help
#   AGENTISO_UPSTREAM_SRC=$HOME/src hack/build-upstream.sh release-4.23
#
# Sources, in this order (the first that has the pinned commit wins):
#   1. $AGENTISO_UPSTREAM_SRC/<repo>: any git repository (a clone of the bundle
#      or of github.com/openshift/<repo>) holding the pinned tree commit or the
#      pinned upstream commit; its objects are borrowed (git clone --shared).
#   2. ../shared/upstream/<repo>.bundle beside the clone (read only).
#   3. git clone of https://github.com/openshift/<repo> at the pinned upstream
#      commit (machines with internet; bounded by AGENTISO_UPSTREAM_CLONE_TIMEOUT
#      seconds, default 900).
# The checkout lands in $CACHE/src/<repo>@<commit> and must be at the pinned
# commit with no local changes; anything else is refused.
#
# Cache: ${XDG_CACHE_HOME:-$HOME/.cache}/agentiso/upstream/<branch>-<key>/ with
# key = sha256 of (both tree commits, overlay content, go version, this
# script), built in a temp directory and renamed into place, one build per key
# at a time (flock). Layout:
#   assisted-service  agent-installer-client  start_db.sh
#   agent/agent + agent/{free_addresses,inventory,logs_sender,next_step_runner,
#     disk_speed_check} -> agent, agent/installer/* (upstream's
#     scripts/installer, which its image copies to /usr/local/bin)
#   dockerfiles/ (upstream's image recipes, for reference)
#   BUILDINFO (key=value), logs/
#
# Build: GOFLAGS=-mod=vendor GOTOOLCHAIN=local GOPROXY=off, -trimpath (file
# paths in logs and stack traces are module paths, and branches share the Go
# build cache for the vendored packages they have in common), nice. The service
# and client with CGO on and `go build -overlay` replacing only the libnmstate
# binding with test/upstream/testdata/overlay/nmstate.go; the agent as
# upstream's Makefile builds it (CGO_ENABLED=0, -tags strictfipsruntime,
# -ldflags "-s -w").
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SCRIPT="$ROOT/hack/build-upstream.sh"
LOCK="$ROOT/test/upstream/upstream.lock"
OVERLAY="$ROOT/test/upstream/testdata/overlay/nmstate.go"
BINDING=vendor/github.com/nmstate/nmstate/rust/src/go/nmstate/nmstate.go
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/agentiso/upstream"
AGENT_STEPS=(free_addresses inventory logs_sender next_step_runner disk_speed_check)

log() { printf 'build-upstream: %s\n' "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}
usage() {
	sed -n '2,/^set -euo/p' "$SCRIPT" | sed '$d' | sed 's/^# \{0,1\}//' >&2
	exit 2
}

# lock REPO BRANCH: sets TREE and UPSTREAM from the lock file.
lock() {
	local repo=$1 branch=$2 line
	[ -r "$LOCK" ] || die "lock file $LOCK not readable"
	line=$(awk -v r="$repo" -v b="$branch" '$1 !~ /^#/ && $1 == r && $2 == b {print $3, $4}' "$LOCK")
	if [ -z "$line" ]; then
		die "$LOCK has no line for $repo $branch (branches: $(branches | tr '\n' ' '))"
	fi
	read -r TREE UPSTREAM <<<"$line"
	[[ $TREE =~ ^[0-9a-f]{40}$ && $UPSTREAM =~ ^[0-9a-f]{40}$ ]] ||
		die "$LOCK: $repo $branch: commits must be 40 hex digits"
}

branches() { awk '$1 == "assisted-service" {print $2}' "$LOCK"; }

# checked DIR WANT...: DIR is a git checkout at one of WANT with no changes.
checked() {
	local dir=$1 head
	shift
	head=$(git -C "$dir" rev-parse --verify -q HEAD 2>/dev/null) || return 1
	local w ok=1
	for w in "$@"; do [ "$head" = "$w" ] && ok=0; done
	[ $ok -eq 0 ] || return 1
	[ -z "$(git -C "$dir" status --porcelain --untracked-files=no 2>/dev/null || echo broken)" ]
}

# checkout_from REPO SRC COMMIT TMP [CLONEOPTS...]: clone SRC into TMP and
# detach at COMMIT.
checkout_from() {
	local src=$1 commit=$2 tmp=$3
	shift 3
	git clone -q --no-checkout "$@" "$src" "$tmp" &&
		git -C "$tmp" -c advice.detachedHead=false checkout -q --detach "$commit"
}

# resolve REPO BRANCH: prints a checkout of the pinned commit; logs each
# source tried.
resolve() {
	local repo=$1 branch=$2
	lock "$repo" "$branch"
	local tree=$TREE upstream=$UPSTREAM d
	mkdir -p "$CACHE/src"
	for d in "$CACHE/src/$repo@$tree" "$CACHE/src/$repo@$upstream"; do
		if [ -d "$d" ]; then
			if checked "$d" "$tree" "$upstream"; then
				echo "$d"
				return 0
			fi
			log "$d is not a clean checkout of the pinned commit: removing it"
			rm -rf "$d"
		fi
	done

	local tried=() tmp
	tmp=$(mktemp -d "$CACHE/src/.$repo.XXXXXX")
	# resolve runs in a command substitution (its own subshell) or as the
	# whole --source run: EXIT is when its temp checkout goes.
	# shellcheck disable=SC2064
	trap "rm -rf '$tmp'" EXIT

	# 1. AGENTISO_UPSTREAM_SRC
	local src="${AGENTISO_UPSTREAM_SRC:-}"
	if [ -n "$src" ]; then
		local s="$src/$repo" c=""
		if ! git -C "$s" rev-parse --git-dir >/dev/null 2>&1; then
			tried+=("1. \$AGENTISO_UPSTREAM_SRC/$repo ($s): not a git repository")
		elif git -C "$s" cat-file -e "$tree^{commit}" 2>/dev/null; then
			c=$tree
		elif git -C "$s" cat-file -e "$upstream^{commit}" 2>/dev/null; then
			c=$upstream
		else
			tried+=("1. \$AGENTISO_UPSTREAM_SRC/$repo ($s): has neither $tree nor $upstream")
		fi
		if [ -n "$c" ]; then
			rm -rf "$tmp"
			if checkout_from "$s" "$c" "$tmp" --shared && checked "$tmp" "$c"; then
				log "$repo $branch: from $s at $c"
				finish_checkout "$repo" "$c" "$tmp" "AGENTISO_UPSTREAM_SRC:$s"
				return 0
			fi
			tried+=("1. \$AGENTISO_UPSTREAM_SRC/$repo ($s): checkout of $c failed")
		fi
		log "warning: AGENTISO_UPSTREAM_SRC is set but ${tried[-1]#1. }; trying the next source"
	else
		tried+=("1. \$AGENTISO_UPSTREAM_SRC/$repo: AGENTISO_UPSTREAM_SRC not set")
	fi

	# 2. ../shared/upstream/<repo>.bundle beside the clone
	local bundle
	bundle="$(dirname "$ROOT")/shared/upstream/$repo.bundle"
	if [ ! -r "$bundle" ]; then
		tried+=("2. $bundle: not there")
	else
		rm -rf "$tmp"
		if checkout_from "$bundle" "$tree" "$tmp" -b "$branch" && checked "$tmp" "$tree"; then
			log "$repo $branch: from $bundle at $tree"
			finish_checkout "$repo" "$tree" "$tmp" "bundle:$bundle"
			return 0
		fi
		tried+=("2. $bundle: branch $branch is not at the pinned tree commit $tree (bundle changed? update $LOCK)")
	fi

	# 3. the public repository
	local url="https://github.com/openshift/$repo"
	rm -rf "$tmp"
	log "$repo $branch: cloning $url (upstream commit $upstream)"
	if GIT_TERMINAL_PROMPT=0 timeout "${AGENTISO_UPSTREAM_CLONE_TIMEOUT:-900}" \
		git clone -q --no-checkout --filter=blob:none "$url" "$tmp" 2>/dev/null &&
		git -C "$tmp" -c advice.detachedHead=false checkout -q --detach "$upstream" &&
		checked "$tmp" "$upstream"; then
		if [ ! -d "$tmp/vendor" ]; then
			tried+=("3. $url at $upstream: no vendor/ directory, cannot build with -mod=vendor")
		else
			log "$repo $branch: from $url at $upstream"
			finish_checkout "$repo" "$upstream" "$tmp" "git:$url"
			return 0
		fi
	else
		tried+=("3. $url: clone or checkout of $upstream failed (no internet?)")
	fi

	log "error: no source for $repo $branch (pinned tree $tree, upstream $upstream). Tried:"
	local t
	for t in "${tried[@]}"; do log "  $t"; done
	log "Set AGENTISO_UPSTREAM_SRC=DIR with DIR/$repo a git clone holding that commit, put the bundles in $(dirname "$ROOT")/shared/upstream/, or give this machine internet access."
	exit 1
}

# finish_checkout REPO COMMIT TMP ORIGIN: check that a tree commit names the
# pinned upstream commit, record where it came from, rename into place
# (another process may have won the race: then keep theirs), print.
finish_checkout() {
	local repo=$1 commit=$2 tmp=$3 origin=$4 dest="$CACHE/src/$1@$2"
	if [ "$commit" = "$TREE" ]; then
		local subject
		subject=$(git -C "$tmp" log -1 --format=%s)
		case "$subject" in
		*"$UPSTREAM"*) ;;
		*) die "$repo: tree commit $commit from $origin says \"$subject\", not upstream commit $UPSTREAM ($LOCK)" ;;
		esac
	fi
	printf '%s\n' "$origin" >"$tmp/.git/agentiso-origin"
	if ! mv -T "$tmp" "$dest" 2>/dev/null; then
		checked "$dest" "$commit" || die "$dest exists and is not a clean checkout of $commit"
	fi
	echo "$dest"
}

sha() { sha256sum "$@" | cut -d' ' -f1; }

# key BRANCH: sets OUT, KEYTEXT.
key() {
	local branch=$1
	lock assisted-service "$branch"
	local as=$TREE asu=$UPSTREAM
	lock assisted-installer-agent "$branch"
	local aia=$TREE aiau=$UPSTREAM
	[ -r "$OVERLAY" ] || die "overlay $OVERLAY not readable"
	local gov
	gov=$(GOTOOLCHAIN=local go env GOVERSION GOOS GOARCH | tr '\n' ' ') || die "go not found"
	KEYTEXT="assisted-service=$as/$asu assisted-installer-agent=$aia/$aiau overlay=$(sha "$OVERLAY") go=$gov script=$(sha "$SCRIPT")"
	OUT="$CACHE/$branch-$(printf '%s' "$KEYTEXT" | sha | cut -c1-16)"
}

complete() { [ -f "$1/BUILDINFO" ] && grep -qx 'status=complete' "$1/BUILDINFO"; }

gobuild() { # NAME DIR OUTFILE LOGFILE go-build-args...
	local name=$1 dir=$2 out=$3 logf=$4 t0 rc=0
	shift 4
	t0=$(date +%s)
	log "building $name ($dir) ..."
	(cd "$dir" && nice -n 10 env GOFLAGS=-mod=vendor GOTOOLCHAIN=local GOPROXY=off GOWORK=off \
		go build -trimpath -o "$out" "$@") >"$logf" 2>&1 || rc=$?
	SECONDS_TAKEN=$(($(date +%s) - t0))
	if [ $rc -ne 0 ]; then
		log "$name: FAILED after ${SECONDS_TAKEN}s; last lines of $logf:"
		tail -n 15 "$logf" | sed 's/^/    /' >&2
		return 1
	fi
	log "$name: built in ${SECONDS_TAKEN}s"
}

build() {
	local branch=$1
	key "$branch"
	if complete "$OUT"; then
		log "$branch: cached"
		echo "$OUT"
		return 0
	fi
	mkdir -p "$CACHE"
	exec 9>"$OUT.lock"
	if ! flock -n 9; then
		log "another build of $branch holds $OUT.lock; waiting"
		flock 9
	fi
	if complete "$OUT"; then
		log "$branch: built by another process"
		echo "$OUT"
		return 0
	fi
	rm -rf "$OUT"

	local as aia
	as=$(resolve assisted-service "$branch")
	lock assisted-service "$branch"
	local as_tree=$TREE as_up=$UPSTREAM
	aia=$(resolve assisted-installer-agent "$branch")
	lock assisted-installer-agent "$branch"
	local aia_tree=$TREE aia_up=$UPSTREAM

	local tmp
	tmp=$(mktemp -d "$CACHE/.build-$branch.XXXXXX")
	# shellcheck disable=SC2064
	trap "rm -rf '$tmp'" EXIT
	mkdir -p "$tmp/logs" "$tmp/agent/installer" "$tmp/dockerfiles"
	[ -f "$as/$BINDING" ] || die "$as has no $BINDING: the overlay has nothing to replace"
	printf '{"Replace":{"%s":"%s"}}\n' "$as/$BINDING" "$OVERLAY" >"$tmp/overlay.json"

	local failed=() secs=() t_all
	t_all=$(date +%s)
	if CGO_ENABLED=1 gobuild assisted-service "$as" "$tmp/assisted-service" "$tmp/logs/assisted-service.log" \
		-overlay "$tmp/overlay.json" ./cmd; then
		secs+=("seconds.assisted-service=$SECONDS_TAKEN")
	else
		failed+=("assisted-service (logs/assisted-service.log: $(grep -m1 -E '[^ ]+\.go:[0-9]+|cannot find|no such' "$tmp/logs/assisted-service.log" | head -c 200))")
	fi
	if CGO_ENABLED=1 gobuild agent-installer-client "$as" "$tmp/agent-installer-client" "$tmp/logs/agent-installer-client.log" \
		-overlay "$tmp/overlay.json" ./cmd/agentbasedinstaller/client; then
		secs+=("seconds.agent-installer-client=$SECONDS_TAKEN")
	else
		failed+=("agent-installer-client (logs/agent-installer-client.log)")
	fi
	if CGO_ENABLED=0 gobuild agent "$aia" "$tmp/agent/agent" "$tmp/logs/agent.log" \
		-tags strictfipsruntime -ldflags "-s -w" ./src/agent/main; then
		secs+=("seconds.agent=$SECONDS_TAKEN")
		local s
		for s in "${AGENT_STEPS[@]}"; do ln -s agent "$tmp/agent/$s"; done
	else
		failed+=("agent (logs/agent.log)")
	fi

	# Upstream files the images need (read by the lab's image builder).
	local f
	[ -f "$as/hack/agent_installer/start_db.sh" ] || die "$as has no hack/agent_installer/start_db.sh"
	cp "$as/hack/agent_installer/start_db.sh" "$tmp/start_db.sh"
	cp "$as/Dockerfile.assisted-service.ocp" "$tmp/dockerfiles/" 2>/dev/null || true
	cp "$aia/Dockerfile.assisted_installer_agent" "$tmp/dockerfiles/" 2>/dev/null || true
	if [ -d "$aia/scripts/installer" ]; then cp "$aia"/scripts/installer/* "$tmp/agent/installer/"; fi

	{
		echo "branch=$branch"
		echo "assisted-service.tree=$as_tree"
		echo "assisted-service.upstream=$as_up"
		echo "assisted-service.source=$(cat "$as/.git/agentiso-origin" 2>/dev/null || echo "$as")"
		echo "assisted-installer-agent.tree=$aia_tree"
		echo "assisted-installer-agent.upstream=$aia_up"
		echo "assisted-installer-agent.source=$(cat "$aia/.git/agentiso-origin" 2>/dev/null || echo "$aia")"
		echo "go=$(go env GOVERSION) $(go env GOOS)/$(go env GOARCH)"
		echo "overlay.sha256=$(sha "$OVERLAY")"
		echo "script.sha256=$(sha "$SCRIPT")"
		echo "key=$KEYTEXT"
		echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "seconds.total=$(($(date +%s) - t_all))"
		printf '%s\n' "${secs[@]}"
		for f in "${failed[@]}"; do echo "failed=$f"; done
		if [ ${#failed[@]} -eq 0 ]; then echo "status=complete"; else echo "status=incomplete"; fi
	} >"$tmp/BUILDINFO"
	rm -f "$tmp/overlay.json"
	# mktemp made it 0700: the lab and the test run these as other users.
	chmod 0755 "$tmp"
	mv -T "$tmp" "$OUT"
	trap - EXIT
	if [ ${#failed[@]} -ne 0 ]; then
		log "$branch: INCOMPLETE, not built: ${failed[*]}"
		log "kept in $OUT (BUILDINFO says status=incomplete; delete it to retry)"
		echo "$OUT"
		return 3
	fi
	log "$branch: done in $(($(date +%s) - t_all))s"
	echo "$OUT"
}

case "${1:-}" in
--path)
	[ $# -eq 2 ] || usage
	key "$2"
	if complete "$OUT"; then
		echo "$OUT"
	elif [ -f "$OUT/BUILDINFO" ]; then
		log "$2: built incomplete: $(grep '^failed=' "$OUT/BUILDINFO" | tr '\n' ' ')"
		echo "$OUT"
		exit 3
	else
		log "$2: not built ($OUT); run hack/build-upstream.sh $2"
		exit 1
	fi
	;;
--source)
	[ $# -eq 3 ] || usage
	resolve "$2" "$3"
	;;
--list)
	branches
	;;
-h | --help | "") usage ;;
-*) usage ;;
*)
	[ $# -eq 1 ] || usage
	build "$1"
	;;
esac
