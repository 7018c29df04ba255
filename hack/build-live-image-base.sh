#!/usr/bin/env bash
# Builds the Debian userland under the live lab's real upstream images
# (test/live/mirror, docs/e2e.md "The mirror"): assisted-service, its
# agent-installer-client and the discovery agent are dynamically linked
# (cgo) or call tools of their RHEL images, so their images get a Debian
# bookworm root file system with the packages that stand in for the RPMs of
# upstream's Dockerfiles:
#
#   Dockerfile.assisted-service.ocp (agent-installer-api-server image):
#     postgresql-server  -> postgresql-15 (pg_ctl, initdb, postgres linked
#                           into /usr/bin where start_db.sh calls them), and
#                           /tmp/postgres/data initialised as user postgres,
#                           as that Dockerfile does
#     libvirt-libs, nmstate, nmstate-libs, skopeo, openshift-clients
#                        -> left out: the lab's builds do not link libvirt or
#                           libnmstate, and `oc` is the lab's stand-in
#   Dockerfile.assisted_installer_agent (agent-installer-node-agent image):
#     dmidecode ipmitool file sg3_utils hwdata fio nmap dhclient tar
#     openssh-clients chrony util-linux-core findutils iputils
#                        -> the Debian packages of the same names
#                           (isc-dhcp-client, openssh-client, sg3-utils,
#                           iputils-ping, util-linux)
#     biosdevname        -> missing: Debian 12 has no biosdevname
#     podman             -> left out: the agent runs podman on the host
#                           through nsenter
#
# Each image gets its own root file system (PROFILE service or agent): every
# host pulls the agent's, only node zero the service's, and pulls under TCG
# are what the lab's time goes to. What no step runs is removed after the
# install (see the hooks).
#
# The result is a tar cached OUTSIDE the clone, keyed by the profile, the
# package list and the hooks:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/agentiso/live-image-base/<profile>-<key>/base.tar
# Usage: hack/build-live-image-base.sh PROFILE   build if needed, print the tar's path
# Env:   AGENTISO_LIVE_CACHE overrides the cache root (its parent, as for the
#        fixture); MIRROR the Debian mirror (default http://deb.debian.org/debian).
set -euo pipefail

SUITE=bookworm
MIRROR=${MIRROR:-http://deb.debian.org/debian}
profile=${1:-}
# Programs and data no step of the images runs, removed after the install
# to keep what the guests pull and unpack (into RAM, under TCG) small:
# documentation, translations, locale sources, perl and python (only
# Debian's maintainer scripts and fio's helper scripts use them).
trim='rm -rf "$1/usr/share/doc" "$1/usr/share/man" "$1/usr/share/info" "$1/usr/share/locale" "$1/usr/share/i18n" "$1/var/cache/apt" "$1/var/lib/apt/lists" "$1"/usr/bin/perl* "$1"/usr/share/perl* "$1"/usr/lib/x86_64-linux-gnu/perl* "$1"/usr/lib/x86_64-linux-gnu/libperl* "$1"/usr/bin/python3* "$1"/usr/lib/python3* "$1"/usr/lib/x86_64-linux-gnu/libpython3*'
case "$profile" in
service)
	# agent-installer-api-server: PostgreSQL for start_db.sh.
	pkgs=(ca-certificates postgresql-15)
	# RHEL's postgresql-server puts its programs in /usr/bin, where
	# upstream's start_db.sh calls them; Debian keeps them in
	# /usr/lib/postgresql/15/bin. The data directory is initialised at build
	# time, as the upstream Dockerfile does (`su - postgres -c
	# "/usr/bin/initdb -D /tmp/postgres/data"`). Debian's package-made
	# cluster is removed, and PostgreSQL's JIT (libLLVM, loaded only to
	# compile a query: without it queries run uncompiled).
	# /run/postgresql, owned by postgres, is in the image as RHEL's
	# postgresql-server package ships it: release-4.18's start_db.sh starts
	# PostgreSQL without -k, so its socket goes to the compiled-in
	# /var/run/postgresql (4.19+ pass -k /tmp). mmdebstrap empties /run at
	# its cleanup; --skip=cleanup/run keeps it, and a hook empties /run but
	# for this directory.
	hooks=(
		--skip=cleanup/run
		--customize-hook='find "$1/run" -mindepth 1 -maxdepth 1 ! -name lock -exec rm -rf {} +'
		--customize-hook='chroot "$1" install -d -o postgres -g postgres -m 2775 /run/postgresql'
		--customize-hook='for p in pg_ctl initdb postgres createuser createdb; do ln -sf /usr/lib/postgresql/15/bin/$p "$1/usr/bin/$p"; done'
		--customize-hook='chroot "$1" install -d -o postgres -g postgres /tmp/postgres /tmp/postgres/data'
		--customize-hook='chroot "$1" su -s /bin/sh postgres -c "/usr/bin/initdb -D /tmp/postgres/data" >/dev/null'
		--customize-hook='rm -rf "$1/var/lib/postgresql/15" "$1/etc/postgresql/15" "$1"/usr/lib/x86_64-linux-gnu/libLLVM-* "$1"/usr/lib/x86_64-linux-gnu/libz3.so.* "$1"/usr/lib/postgresql/15/lib/llvmjit* "$1"/usr/lib/postgresql/15/lib/bitcode'
		--customize-hook="$trim"
	)
	;;
agent)
	# agent-installer-node-agent: the tools its steps run.
	pkgs=(ca-certificates dmidecode ipmitool file sg3-utils hwdata fio nmap isc-dhcp-client tar
		openssh-client chrony util-linux findutils iputils-ping iputils-arping)
	# nmap's data files but nmap-payloads go, as upstream's Dockerfile does.
	hooks=(
		--customize-hook='find "$1/usr/share/nmap" -mindepth 1 -maxdepth 1 ! -name nmap-payloads -exec rm -rf {} +'
		--customize-hook="$trim"
	)
	;;
*)
	echo "usage: $0 service|agent" >&2
	exit 2
	;;
esac

cache_parent=$(dirname "${AGENTISO_LIVE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agentiso/live-fixture}")
key=$(echo "$SUITE $MIRROR $profile ${pkgs[*]} ${hooks[*]} image-base-v3" | sha256sum | cut -c1-16)
dir=$cache_parent/live-image-base/$profile-$key
out=$dir/base.tar
if [ -s "$out" ]; then
	echo "$out"
	exit 0
fi
command -v mmdebstrap >/dev/null || { echo "$0: mmdebstrap not found (hack/live-deps.sh installs it)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "$0: must run as root (mmdebstrap --mode=root, chroot)" >&2; exit 1; }
mkdir -p "$dir"
work=$(mktemp -d "$dir/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
echo "build-live-image-base: $profile: mmdebstrap $SUITE (${#pkgs[@]} packages) -> $out" >&2
# --skip=cleanup/tmp keeps /tmp/postgres, made by a hook.
if ! mmdebstrap --mode=root --variant=minbase --format=tar --skip=cleanup/tmp "${hooks[@]}" \
	--include="$(
		IFS=,
		echo "${pkgs[*]}"
	)" \
	"$SUITE" "$work/base.tar" "deb $MIRROR $SUITE main" >"$work/mmdebstrap.log" 2>&1; then
	tail -n 40 "$work/mmdebstrap.log" >&2
	echo "$0: mmdebstrap failed" >&2
	exit 1
fi
mv "$work/base.tar" "$out"
echo "build-live-image-base: $(stat -c %s "$out") bytes in $(($(date +%s) - start))s" >&2
echo "$out"
