#!/usr/bin/env bash
# Installs the host tools the QEMU boot end-to-end test needs (make e2e).
# Idempotent: packages already installed are not touched, and apt-get update
# runs only when something is missing. The boot fixture's payload (kernel,
# busybox, isolinux, GRUB EFI modules) is NOT installed here: the fixture build
# fetches those .debs with `apt-get download` into its cache and unpacks them.
set -euo pipefail

pkgs=(
  qemu-system-x86 # qemu-system-x86_64 (TCG, or KVM when /dev/kvm works)
  ovmf            # UEFI firmware for the UEFI boot
  xorriso         # masters the fixture ISO, reports file LBAs
  mtools          # builds the FAT EFI boot image without root mounts
  cpio            # packs the fixture's busybox initramfs
  grub-common     # grub-mkimage, to build the fixture's BOOTX64.EFI
  gzip
  xz-utils        # xz, for the test's xz-compressed ignition archives
)

exec bash "$(dirname "$0")/apt-install.sh" install-e2e-deps "${pkgs[@]}"
