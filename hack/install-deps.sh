#!/usr/bin/env bash
# Installs the Debian packages the agentiso tests use (idempotent):
#   the shellcheck linter, for the shell scripts embedded in data/
#   systemd     - systemd-analyze verify for the embedded unit files
#   ignition    - ignition-validate and the ignition binary (files stage)
#   xorriso     - independent ISO 9660 reader for the isoeditor cross-check
#   gdisk       - sgdisk, an independent GPT reader for the extended ISO's
#                 backup partition table (isoeditor TestExtendMovesTheBackupGPT)
#   genisoimage - isoinfo, an independent reader of the extended ISO's path
#                 tables (isoeditor TestExtendListsTheDirectoryInThePathTables)
#   podman, catatonit - run every podman command of the agent ISO's units
#                 and scripts for real (podman 4.3, as RHCOS 9 ships); catatonit
#                 lets podman build its pause image offline
#   jq, xz-utils - the embedded scripts use jq, and agent-gather writes
#                 .tar.xz: the tests run those scripts against fakes
#   tmux        - a real terminal for wait-for's live table
#                 (cmd/agentiso/testdata/script/waitfor_tmux_terminal.txtar)
set -euo pipefail
exec bash "$(dirname "$0")/apt-install.sh" install-deps shellcheck systemd ignition xorriso gdisk genisoimage podman catatonit jq xz-utils tmux
