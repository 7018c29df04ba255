#!/usr/bin/env bash
# Regenerates mini.iso.gz: a 400 KB ISO (level 1 primary names, Rock Ridge,
# Joliet) with the live-ISO metadata files and two 64-'#' kargs areas. Used
# by the unit tests of the ISO helpers; not bootable.
set -euo pipefail
out=$(cd "$(dirname "$0")" && pwd)/mini.iso.gz
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
cd "$root"
mkdir -p coreos images EFI/redhat isolinux
head -c 8192 /dev/zero >images/ignition.img
printf '{\n  "file": "images/ignition.img"\n}\n' >coreos/igninfo.json
h=$(printf '%*s' 64 '' | tr ' ' '#')
d="rw coreos.liveiso=rhcos-mini ignition.firstboot"
printf 'menuentry x {\n\tlinux /images/pxeboot/vmlinuz console=ttyS0 %s\n%s COREOS_KARG_EMBED_AREA\n}\n' "$d" "$h" >EFI/redhat/grub.cfg
printf 'label linux\n  append initrd=/images/pxeboot/initrd.img,/images/ignition.img console=ttyS0 %s\n%s COREOS_KARG_EMBED_AREA\n' "$d" "$h" >isolinux/isolinux.cfg
g=$(grep -bo 'rw coreos' EFI/redhat/grub.cfg | cut -d: -f1)
i=$(grep -bo 'rw coreos' isolinux/isolinux.cfg | cut -d: -f1)
printf '{\n  "default": "%s",\n  "files": [\n    {"end": "\\n", "offset": %d, "pad": "#", "path": "EFI/redhat/grub.cfg"},\n    {"end": "\\n", "offset": %d, "pad": "#", "path": "isolinux/isolinux.cfg"}\n  ],\n  "size": %d\n}\n' \
  "$d" "$g" "$i" $((${#d} + 1 + 63)) >coreos/kargs.json
echo hello >"images/long name file.txt"
export SOURCE_DATE_EPOCH=1748000000
find . -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
xorriso -report_about WARNING -as mkisofs -o "$root/mini.iso" -V rhcos-mini -iso-level 1 -R -J -joliet-long .
gzip -9n <"$root/mini.iso" >"$out"
