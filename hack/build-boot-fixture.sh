#!/usr/bin/env bash
# Builds a small bootable ISO with the RHCOS live-ISO layout, for the QEMU boot
# end-to-end test (test/e2e). Everything comes from Debian packages fetched
# with `apt-get download` (cached under $CACHE/debs):
#   images/pxeboot/vmlinuz    Debian kernel (linux-image-amd64's dependency)
#   images/pxeboot/initrd.img busybox-static initramfs whose /init reports on ttyS0
#   images/ignition.img       256 KiB of zeros: the Ignition embed area
#   images/efiboot.img        FAT ESP image with a GRUB BOOTX64.EFI
#   isolinux/                 isolinux (BIOS El Torito, isohybrid MBR)
#   EFI/redhat/grub.cfg       GRUB config (UEFI)
#   coreos/igninfo.json       {"file": "images/ignition.img"}
#   coreos/kargs.json         kargs embed areas in both boot configs
#   coreos/features.json
#   images/pxeboot/rootfs.img a small newc cpio (root.squashfs): what a minimal
#                             ISO or a PXE boot fetches from coreos.live.rootfs_url=
#   coreos/miniso.dat         the minimal-ISO data (as `coreos-installer pack
#                             minimal-iso` writes it): the same tree without
#                             rootfs.img is mastered as the minimal ISO, and
#                             hack/packminiso records how to rebuild it
# Both boot configs load images/ignition.img as a second initrd and carry a
# 1024-'#' COREOS_KARG_EMBED_AREA line right after the kernel arguments.
# With coreos.live.rootfs_url= on the command line, /init loads the e1000 NIC
# driver, runs udhcpc and fetches the rootfs with wget (reporting its sha256).
# After mastering, the script locates every file in the ISO and checks that
# the areas named by igninfo.json/kargs.json are where and what they should be.
#
# Usage: hack/build-boot-fixture.sh OUT.iso
# Env:   CACHE (default .cache/boot-fixture), VOLID (default rhcos-9.6.20250523-0)
#        SOURCE_DATE_EPOCH (default fixed) for reproducible timestamps.
set -euo pipefail

out=${1:?usage: $0 OUT.iso}
here=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${CACHE:-$here/.cache/boot-fixture}
VOLID=${VOLID:-rhcos-9.6.20250523-0}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1748000000}
KARG_DEFAULT="rw coreos.liveiso=$VOLID ignition.firstboot ignition.platform.id=metal"
# Kernel arguments placed before the embed area: never part of the editable
# area, so the report always reaches the serial console whatever is embedded.
KARG_FIXED="console=ttyS0,115200n8 panic=5"

for tool in xorriso mformat mmd mcopy cpio gzip grub-mkimage dpkg-deb apt-get; do
  command -v "$tool" >/dev/null || { echo "$0: $tool missing: run hack/install-e2e-deps.sh" >&2; exit 1; }
done
command -v go >/dev/null || { echo "$0: go missing: the minimal-ISO data is packed by go run ./hack/packminiso" >&2; exit 1; }

debs=$CACHE/debs
mkdir -p "$debs"

# fetch PKG: make sure a .deb of PKG is in the cache (apt-get download once).
updated=no
apt_update_once() {
  [ "$updated" = no ] || return 1
  updated=yes
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -o DPkg::Lock::Timeout=600 >&2
}
fetch() {
  local pkg=$1
  if ! compgen -G "$debs/${pkg}_*.deb" >/dev/null; then
    until (cd "$debs" && apt-get download -o APT::Sandbox::User=root "$pkg"); do
      apt_update_once || { echo "$0: apt-get download $pkg failed" >&2; exit 1; }
    done
  fi
}

# The kernel: linux-image-amd64 is a metapackage; take the image it depends on.
kpkg=$(ls "$debs"/linux-image-*-amd64_*.deb 2>/dev/null | head -n1 || true)
if [ -z "$kpkg" ]; then
  resolve_kernel() { apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}'; }
  kname=$(resolve_kernel)
  if [ -z "$kname" ] && apt_update_once; then kname=$(resolve_kernel); fi
  [ -n "$kname" ] || { echo "$0: cannot resolve linux-image-amd64 to a kernel package" >&2; exit 1; }
  fetch "$kname"
fi
for p in busybox-static isolinux syslinux-common grub-efi-amd64-bin; do fetch "$p"; done

work=$(mktemp -d "${TMPDIR:-/tmp}/boot-fixture.XXXXXX")
tmpout="$out.tmp.$$" # the mastered ISO until it is verified
trap 'rm -rf "$work" "$tmpout"' EXIT
pkgroot=$work/pkgs
mkdir -p "$pkgroot"
for d in "$debs"/*.deb; do dpkg-deb -x "$d" "$pkgroot"; done

iso=$work/iso
mkdir -p "$iso"/{coreos,EFI/redhat,images/pxeboot,isolinux}

# ---- kernel
cp "$(ls "$pkgroot"/boot/vmlinuz-* | head -n1)" "$iso/images/pxeboot/vmlinuz"

# ---- busybox initramfs
rd=$work/initramfs
mkdir -p "$rd"/{bin,dev,proc,sys,etc,tmp,run,lib/modules}
cp "$pkgroot/bin/busybox" "$rd/bin/busybox"
# e1000: QEMU's NIC for the network boots (no module dependencies; iPXE has
# a ROM for it).
e1000=$(find "$pkgroot/lib/modules" -name e1000.ko | head -n1)
[ -n "$e1000" ] || { echo "$0: e1000.ko not found in the kernel package" >&2; exit 1; }
mkdir -p "$rd/lib/modules/net"
cp "$e1000" "$rd/lib/modules/net/e1000.ko"
echo e1000.ko >"$rd/lib/modules/net/order"
echo ttyS0 >"$rd/fixture-console"
install -m 0755 "$here/hack/boot-fixture-udhcpc.sh" "$rd/udhcpc.script"
install -m 0755 "$here/hack/boot-fixture-init.sh" "$rd/init"
(cd "$rd" && { find . | sed 's|^\.||' | grep -v '^$'; echo /; echo /root; echo /fixture-manifest; } | sort -u >fixture-manifest)
(cd "$rd" && find . | sort | cpio --quiet -o -H newc --reproducible -R 0:0) | gzip -n -9 >"$iso/images/pxeboot/initrd.img"

# ---- the live rootfs: an uncompressed newc cpio whose first member is
# root.squashfs (as in RHCOS), here 1.1 MiB of text. Nothing mounts it; the
# guest only fetches it (coreos.live.rootfs_url=) and reports its sha256.
mkdir -p "$work/rootfs"
printf 'agentiso boot fixture rootfs line %04d\n' $(seq 1 32768) >"$work/rootfs/root.squashfs"
(cd "$work/rootfs" && echo root.squashfs | cpio --quiet -o -H newc --reproducible -R 0:0) >"$iso/images/pxeboot/rootfs.img"
# The minimal-ISO data: a zero placeholder now, filled in after mastering.
head -c 16384 /dev/zero >"$iso/coreos/miniso.dat"

# ---- Ignition embed area
head -c 262144 /dev/zero >"$iso/images/ignition.img"
printf '{\n  "file": "images/ignition.img"\n}\n' >"$iso/coreos/igninfo.json"
cat >"$iso/coreos/features.json" <<'EOF'
{
  "installer-config": true,
  "live-initrd-network": true
}
EOF

# ---- boot configs with kargs embed areas
hashes=$(printf '%*s' 1024 '' | tr ' ' '#')
cat >"$iso/EFI/redhat/grub.cfg" <<EOF
set default=0
set timeout=0
serial --unit=0 --speed=115200
terminal_input serial console
terminal_output serial console
menuentry 'RHCOS (Live)' {
	linux /images/pxeboot/vmlinuz $KARG_FIXED $KARG_DEFAULT
$hashes COREOS_KARG_EMBED_AREA
	initrd /images/pxeboot/initrd.img /images/ignition.img
}
EOF
cat >"$iso/isolinux/isolinux.cfg" <<EOF
serial 0 115200
default linux
prompt 0
timeout 0
label linux
  kernel /images/pxeboot/vmlinuz
  append initrd=/images/pxeboot/initrd.img,/images/ignition.img $KARG_FIXED $KARG_DEFAULT
$hashes COREOS_KARG_EMBED_AREA
EOF

# karg_offset FILE: byte offset of the default kargs inside FILE.
karg_offset() {
  local f=$1 prefix
  prefix=$(grep -m1 -F -- "$KARG_FIXED $KARG_DEFAULT" "$f" | sed "s|$KARG_DEFAULT\$||")
  local line_start
  line_start=$(grep -b -m1 -F -- "$KARG_FIXED $KARG_DEFAULT" "$f" | cut -d: -f1)
  echo $((line_start + ${#prefix}))
}
grub_off=$(karg_offset "$iso/EFI/redhat/grub.cfg")
isol_off=$(karg_offset "$iso/isolinux/isolinux.cfg")
# Area = default kargs + "\n" + all '#' but the last (1023).
size=$((${#KARG_DEFAULT} + 1 + 1023))
cat >"$iso/coreos/kargs.json" <<EOF
{
  "default": "$KARG_DEFAULT",
  "files": [
    {
      "end": "\n",
      "offset": $grub_off,
      "pad": "#",
      "path": "EFI/redhat/grub.cfg"
    },
    {
      "end": "\n",
      "offset": $isol_off,
      "pad": "#",
      "path": "isolinux/isolinux.cfg"
    }
  ],
  "size": $size
}
EOF

# ---- isolinux (BIOS)
cp "$pkgroot/usr/lib/ISOLINUX/isolinux.bin" "$iso/isolinux/"
cp "$pkgroot/usr/lib/syslinux/modules/bios/ldlinux.c32" "$iso/isolinux/"

# ---- GRUB EFI (UEFI): early config finds the ISO (the only device with
# EFI/redhat/grub.cfg; efiboot.img has just EFI/BOOT) and reads that config.
cat >"$work/early.cfg" <<'EOF'
search --no-floppy --file --set=root /EFI/redhat/grub.cfg
set prefix=($root)/EFI/redhat
configfile $prefix/grub.cfg
EOF
grub-mkimage -O x86_64-efi -d "$pkgroot/usr/lib/grub/x86_64-efi" -o "$work/BOOTX64.EFI" \
  -p /EFI/redhat -c "$work/early.cfg" \
  normal configfile search search_fs_file search_label iso9660 fat part_gpt part_msdos \
  linux echo test serial terminal efi_gop all_video boot
efiimg=$iso/images/efiboot.img
head -c $((4 * 1024 * 1024)) /dev/zero >"$efiimg"
mformat -i "$efiimg" -v EFI-SYSTEM -N 12345678 ::
mmd -i "$efiimg" ::/EFI ::/EFI/BOOT
mcopy -i "$efiimg" -m "$work/BOOTX64.EFI" ::/EFI/BOOT/BOOTX64.EFI

# ---- master the full ISO and, from the same tree without rootfs.img and
# miniso.dat, the minimal ISO (as the RHCOS build does)
find "$iso" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
master() { # TREE OUT
  xorriso -report_about WARNING -as mkisofs -o "$2" \
    -V "$VOLID" -volset "$VOLID" -iso-level 1 -R -J -joliet-long \
    -b isolinux/isolinux.bin -c isolinux/boot.cat -no-emul-boot -boot-load-size 4 -boot-info-table \
    -isohybrid-mbr "$pkgroot/usr/lib/ISOLINUX/isohdpfx.bin" \
    -eltorito-alt-boot -e images/efiboot.img -no-emul-boot -isohybrid-gpt-basdat \
    "$1"
}
master "$iso" "$tmpout"
mini=$work/minimal-tree
cp -a "$iso" "$mini"
rm "$mini/images/pxeboot/rootfs.img" "$mini/coreos/miniso.dat"
touch -h -d "@$SOURCE_DATE_EPOCH" "$mini/images/pxeboot" "$mini/coreos"
master "$mini" "$work/minimal.iso"
# list ISO: "LBA SIZE /path" for every file.
list() {
  xorriso -indev "$1" -find / -type f -exec report_lba -- 2>/dev/null |
    awk -F' *, *' '/^File data lba:/{p=$5; gsub(/^'"'"'|'"'"'$/, "", p); print $2, $4, p}'
}
list "$tmpout" >"$work/full.list"
list "$work/minimal.iso" >"$work/minimal.list"
(cd "$here" && go run ./hack/packminiso "$tmpout" "$work/full.list" "$work/minimal.iso" "$work/minimal.list")

# ---- verify the areas in the final ISO
# lba PATH: start block of PATH in the mastered ISO.
lba() {
  xorriso -indev "$tmpout" -find "/$1" -exec report_lba -- 2>/dev/null |
    awk -F, '/^File data lba:/{gsub(/ /,"",$2); print $2; exit}'
}
check_bytes() { # ISO-OFFSET EXPECTED-STRING WHAT
  local got
  got=$(dd if="$tmpout" bs=1 skip="$1" count="${#2}" status=none)
  [ "$got" = "$2" ] || { echo "$0: $3: expected '$2' at ISO offset $1, got '$got'" >&2; exit 1; }
}
ign_lba=$(lba images/ignition.img)
[ -n "$ign_lba" ] || { echo "$0: images/ignition.img not found in ISO" >&2; exit 1; }
nonzero=$(dd if="$tmpout" bs=2048 skip="$ign_lba" count=128 status=none | tr -d '\0' | wc -c)
[ "$nonzero" -eq 0 ] || { echo "$0: ignition area at LBA $ign_lba is not zero" >&2; exit 1; }
area="$KARG_DEFAULT"$'\n'"${hashes:1}"
for pair in "EFI/redhat/grub.cfg:$grub_off" "isolinux/isolinux.cfg:$isol_off"; do
  f=${pair%%:*} off=${pair##*:}
  l=$(lba "$f")
  [ -n "$l" ] || { echo "$0: $f not found in ISO" >&2; exit 1; }
  check_bytes $((l * 2048 + off)) "$area# COREOS_KARG_EMBED_AREA" "$f kargs area"
done
# 8.3 primary names, as coreos-installer looks them up.
for n in IGNINFO.JSO KARGS.JSO IGNITION.IMG; do
  grep -qa "$n;1" "$tmpout" || { echo "$0: primary name $n;1 missing" >&2; exit 1; }
done
check_bytes 32808 "$VOLID" "PVD volume ID"
mv -f "$tmpout" "$out"
echo "boot fixture: $out ($(stat -c %s "$out") bytes, volume $VOLID, ignition.img at LBA $ign_lba; minimal ISO $(stat -c %s "$work/minimal.iso") bytes)"
