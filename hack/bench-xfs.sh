#!/usr/bin/env bash
# Runs the artifact benchmarks of pkg/isoeditor (BenchmarkArtifact*: create
# image, the same rebuilt, create pxe-files, a minimal ISO with its root file
# system; cold and warm) on an XFS file system with reflinks: a loop mount of
# a sparse file, attached with direct I/O so that the file behind it is not
# cached twice (a cold run is then really cold). Installs xfsprogs (Debian).
# Needs root for the loop mount; says so and does nothing otherwise.
# Usage: hack/bench-xfs.sh [GO] [BENCHTIME]
set -euo pipefail
go=${1:-go}
benchtime=${2:-5x}
if [ "$(id -u)" -ne 0 ]; then
	echo "bench-xfs: skipped: the XFS loop mount needs root (run make bench as root)"
	exit 0
fi
if [ "$(uname -s)" != Linux ]; then
	echo "bench-xfs: skipped: Linux only"
	exit 0
fi
bash "$(dirname "$0")/apt-install.sh" bench-xfs xfsprogs
work=$(mktemp -d "${TMPDIR:-/tmp}/agentiso-bench-xfs.XXXXXX")
loop=
cleanup() {
	umount "$work/mnt" 2>/dev/null || true
	[ -z "$loop" ] || losetup -d "$loop" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
truncate -s 8G "$work/xfs.img"
mkfs.xfs -q -m reflink=1 "$work/xfs.img"
loop=$(losetup --find --show --direct-io=on "$work/xfs.img")
mkdir "$work/mnt"
mount "$loop" "$work/mnt"
echo "bench-xfs: XFS (reflink=1) on $loop (direct I/O) at $work/mnt; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
AGENTISO_BENCH_DIR="$work/mnt" "$go" test -run '^$' -bench 'Artifact' -benchtime "$benchtime" -v ./pkg/isoeditor/ | grep -E 'Benchmark|x-cp|method|ok|FAIL'
echo "bench-xfs: load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
