#!/usr/bin/env bash
# Installs the host tools the QEMU boot end-to-end test needs (make e2e).
# Idempotent: packages already installed are not touched, and apt-get update
# runs only when something is missing. The boot fixture's payload (kernel,
# busybox, isolinux, GRUB EFI modules) is NOT installed here: the fixture build
# fetches those .debs with `apt-get download` into its cache and unpacks them.
#
# With the argument `arch` it also installs the other architectures' QEMU and
# firmware for make e2e-arch and make e2e's TestBootArch (about 65 MB of
# .debs, 50 s; .ci/run and make e2e under CI install them).
set -euo pipefail

pkgs=(
  qemu-system-x86 # qemu-system-x86_64 (TCG, or KVM when /dev/kvm works)
  ovmf            # UEFI firmware for the UEFI boot
  xorriso         # masters the fixture ISO, reports file LBAs
  mtools          # builds the FAT EFI boot image without root mounts
  cpio            # packs the fixture's busybox initramfs
  grub-common     # grub-mkimage, to build the fixture's BOOTX64.EFI (and grub-mkrescue)
  gzip
  xz-utils        # xz, for the test's xz-compressed ignition archives
)
case ${1:-} in
"") ;;
arch)
  pkgs+=(
    qemu-system-arm  # qemu-system-aarch64 (machine virt)
    qemu-efi-aarch64 # AAVMF, the aarch64 UEFI firmware
    qemu-system-ppc  # qemu-system-ppc64 (machine pseries, SLOF built in)
    qemu-system-misc # qemu-system-s390x (s390-ccw IPL firmware built in)
  )
  ;;
*)
  echo "usage: $0 [arch]" >&2
  exit 2
  ;;
esac

exec bash "$(dirname "$0")/apt-install.sh" install-e2e-deps "${pkgs[@]}"
