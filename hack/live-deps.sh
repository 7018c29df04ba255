#!/usr/bin/env bash
# Installs the host tools the live lab needs (make e2e-live; docs/e2e.md):
# the boot test's tools plus the root filesystem builder and the lab network.
# Idempotent (hack/apt-install.sh installs only what is missing).
set -euo pipefail

pkgs=(
  qemu-system-x86 ovmf xorriso mtools cpio grub-common gzip xz-utils # as make e2e
  mmdebstrap     # builds the live fixture's Debian root filesystem
  squashfs-tools # packs it as root.squashfs
  kmod           # modprobe --show-depends picks the initramfs modules
  iproute2       # the lab's network namespace, bridge and taps
  dnsmasq-base   # DHCP on the lab bridge
)

exec bash "$(dirname "$0")/apt-install.sh" live-deps "${pkgs[@]}"
