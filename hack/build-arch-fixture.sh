#!/usr/bin/env bash
# Builds the boot fixture of another architecture (aarch64, ppc64le, s390x):
# a small bootable ISO with the layout of that architecture's RHCOS live ISO
# (as coreos-assembler's live build, now osbuild's
# org.osbuild.coreos.live-artifacts.mono stage, lays it out), for the QEMU
# boot test's architecture runs (test/e2e, TestBootArch; docs/e2e.md).
#
# Everything comes from Debian packages of that architecture, fetched with
# `apt-get download` through a private apt state (its own lists and
# architecture: the host's dpkg configuration is not touched) and unpacked,
# never installed:
#   aarch64  linux-image-*-arm64 (gzip-compressed Image as vmlinuz, as RHCOS),
#            grub-efi-arm64-bin (BOOTAA64.EFI in images/efiboot.img, the only
#            El Torito image: no isolinux, no isohybrid), EFI/redhat/grub.cfg
#   ppc64le  linux-image-*-powerpc64le (the ELF vmlinux as vmlinuz),
#            grub-ieee1275-bin: the ISO is mastered by grub-mkrescue with
#            boot/grub/grub.cfg (as RHCOS: grub2-mkrescue -volid)
#   s390x    linux-image-*-s390x: images/cdboot.img is the kernel, the
#            initrd and the parm file combined as s390-tools' mk-s390image
#            does (initrd start/size at 66568/66576, command line at 66688),
#            the initrd followed by the 256 KiB Ignition embed area; it is
#            the only El Torito image (no emulation); cdboot.prm,
#            generic.prm, genericdvd.prm, initrd.addrsize, generic.ins
# all with busybox-static of the architecture for the report /init
# (hack/boot-fixture-init.sh) and NIC driver modules for the rootfs fetch.
# The minimal ISO is mastered from the same tree without rootfs.img and
# miniso.dat, and hack/packminiso packs it into coreos/miniso.dat, as for the
# x86_64 fixture (hack/build-boot-fixture.sh). The areas are then checked.
#
# The fixture is cached under ${XDG_CACHE_HOME:-~/.cache}/agentiso/arch-fixture/
# <arch>-<key>/fixture.iso, key = sha256 of this script, the init, the udhcpc
# hook, hack/packminiso and pkg/isoeditor/miniso.go: a cached one is reused,
# never rebuilt (a new build removes the architecture's older ones); the
# .debs are cached beside it (debs-<arch>/), the apt state in apt-<arch>/.
#
# Usage: hack/build-arch-fixture.sh ARCH   (prints the fixture's path last)
# Env:   VOLID (default rhcos-9.6.20250523-0), SOURCE_DATE_EPOCH, KEEP=1 keeps the
#        work directory (in TMPDIR) for debugging
set -euo pipefail

arch=${1:?usage: $0 aarch64|ppc64le|s390x}
here=$(cd "$(dirname "$0")/.." && pwd)
VOLID=${VOLID:-rhcos-9.6.20250523-0}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1748000000}
KARG_DEFAULT="rw coreos.liveiso=$VOLID ignition.firstboot ignition.platform.id=metal"
case $arch in
aarch64)
	deb=arm64 kmeta=linux-image-arm64 console=ttyAMA0
	pkgs=(busybox-static grub-efi-arm64-bin)
	netmods=(e1000)
	;;
ppc64le)
	deb=ppc64el kmeta=linux-image-powerpc64le console=hvc0
	pkgs=(busybox-static grub-ieee1275-bin)
	netmods=(e1000)
	;;
s390x)
	# The s390x kernel's console is the SCLP console, the guest's first
	# serial device; there is no console= before the karg area (the whole
	# command line is the area in cdboot.img).
	deb=s390x kmeta=linux-image-s390x console=console
	pkgs=(busybox-static)
	netmods=(failover net_failover virtio_net)
	;;
*)
	echo "$0: unknown architecture $arch: want aarch64, ppc64le or s390x" >&2
	exit 2
	;;
esac
# Kernel arguments before the embed area (aarch64, ppc64le): never part of
# the editable area, so whatever is embedded the report reaches the console.
KARG_FIXED="console=$console panic=5"

for tool in xorriso mformat mmd mcopy cpio gzip grub-mkimage grub-mkrescue dpkg-deb apt-get sha256sum; do
	command -v "$tool" >/dev/null || { echo "$0: $tool missing: run hack/install-e2e-deps.sh" >&2; exit 1; }
done
command -v go >/dev/null || { echo "$0: go missing: the minimal-ISO data is packed by go run ./hack/packminiso" >&2; exit 1; }

root=${XDG_CACHE_HOME:-$HOME/.cache}/agentiso/arch-fixture
key=$(cat "$0" "$here/hack/boot-fixture-init.sh" "$here/hack/boot-fixture-udhcpc.sh" \
	"$here/hack/packminiso/main.go" "$here/pkg/isoeditor/miniso.go" | sha256sum | cut -c1-16)
dest=$root/$arch-$key
if [ -f "$dest/fixture.iso" ]; then
	echo "arch fixture $arch: cached" >&2
	echo "$dest/fixture.iso"
	exit 0
fi
mkdir -p "$root"

# ---- the packages, through a private apt state for the foreign architecture
# (one per architecture: the boot test builds the three at once)
apt_dir=$root/apt-$arch
debs=$root/debs-$arch
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$debs"
aptopts=(-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
	-o "APT::Architecture=$deb" -o "APT::Architectures::=$deb" -o Acquire::Languages=none
	-o APT::Sandbox::User=root -o Debug::NoLocking=1
	# only the Packages indexes: not appstream's DEP-11 metadata (7 MB an architecture)
	-o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false
	-o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false
	-o Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false
	-o Acquire::IndexTargets::deb::DEP-11-icons-hidpi::DefaultEnabled=false
	-o Acquire::IndexTargets::deb::DEP-11-icons-large::DefaultEnabled=false
	-o Acquire::IndexTargets::deb::DEP-11-icons-large-hidpi::DefaultEnabled=false)
updated=no
apt_update_once() {
	[ "$updated" = no ] || return 1
	updated=yes
	# A mirror index of another suite may fail (sync in progress): what is
	# needed is checked by resolving the packages below.
	apt-get "${aptopts[@]}" update >&2 || echo "$0: apt-get update reported errors; trying the packages" >&2
}
fetch() { # PKG
	if ! compgen -G "$debs/${1}_*_$deb.deb" >/dev/null; then
		until (cd "$debs" && apt-get "${aptopts[@]}" download "$1:$deb" >&2); do
			apt_update_once || { echo "$0: apt-get download $1:$deb failed" >&2; exit 1; }
		done
	fi
}
if ! compgen -G "$debs/linux-image-*_$deb.deb" >/dev/null; then
	resolve_kernel() { apt-cache "${aptopts[@]}" depends "$kmeta:$deb" 2>/dev/null | awk '/Depends: linux-image-/{sub(/:.*/, "", $2); print $2; exit}'; }
	kname=$(resolve_kernel || true)
	if [ -z "$kname" ] && apt_update_once; then kname=$(resolve_kernel || true); fi
	[ -n "$kname" ] || { echo "$0: cannot resolve $kmeta:$deb to a kernel package" >&2; exit 1; }
	fetch "$kname"
fi
for p in "${pkgs[@]}"; do fetch "$p"; done

work=$(mktemp -d "${TMPDIR:-/tmp}/arch-fixture-$arch.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
pkgroot=$work/pkgs
mkdir -p "$pkgroot"
for d in "$debs"/*.deb; do dpkg-deb -x "$d" "$pkgroot"; done
kernel=$(ls "$pkgroot"/boot/vmlinu[xz]-* | head -n1)

iso=$work/iso
mkdir -p "$iso"/{coreos,images/pxeboot}

# ---- busybox initramfs with the report /init
rd=$work/initramfs
mkdir -p "$rd"/{bin,dev,proc,sys,etc,tmp,run,lib/modules/net}
cp "$pkgroot/bin/busybox" "$rd/bin/busybox"
for m in "${netmods[@]}"; do
	f=$(find "$pkgroot/lib/modules" -name "$m.ko" | head -n1)
	[ -n "$f" ] || { echo "$0: $m.ko not found in the $arch kernel package" >&2; exit 1; }
	cp "$f" "$rd/lib/modules/net/"
	echo "$m.ko" >>"$rd/lib/modules/net/order"
done
echo "$console" >"$rd/fixture-console"
install -m 0755 "$here/hack/boot-fixture-udhcpc.sh" "$rd/udhcpc.script"
install -m 0755 "$here/hack/boot-fixture-init.sh" "$rd/init"
(cd "$rd" && { find . | sed 's|^\.||' | grep -v '^$'; echo /; echo /root; echo /fixture-manifest; } | sort -u >fixture-manifest)
initrd=$iso/images/pxeboot/initrd.img
(cd "$rd" && find . | sort | cpio --quiet -o -H newc --reproducible -R 0:0) | gzip -n -9 >"$initrd"
# 4-byte aligned, as RHCOS's (coreos-assembler aligns it for appended archives)
truncate -s $(( ($(stat -c %s "$initrd") + 3) / 4 * 4 )) "$initrd"

# ---- the live rootfs (as the x86_64 fixture's) and the miniso placeholder
mkdir -p "$work/rootfs"
printf 'agentiso %s boot fixture rootfs line %04d\n' "$arch" $(seq 1 32768) >"$work/rootfs/root.squashfs"
(cd "$work/rootfs" && echo root.squashfs | cpio --quiet -o -H newc --reproducible -R 0:0) >"$iso/images/pxeboot/rootfs.img"
head -c 65536 /dev/zero >"$iso/coreos/miniso.dat"
cat >"$iso/coreos/features.json" <<'EOF'
{
  "installer-config": true,
  "live-initrd-network": true
}
EOF

ign_size=262144
hashes=$(printf '%*s' 1024 '' | tr ' ' '#')
grub_cfg() { # the live grub.cfg (EFI/redhat on aarch64, boot/grub on ppc64le)
	cat <<EOF
set default=0
set timeout=0
menuentry 'RHCOS (Live)' {
	linux /images/pxeboot/vmlinuz $KARG_FIXED $KARG_DEFAULT
$hashes COREOS_KARG_EMBED_AREA
	initrd /images/pxeboot/initrd.img /images/ignition.img
}
EOF
}
# karg_offset FILE: byte offset of the default kargs inside FILE.
karg_offset() {
	local line_start
	line_start=$(grep -b -m1 -F -- "$KARG_FIXED $KARG_DEFAULT" "$1" | cut -d: -f1)
	echo $((line_start + $(grep -m1 -F -- "$KARG_FIXED $KARG_DEFAULT" "$1" | sed "s|$KARG_DEFAULT\$||" | wc -c) - 1))
}
kargs_json() { # PATH OFFSET SIZE PAD END (JSON escapes)
	cat <<EOF
{
  "default": "$KARG_DEFAULT",
  "files": [
    {
      "end": "$5",
      "offset": $2,
      "pad": "$4",
      "path": "$1"
    }
  ],
  "size": $3
}
EOF
}

case $arch in
aarch64)
	gzip -n -9 -c "$kernel" >"$iso/images/pxeboot/vmlinuz"
	head -c $ign_size /dev/zero >"$iso/images/ignition.img"
	printf '{\n  "file": "images/ignition.img"\n}\n' >"$iso/coreos/igninfo.json"
	cfg=EFI/redhat/grub.cfg
	mkdir -p "$iso/EFI/redhat"
	grub_cfg >"$iso/$cfg"
	cfg_off=$(karg_offset "$iso/$cfg")
	kargs_json "$cfg" "$cfg_off" $((${#KARG_DEFAULT} + 1 + 1023)) '#' '\n' >"$iso/coreos/kargs.json"
	# GRUB as EFI/BOOT/BOOTAA64.EFI in the ESP image; its early config finds
	# the ISO (the only device with EFI/redhat/grub.cfg) and reads that config.
	cat >"$work/early.cfg" <<'EOF'
search --no-floppy --file --set=root /EFI/redhat/grub.cfg
set prefix=($root)/EFI/redhat
configfile $prefix/grub.cfg
EOF
	grub-mkimage -O arm64-efi -d "$pkgroot/usr/lib/grub/arm64-efi" -o "$work/BOOTAA64.EFI" \
		-p /EFI/redhat -c "$work/early.cfg" \
		normal configfile search search_fs_file search_label iso9660 fat part_gpt part_msdos \
		linux gzio echo test serial terminal boot
	efiimg=$iso/images/efiboot.img
	head -c $((4 * 1024 * 1024)) /dev/zero >"$efiimg"
	mformat -i "$efiimg" -v EFI-SYSTEM -N 12345678 ::
	mmd -i "$efiimg" ::/EFI ::/EFI/BOOT
	mcopy -i "$efiimg" -m "$work/BOOTAA64.EFI" ::/EFI/BOOT/BOOTAA64.EFI
	master() { # TREE OUT: EFI El Torito only, as RHCOS aarch64 (no isohybrid)
		xorriso -report_about WARNING -as mkisofs -o "$2" \
			-V "$VOLID" -volset "$VOLID" -iso-level 1 -R -J -joliet-long \
			-eltorito-alt-boot -e images/efiboot.img -no-emul-boot "$1"
	}
	;;
ppc64le)
	cp "$kernel" "$iso/images/pxeboot/vmlinuz"
	head -c $ign_size /dev/zero >"$iso/images/ignition.img"
	printf '{\n  "file": "images/ignition.img"\n}\n' >"$iso/coreos/igninfo.json"
	cfg=boot/grub/grub.cfg
	mkdir -p "$iso/boot/grub"
	grub_cfg >"$iso/$cfg"
	cfg_off=$(karg_offset "$iso/$cfg")
	kargs_json "$cfg" "$cfg_off" $((${#KARG_DEFAULT} + 1 + 1023)) '#' '\n' >"$iso/coreos/kargs.json"
	master() { # TREE OUT: grub-mkrescue (CHRP boot for SLOF), as RHCOS ppc64le
		grub-mkrescue -d "$pkgroot/usr/lib/grub/powerpc-ieee1275" -o "$2" "$1" -- \
			-volid "$VOLID" -report_about WARNING >"$work/mkrescue.log" 2>&1 ||
			{ cat "$work/mkrescue.log" >&2; return 1; }
	}
	;;
s390x)
	cp "$kernel" "$iso/images/pxeboot/vmlinuz"
	# cdboot.img as mk-s390image builds it, with the initrd inflated by the
	# Ignition embed area for the duration (as the RHCOS build does).
	initrd_size=$(stat -c %s "$initrd")
	img=$iso/images/cdboot.img
	dd if="$kernel" of="$img" bs=4096 conv=sync status=none
	initrd_off=$(stat -c %s "$img")
	cat "$initrd" >>"$img"
	head -c $ign_size /dev/zero >>"$img"
	be64() { printf "$(printf '%016x' "$1" | sed 's/../\\x&/g')"; } # big-endian u64
	be64 "$initrd_off" | dd of="$img" bs=1 seek=66568 count=8 conv=notrunc status=none
	be64 $((initrd_size + ign_size)) | dd of="$img" bs=1 seek=66576 count=8 conv=notrunc status=none
	printf '%s' "$KARG_DEFAULT" >"$iso/images/cdboot.prm"
	cp "$iso/images/cdboot.prm" "$iso/images/generic.prm"
	cp "$iso/images/cdboot.prm" "$iso/images/genericdvd.prm"
	head -c 896 /dev/zero | dd of="$img" bs=1 seek=66688 conv=notrunc status=none
	dd if="$iso/images/cdboot.prm" of="$img" bs=1 seek=66688 conv=notrunc status=none
	printf '{\n  "file": "images/cdboot.img",\n  "length": %d,\n  "offset": %d\n}\n' \
		$ign_size $((initrd_off + initrd_size)) >"$iso/coreos/igninfo.json"
	kargs_json images/cdboot.img 66688 896 '\u0000' '\u0000' >"$iso/coreos/kargs.json"
	# initrd.addrsize: ">iiii" 0, load address, 0, initrd size (LPAR)
	{ be64 $((0x02000000)); be64 "$initrd_size"; } >"$iso/images/initrd.addrsize"
	cat >"$iso/generic.ins" <<'EOF'
* minimal lpar ins file
images/pxeboot/vmlinuz 0x00000000
images/pxeboot/initrd.img 0x02000000
images/genericdvd.prm 0x00010480
images/initrd.addrsize 0x00010408
EOF
	master() { # TREE OUT: cdboot.img the only El Torito image, as RHCOS s390x
		xorriso -report_about WARNING -as mkisofs -o "$2" \
			-V "$VOLID" -volset "$VOLID" -R -J -joliet-long \
			-no-emul-boot -eltorito-boot images/cdboot.img "$1"
	}
	;;
esac

# ---- master the full and the minimal ISO, pack miniso.dat
find "$iso" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
tmpout=$work/fixture.iso
master "$iso" "$tmpout"
mini=$work/minimal-tree
cp -a "$iso" "$mini"
rm "$mini/images/pxeboot/rootfs.img" "$mini/coreos/miniso.dat"
touch -h -d "@$SOURCE_DATE_EPOCH" "$mini/images/pxeboot" "$mini/coreos"
master "$mini" "$work/minimal.iso"
list() {
	xorriso -indev "$1" -find / -type f -exec report_lba -- 2>/dev/null |
		awk -F' *, *' '/^File data lba:/{p=$5; gsub(/^'"'"'|'"'"'$/, "", p); print $2, $4, p}'
}
list "$tmpout" >"$work/full.list"
list "$work/minimal.iso" >"$work/minimal.list"
(cd "$here" && go run ./hack/packminiso "$tmpout" "$work/full.list" "$work/minimal.iso" "$work/minimal.list" >&2)

# ---- verify the areas in the final ISO
lba() { awk -v p="/$1" '$3 == p {print $1; exit}' "$work/full.list"; }
check_bytes() { # ISO-OFFSET EXPECTED-STRING WHAT
	local got
	got=$(dd if="$tmpout" bs=1 skip="$1" count="${#2}" status=none)
	[ "$got" = "$2" ] || { echo "$0: $3: expected '$2' at ISO offset $1, got '$got'" >&2; exit 1; }
}
check_zero() { # ISO-OFFSET LENGTH WHAT
	local n
	n=$(dd if="$tmpout" bs=4096 iflag=skip_bytes,count_bytes skip="$1" count="$2" status=none | tr -d '\0' | wc -c)
	[ "$n" -eq 0 ] || { echo "$0: $3 at ISO offset $1 is not zero" >&2; exit 1; }
}
case $arch in
s390x)
	base=$(( $(lba images/cdboot.img) * 2048 ))
	check_zero $((base + initrd_off + initrd_size)) $ign_size "Ignition area in images/cdboot.img"
	check_bytes $((base + 66688)) "$KARG_DEFAULT" "images/cdboot.img kargs area"
	check_zero $((base + 66688 + ${#KARG_DEFAULT})) $((896 - ${#KARG_DEFAULT})) "images/cdboot.img kargs area padding"
	check_bytes $((base + initrd_off)) "$(head -c 2 "$initrd")" "initrd in images/cdboot.img"
	;;
*)
	check_zero $(( $(lba images/ignition.img) * 2048 )) $ign_size "images/ignition.img"
	check_bytes $(( $(lba "$cfg") * 2048 + cfg_off )) "$KARG_DEFAULT"$'\n'"${hashes:1}# COREOS_KARG_EMBED_AREA" "$cfg kargs area"
	;;
esac
check_bytes 32808 "$VOLID" "PVD volume ID"
for n in IGNINFO.JSO KARGS.JSO; do
	grep -qa "$n;1" "$tmpout" || { echo "$0: primary name $n;1 missing" >&2; exit 1; }
done
mkdir -p "$dest.tmp.$$"
mv "$tmpout" "$dest.tmp.$$/fixture.iso"
rm -rf "$dest"
mv "$dest.tmp.$$" "$dest"
# fixtures of older recipes are not used again
for d in "$root/$arch"-*; do
	[ "$d" = "$dest" ] || rm -rf "$d"
done
echo "arch fixture $arch: $dest/fixture.iso ($(stat -c %s "$dest/fixture.iso") bytes, kernel $(basename "$kernel"), minimal ISO $(stat -c %s "$work/minimal.iso") bytes)" >&2
echo "$dest/fixture.iso"
