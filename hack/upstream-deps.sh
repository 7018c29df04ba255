#!/usr/bin/env bash
# Installs the Debian packages the upstream oracle test and
# hack/build-upstream.sh need (make e2e-upstream; docs/e2e.md). Idempotent.
#   postgresql-15  the database assisted-service runs on (upstream's image runs
#                  PostgreSQL from RHEL; the test starts its own throwaway
#                  cluster on a free loopback port, not Debian's main cluster)
#   gcc, libc6-dev cgo: assisted-service builds with CGO_ENABLED=1
#   git            clones the pinned commits from the bundles
#   util-linux     flock, one build per cache key at a time
set -euo pipefail
exec bash "$(dirname "$0")/apt-install.sh" upstream-deps postgresql-15 gcc libc6-dev git util-linux
