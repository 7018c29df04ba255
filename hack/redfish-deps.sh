#!/usr/bin/env bash
# Installs the Debian packages of the Redfish tests (idempotent):
#   python3-sushy     - the Redfish library OpenStack Ironic drives real BMCs
#                       with: the emulator's cross-check (test/redfish) runs
#                       the same calls through it
#   qemu-block-extra  - QEMU's curl block driver, with which the emulator makes
#                       a lab guest boot the ISO URL given to InsertMedia
#   curl              - range requests against agentiso serve (testscripts)
set -euo pipefail
exec bash "$(dirname "$0")/apt-install.sh" redfish-deps python3-sushy qemu-block-extra curl
