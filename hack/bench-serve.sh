#!/usr/bin/env bash
# The serve benchmark of make bench (issue 39, docs/serve-boot.md "Speed
# against nginx"): agentiso serve and Debian's nginx serve the same 1 GiB
# file from the same directory over loopback, HTTP and HTTPS with the same
# certificate; hack/servebench GETs the whole file and random 1 MiB ranges
# with 1, 10 and 50 clients, the two servers' trials interleaved, and
# prints the table (throughputs, their ratio, the p99 of a range GET, CPU
# per GiB, agentiso's peak RSS, the load average). Installs nginx (Debian);
# nginx is started on loopback ports only, as this user, and stopped after.
# Not part of make test: about 6 minutes with the defaults.
# Usage: hack/bench-serve.sh [GO]
# Environment: SERVE_BENCH_DURATION (one trial, default 5s),
# SERVE_BENCH_REPEAT (trials per server and row, default 3),
# SERVE_BENCH_SIZE (bytes, default 1 GiB), SERVE_BENCH_CLIENTS (default
# 1,10,50), SERVE_BENCH_OUT (also write the table there).
set -euo pipefail
go=${1:-go}
if [ "$(uname -s)" != Linux ]; then
	echo "bench-serve: skipped: Linux only (sendfile, /proc)"
	exit 0
fi
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/apt-install.sh" bench-serve nginx
nginx=$(command -v nginx || echo /usr/sbin/nginx)
work=$(mktemp -d "${TMPDIR:-/tmp}/agentiso-bench-serve.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The file's directory must be readable by nginx's workers.
chmod 755 "$work"
"$go" build -o "$work/agentiso" "$here/../cmd/agentiso"
"$go" build -o "$work/servebench" "$here/servebench"
echo "bench-serve: load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$work/servebench" -agentiso "$work/agentiso" -nginx "$nginx" -work "$work" \
	-size "${SERVE_BENCH_SIZE:-1073741824}" -duration "${SERVE_BENCH_DURATION:-5s}" \
	-repeat "${SERVE_BENCH_REPEAT:-3}" -clients "${SERVE_BENCH_CLIENTS:-1,10,50}" \
	${SERVE_BENCH_OUT:+-out "$SERVE_BENCH_OUT"}
echo "bench-serve: load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
