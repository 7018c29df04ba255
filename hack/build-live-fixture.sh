#!/usr/bin/env bash
# Builds the LIVE fixture: a stand-in for the RHCOS live ISO that boots into a
# real userspace (systemd, podman, NetworkManager) after running the real
# Ignition, for the live lab (make e2e-live, test/live, docs/e2e.md).
#
# Layout (the RHCOS live-ISO layout that `agentiso create image --base-iso`
# expects, like hack/build-boot-fixture.sh):
#   images/pxeboot/vmlinuz     Debian bookworm kernel (from the root filesystem)
#   images/pxeboot/initrd.img  busybox-static initramfs, /init described below
#   images/pxeboot/rootfs.img  newc cpio whose first member is root.squashfs
#                              (the Debian root filesystem), as in RHCOS
#   images/ignition.img        256 KiB of zeros: the Ignition embed area
#   images/efiboot.img         FAT ESP with a GRUB BOOTX64.EFI
#   isolinux/, EFI/redhat/     boot configs with the COREOS_KARG_EMBED_AREA
#   coreos/igninfo.json, coreos/kargs.json, coreos/features.json
#
# The initramfs /init: loads the CD/loop/squashfs/overlay and NIC modules, finds the
# ISO whose volume ID is coreos.liveiso=, mounts root.squashfs from rootfs.img
# read-only under a tmpfs overlay at /sysroot, runs the real Ignition
# (Debian's `ignition` package, stages fetch-offline and files, with
# --platform=file on the /config.ign the kernel unpacked from
# images/ignition.img) chrooted into /sysroot, enables the units Ignition
# preset, gives the host a fresh machine-id, and switch_roots into systemd.
# It prints LIVE-INITRD lines on the console; on any failure it prints
# LIVE-INITRD-FAILED and powers off.
#
# The root filesystem is Debian bookworm built with mmdebstrap (Debian
# packages only) plus the RHCOS stand-ins listed in docs/e2e.md (each logs its
# calls to the journal with the tag `rhcos-standin`).
#
# The result is cached OUTSIDE the clone, keyed by the sha256 of this script:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/agentiso/live-fixture/<hash>/fixture.iso
# and rebuilt only when this script changes.
#
# Usage: hack/build-live-fixture.sh          build if needed, print the ISO path
#        hack/build-live-fixture.sh --path   only print the cached ISO path
# Env:   AGENTISO_LIVE_CACHE overrides the cache root; MIRROR the Debian mirror
#        (default http://deb.debian.org/debian).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
self=$here/hack/build-live-fixture.sh
hash=$(sha256sum "$self" | cut -c1-16)
root=${AGENTISO_LIVE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agentiso/live-fixture}
dir=$root/$hash
out=$dir/fixture.iso
if [ "${1:-}" = --path ]; then
  echo "$out"
  exit 0
fi
if [ -s "$out" ]; then
  touch "$dir" # most recently used: kept by the pruning below
  echo "$out"
  exit 0
fi

VOLID=rhcos-9.6.20250523-0
SUITE=bookworm
MIRROR=${MIRROR:-http://deb.debian.org/debian}
export SOURCE_DATE_EPOCH=1748000000
KARG_DEFAULT="rw coreos.liveiso=$VOLID ignition.firstboot ignition.platform.id=metal"
# no_timer_check: under TCG on a loaded host the kernel's IO-APIC timer
# check can miss its window and panic ("IO-APIC + timer doesn't work!", seen
# in serve-boot at load 29); the check proves nothing about agentiso.
KARG_FIXED="console=ttyS0,115200n8 panic=10 no_timer_check"

for tool in mmdebstrap mksquashfs xorriso mformat mmd mcopy cpio gzip grub-mkimage dpkg-deb apt-get modprobe; do
  command -v "$tool" >/dev/null || { echo "$0: $tool missing: run hack/live-deps.sh" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "$0: must run as root (mmdebstrap --mode=root, chroot)" >&2; exit 1; }

start=$(date +%s)
mkdir -p "$root"
work=$(mktemp -d "$root/build.XXXXXX")
cleanup() {
  rm -rf "$work"
}
trap cleanup EXIT
log() { echo "build-live-fixture: $(($(date +%s) - start))s: $*" >&2; }

# ---------------------------------------------------------------- root filesystem
pkgs=(
  systemd systemd-sysv udev dbus kmod util-linux procps passwd sudo less
  linux-image-amd64 busybox-static
  ignition
  podman catatonit crun runc conmon containernetworking-plugins golang-github-containers-common iptables
  network-manager chrony iproute2 iputils-ping jq curl ca-certificates openssl
  open-iscsi checkpolicy semodule-utils
  cpio
)
# The bare Debian system is cached separately (a tar, keyed by suite, mirror
# and package list), so that changing only the customization below does not
# download and unpack the packages again.
# The kernel's postinst would build an initramfs-tools initrd that is never
# used (the fixture has its own): divert update-initramfs to a no-op first.
hooks=(
  --essential-hook='chroot "$1" dpkg-divert --quiet --local --rename --divert /usr/sbin/update-initramfs.real --add /usr/sbin/update-initramfs'
  --essential-hook='printf "#!/bin/sh\nexit 0\n" >"$1/usr/sbin/update-initramfs" && chmod 0755 "$1/usr/sbin/update-initramfs"'
)
base_key=$(echo "$SUITE $MIRROR ${pkgs[*]} ${hooks[*]} base-v1" | sha256sum | cut -c1-16)
base=$root/base-$base_key.tar
if [ ! -s "$base" ]; then
  log "mmdebstrap $SUITE (${#pkgs[@]} packages) -> $base"
  mmdebstrap --mode=root --variant=apt --format=tar "${hooks[@]}" \
    --include="$(IFS=,; echo "${pkgs[*]}")" \
    --aptopt='APT::Install-Recommends "false"' \
    "$SUITE" "$work/base.tar" "deb $MIRROR $SUITE main" >"$work/mmdebstrap.log" 2>&1 ||
    { tail -n 40 "$work/mmdebstrap.log" >&2; echo "$0: mmdebstrap failed" >&2; exit 1; }
  mv "$work/base.tar" "$base"
  # keep the two newest Debian bases: worktrees with another package list
  # share this cache, and pruning to one made them rebuild each other's
  ls -t "$root"/base-*.tar | tail -n +3 | while read -r old; do rm -f "$old"; done
fi
touch "$base"
mkdir "$work/rootfs"
tar -C "$work/rootfs" --numeric-owner --xattrs --xattrs-include='*' -xpf "$base"
log "root filesystem: $(du -sh --exclude=proc --exclude=sys "$work/rootfs" | cut -f1)"

r=$work/rootfs
# standin NAME: an RHCOS tool missing from Debian; logs its call and succeeds.
standin() {
  local path=$1 what=$2
  mkdir -p "$r$(dirname "$path")"
  cat >"$r$path" <<EOF
#!/bin/bash
# agentiso live fixture stand-in for RHCOS's $(basename "$path"): $what
logger -t rhcos-standin -- "$(basename "$path") \$*" 2>/dev/null || true
echo "rhcos-standin: $(basename "$path") \$*" >>/var/log/rhcos-standin.log
exit 0
EOF
  chmod 0755 "$r$path"
}
standin /usr/bin/coreos-installer "installs RHCOS to disk (the lab stops before the write)"
standin /usr/bin/rpm-ostree "manages the OSTree deployment (nothing to manage on Debian)"
standin /usr/sbin/semodule "loads SELinux policy modules (Debian runs without SELinux)"
standin /usr/sbin/restorecon "relabels files for SELinux"
# Debian's Ignition is built to relabel what it writes: it reads
# /etc/selinux/config and pipes the paths to setfiles.
standin /usr/sbin/setfiles "relabels the files Ignition wrote (reads the list on stdin)"
sed -i 's|^exit 0$|cat >/dev/null\nexit 0|' "$r/usr/sbin/setfiles"
mkdir -p "$r/etc/selinux"
printf 'SELINUX=disabled\nSELINUXTYPE=targeted\n' >"$r/etc/selinux/config"
# update-ca-trust: RHCOS merges /etc/pki/ca-trust/source/anchors into the
# system trust (coreos-update-ca-trust.service runs it at boot). The stand-in
# appends the anchors to the Debian bundle that Go programs (podman) and curl
# read, /etc/ssl/certs/ca-certificates.crt, and writes the RHCOS bundle path
# the agent containers mount. (Not update-ca-certificates: its rehash of
# every certificate takes minutes under TCG.)
mkdir -p "$r/usr/share/agentiso-live"
cp "$r/etc/ssl/certs/ca-certificates.crt" "$r/usr/share/agentiso-live/ca-certificates.crt"
cat >"$r/usr/bin/update-ca-trust" <<'EOF'
#!/bin/bash
# agentiso live fixture stand-in for RHCOS's update-ca-trust (see docs/e2e.md).
set -euo pipefail
logger -t rhcos-standin -- "update-ca-trust $*" 2>/dev/null || true
echo "rhcos-standin: update-ca-trust $*" >>/var/log/rhcos-standin.log
bundle=/etc/ssl/certs/ca-certificates.crt
cp /usr/share/agentiso-live/ca-certificates.crt "$bundle.tmp"
n=0
for f in /etc/pki/ca-trust/source/anchors/*; do
  [ -f "$f" ] || continue
  { cat "$f"; echo; } >>"$bundle.tmp"
  n=$((n + 1))
done
mv "$bundle.tmp" "$bundle"
mkdir -p /etc/pki/ca-trust/extracted/pem /etc/pki/tls/certs
cp "$bundle" /etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem
ln -sf /etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem /etc/pki/tls/certs/ca-bundle.crt
echo "update-ca-trust: $n anchor file(s) merged"
EOF
chmod 0755 "$r/usr/bin/update-ca-trust"
mkdir -p "$r/etc/pki/ca-trust/source/anchors"
cat >"$r/etc/systemd/system/coreos-update-ca-trust.service" <<'EOF'
[Unit]
Description=Stand-in for RHCOS coreos-update-ca-trust: merge /etc/pki/ca-trust/source/anchors
DefaultDependencies=no
After=local-fs.target
Before=sysinit.target NetworkManager.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/bin/update-ca-trust extract

[Install]
WantedBy=sysinit.target
EOF
# RHCOS's chronyd reads /etc/chrony.conf; Debian's reads /etc/chrony/chrony.conf.
# As on RHCOS, the image has its own /etc/chrony.conf (Debian's defaults)
# before Ignition runs: the ISO appends the extra NTP sources to it.
# Debian's path is linked to it when the image is built: a link made by the
# unit at start fails, since Debian's chrony.service has ProtectSystem=full
# (/etc is read-only for it and for its ExecStartPre).
cp "$r/etc/chrony/chrony.conf" "$r/etc/chrony.conf"
ln -sf /etc/chrony.conf "$r/etc/chrony/chrony.conf"
# RHCOS has /run/media (udisks' mount root); the agent's next-step runner
# bind-mounts it into its container (assisted-installer-agent release-4.20
# src/commands/actions/next_step_runner.go: -v /run/media:/run/media:rw), and
# podman refuses a missing source. Debian's live system has none: create it
# at every boot, as RHCOS's tmpfiles do.
mkdir -p "$r/etc/tmpfiles.d"
printf 'd /run/media 0755 root root -\n' >"$r/etc/tmpfiles.d/rhcos-run-media.conf"
# RHCOS names the NICs in the initramfs (udev runs there), so their names
# are final when pre-network-manager-config.service rewrites the keyfiles for
# them. Here udev renames them in the real root: let that finish first.
mkdir -p "$r/etc/systemd/system/pre-network-manager-config.service.d"
cat >"$r/etc/systemd/system/pre-network-manager-config.service.d/live-fixture-udev.conf" <<'EOF'
[Unit]
Wants=systemd-udev-settle.service
After=systemd-udev-settle.service
# Under TCG on a loaded machine the script needs more than its 60 s.
[Service]
TimeoutSec=600
EOF
# RHEL 9's systemd defaults MACAddressPolicy to "none" (Debian's to
# "persistent", which gives a bond a MAC of its own): as on RHCOS, a bond
# takes the MAC of its first port.
mkdir -p "$r/etc/systemd/network/99-default.link.d"
printf '[Link]\nMACAddressPolicy=none\n' >"$r/etc/systemd/network/99-default.link.d/rhcos-mac-policy.conf"
# Container storage on its own tmpfs: the root is an overlay, and podman's
# overlay driver cannot stack on overlayfs. RHCOS live has the same need.
cat >"$r/etc/systemd/system/var-lib-containers.mount" <<'EOF'
[Unit]
Description=Container storage (tmpfs; the live root is an overlay)
DefaultDependencies=no
Before=local-fs.target

[Mount]
What=tmpfs
Where=/var/lib/containers
Type=tmpfs
Options=mode=0700,size=70%

[Install]
WantedBy=local-fs.target
EOF
# The lab's report: every 20 s, between LIVE-REPORT-BEGIN and
# LIVE-REPORT-END, the state the live test asserts on, on the second serial
# port (ttyS1), so that it never interleaves with the console on ttyS0.
cat >"$r/usr/local/sbin/live-report" <<'EOF'
#!/bin/bash
# agentiso live lab: prints the host's state on the serial console.
seq=0
# podman's own event lines, which would push the messages out of the tail
noise=' \(container\|image\|pod\) \(create\|init\|start\|attach\|died\|remove\|pull\|cleanup\|stop\) \|^$'
while :; do
  seq=$((seq + 1))
  {
    echo "LIVE-REPORT-BEGIN $seq"
    echo "HOSTNAME $(hostname)"
    echo "UPTIME $(cut -d' ' -f1 /proc/uptime)"
    echo "IPADDR $(ip -j -d addr 2>/dev/null | jq -c . 2>/dev/null)"
    systemctl list-units --all --no-legend --plain --type=service,mount 2>/dev/null |
      awk '{print "UNIT", $1, $2, $3, $4}'
    for u in $(systemctl list-units --state=failed --no-legend --plain 2>/dev/null | awk '{print $1}'); do
      echo "FAILED $u"
      journalctl -u "$u" --no-pager -o cat 2>/dev/null | grep -v "$noise" | tail -n 40 | sed "s|^|JOURNAL $u |"
    done
    # Units that failed and were restarted never show as failed: report
    # every restart count, and their journals.
    systemctl show -p Id -p NRestarts $(systemctl list-units --all --no-legend --plain --type=service 2>/dev/null | awk '{print $1}') 2>/dev/null |
      awk -F= '$1 == "Id" {id = $2} $1 == "NRestarts" && $2 > 0 {print id, $2}' | while read -r u n; do
      echo "RESTARTS $u $n"
      journalctl -u "$u" --no-pager -o cat 2>/dev/null | grep -v "$noise" | tail -n 40 | sed "s|^|JOURNAL $u |"
    done
    # what the containers printed (podman --log-driver=journald)
    for c in $(podman ps -a --format '{{.Names}}' 2>/dev/null); do
      journalctl CONTAINER_NAME="$c" --no-pager -n 15 -o cat 2>/dev/null | sed "s|^|CLOG $c |"
    done
    for u in set-hostname.service pre-network-manager-config.service node-zero.service agent.service \
      agent-register-cluster.service agent-register-infraenv.service apply-host-config.service \
      assisted-service.service start-cluster-installation.service NetworkManager.service; do
      journalctl -u "$u" --no-pager -n 6 -o cat 2>/dev/null | sed "s|^|LOG $u |"
    done
    podman images --digests --format '{{.Repository}}@{{.Digest}} {{.Tag}}' 2>/dev/null | sed 's/^/IMAGE /'
    podman ps -a --format '{{.Names}} {{.Status}} {{.Image}}' 2>/dev/null | sed 's/^/CONTAINER /'
    sed 's/^/STANDIN /' /var/log/rhcos-standin.log 2>/dev/null
    [ -f /etc/assisted/node0 ] && echo "NODE0 yes"
    echo "LIVE-REPORT-END $seq"
  } >/dev/ttyS1 2>&1
  sleep 20
done
EOF
chmod 0755 "$r/usr/local/sbin/live-report"
cat >"$r/etc/systemd/system/live-report.service" <<'EOF'
[Unit]
Description=agentiso live lab: state report on ttyS1
After=basic.target

[Service]
ExecStart=/usr/local/sbin/live-report
# The report must not slow down what it watches.
Nice=10
IOSchedulingClass=idle

[Install]
WantedBy=multi-user.target
EOF
# The whole journal, as it is written, on the third serial port (ttyS2): the
# test reads every message from it (pull errors, the journal of a unit that
# failed), not only what a report happened to catch.
cat >"$r/etc/systemd/system/live-journal.service" <<'EOF'
[Unit]
Description=agentiso live lab: the journal on ttyS2
DefaultDependencies=no
After=systemd-journald.service
Before=sysinit.target

[Service]
ExecStart=/bin/sh -c 'exec journalctl --boot --follow --no-pager --output=short-monotonic >/dev/ttyS2'
Restart=always

[Install]
WantedBy=sysinit.target
EOF

chroot "$r" /bin/bash -euo pipefail >"$work/customize.log" 2>&1 <<'EOF' || { cat "$work/customize.log" >&2; exit 1; }
useradd --create-home --uid 1000 --groups sudo --shell /bin/bash core
echo 'core ALL=(ALL) NOPASSWD: ALL' >/etc/sudoers.d/core
echo localhost >/etc/hostname
systemctl enable coreos-update-ca-trust.service var-lib-containers.mount live-report.service live-journal.service NetworkManager.service chrony.service
# RHCOS does not run these; here they would only fail or compete with NetworkManager.
systemctl mask systemd-networkd.service systemd-resolved.service iscsid.service iscsid.socket open-iscsi.service apt-daily.timer apt-daily-upgrade.timer e2scrub_reap.service systemd-timesyncd.service
systemctl set-default multi-user.target
rm -f /etc/machine-id /var/lib/dbus/machine-id
touch /etc/machine-id
apt-get clean
rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /usr/share/doc/* /usr/share/man/* /usr/share/locale/*
EOF
kver=$(basename "$(ls -d "$r"/lib/modules/* | head -n1)")
log "kernel $kver"

# ---------------------------------------------------------------- ISO tree
iso=$work/iso
mkdir -p "$iso"/{coreos,EFI/redhat,images/pxeboot,isolinux}
cp "$r/boot/vmlinuz-$kver" "$iso/images/pxeboot/vmlinuz"

# ---- initramfs
rd=$work/initramfs
mkdir -p "$rd"/{bin,dev,proc,sys,etc,tmp,run,iso,lower,rw,sysroot,lib/modules}
cp "$r/bin/busybox" "$rd/bin/busybox"
: >"$rd/modules.order"
# virtio_net: RHCOS brings the NICs up in the initramfs, so they exist when
# the real root's units start (set-hostname.sh looks for their MACs at once).
for m in isofs sr_mod ata_piix ahci virtio_blk virtio_scsi virtio_pci virtio_net loop squashfs overlay; do
  modprobe -S "$kver" -d "$r" --show-depends "$m" 2>/dev/null | awk '$1 == "insmod" {print $2}'
done | awk '!seen[$0]++' | while read -r ko; do
  ko=${ko#"$r"} # modprobe -d prints paths with or without the root prefix
  cp "$r$ko" "$rd/lib/modules/"
  echo "/lib/modules/$(basename "$ko")" >>"$rd/modules.order"
done
cat >"$rd/init" <<'EOF'
#!/bin/busybox sh
# agentiso live fixture initramfs (hack/build-live-fixture.sh).
/bin/busybox mkdir -p /bb
/bin/busybox --install -s /bb
export PATH=/bb
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
out=/dev/ttyS0
[ -c "$out" ] || out=/dev/console
say() { echo "LIVE-INITRD: $*" >"$out"; }
fail() { echo "LIVE-INITRD-FAILED: $*" >"$out"; sync; sleep 2; poweroff -f; }
dmesg -n 1
for ko in $(cat /modules.order); do
  insmod "$ko" >/tmp/insmod.log 2>&1 || grep -q 'File exists' /tmp/insmod.log || say "insmod $ko: $(cat /tmp/insmod.log)"
done
volid=$(sed -n 's/.*coreos\.liveiso=\([^ ]*\).*/\1/p' /proc/cmdline)
[ -n "$volid" ] || fail "no coreos.liveiso= karg"
# The ISO is the block device whose ISO 9660 volume ID (32 bytes at byte
# 32808) is $volid.
label() { dd if="$1" bs=1 skip=32808 count=32 2>/dev/null | tr -d ' '; }
found=
for i in $(seq 1 60); do
  for dev in /dev/sr* /dev/vd* /dev/sd*; do
    [ -b "$dev" ] || continue
    [ "$(label "$dev")" = "$volid" ] || continue
    mount -t iso9660 -o ro "$dev" /iso || continue
    found=$dev
    break 2
  done
  sleep 1
done
if [ -z "$found" ]; then
  say "block devices: $(cat /proc/partitions | tr '\n' ' ')"
  say "modules: $(cat /proc/modules | cut -d' ' -f1 | tr '\n' ' ')"
  for dev in /dev/sr* /dev/vd* /dev/sd*; do [ -b "$dev" ] && say "$dev label '$(label "$dev")'"; done
  fail "no device with volume ID $volid"
fi
say "live ISO $volid on $found"
[ -f /iso/images/pxeboot/rootfs.img ] || fail "images/pxeboot/rootfs.img missing"
# rootfs.img is a newc cpio whose first member, root.squashfs, starts at 124.
losetup -r -o 124 /dev/loop0 /iso/images/pxeboot/rootfs.img || fail "losetup rootfs.img"
mount -t squashfs -o ro /dev/loop0 /lower || fail "mount root.squashfs"
mount -t tmpfs -o mode=0755 tmpfs /rw || fail "mount tmpfs"
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay /sysroot || fail "mount overlay"
mkdir -p /sysroot/proc /sysroot/sys /sysroot/dev
for m in proc sys dev; do mount --bind /$m /sysroot/$m; done
if [ -f /config.ign ]; then
  say "config.ign $(wc -c </config.ign) bytes, running Ignition"
  mkdir -p /sysroot/run/agentiso-live
  cp /config.ign /sysroot/run/agentiso-live/config.ign
  for stage in fetch-offline files; do
    if ! chroot /sysroot /usr/bin/env PATH=/usr/sbin:/usr/bin:/sbin:/bin IGNITION_CONFIG_FILE=/run/agentiso-live/config.ign \
      /usr/lib/dracut/modules.d/30ignition/ignition --root=/ --platform=file --stage=$stage --log-to-stdout \
      >/tmp/ignition-$stage.log 2>&1; then
      # the messages only: the log also dumps the config, pull secret included
      grep -E '^(CRITICAL|ERROR|WARNING)|\[failed\]' /tmp/ignition-$stage.log | sed 's/^/LIVE-INITRD-IGNITION: /' >"$out"
      fail "ignition stage $stage failed"
    fi
    say "ignition stage $stage ok"
  done
  cp /tmp/ignition-*.log /sysroot/run/agentiso-live/ 2>/dev/null
  rm -f /sysroot/run/agentiso-live/config.ign
  # Ignition records enabled/disabled units as presets; RHCOS applies them
  # with systemctl preset on first boot. Apply exactly those.
  preset=/sysroot/etc/systemd/system-preset/20-ignition.preset
  if [ -f "$preset" ]; then
    while read -r verb unit; do
      case "$verb" in
        enable|disable)
          if [ -e "/sysroot/etc/systemd/system/$unit" ] || [ -e "/sysroot/lib/systemd/system/$unit" ]; then
            chroot /sysroot /usr/bin/env PATH=/usr/sbin:/usr/bin:/sbin:/bin systemctl "$verb" "$unit" >/tmp/systemctl.log 2>&1 ||
              fail "systemctl $verb $unit: $(cat /tmp/systemctl.log)"
            say "$verb $unit"
          else
            # RHCOS has it, this root filesystem does not (docs/e2e.md)
            say "MISSING-UNIT $unit ($verb)"
          fi ;;
      esac
    done <"$preset"
  fi
else
  say "no /config.ign"
fi
# RHCOS mounts the live ISO at /run/media/iso (its live generator's
# run-media-iso.mount), where upstream's scripts read it (the extended ISO's
# payload pieces, /run/media/iso/registry/data.iso.*). The same here, from
# the device found above.
mkdir -p /sysroot/etc/systemd/system/local-fs.target.wants
cat >/sysroot/etc/systemd/system/run-media-iso.mount <<UNIT
[Unit]
Description=The live ISO, mounted where RHCOS mounts it

[Mount]
What=$found
Where=/run/media/iso
Type=iso9660
Options=ro

[Install]
WantedBy=local-fs.target
UNIT
ln -sf ../run-media-iso.mount /sysroot/etc/systemd/system/local-fs.target.wants/run-media-iso.mount
tr -d '-' </proc/sys/kernel/random/uuid >/sysroot/etc/machine-id
for m in proc sys dev; do umount /sysroot/$m; done
say "switch_root to systemd"
exec switch_root /sysroot /sbin/init
EOF
chmod 0755 "$rd/init"
(cd "$rd" && find . | sort | cpio --quiet -o -H newc --reproducible -R 0:0) | gzip -n -6 >"$iso/images/pxeboot/initrd.img"
[ "$(wc -l <"$rd/modules.order")" -ge 4 ] || { echo "$0: too few initramfs modules found" >&2; exit 1; }
log "initramfs: $(stat -c %s "$iso/images/pxeboot/initrd.img") bytes, $(wc -l <"$rd/modules.order") modules"

# ---- root.squashfs inside rootfs.img (newc cpio, first member at offset 124)
rm -rf "$r/boot"/* # the kernel is on the ISO
mksquashfs "$r" "$work/root.squashfs" -comp zstd -Xcompression-level 6 -noappend -quiet >/dev/null
(cd "$work" && echo root.squashfs | cpio --quiet -o -H newc --reproducible -R 0:0) >"$iso/images/pxeboot/rootfs.img"
[ "$(dd if="$iso/images/pxeboot/rootfs.img" bs=1 skip=124 count=4 status=none)" = hsqs ] ||
  { echo "$0: root.squashfs is not at offset 124 of rootfs.img" >&2; exit 1; }
log "rootfs.img: $(stat -c %s "$iso/images/pxeboot/rootfs.img") bytes"

# ---- Ignition embed area, coreos/ metadata
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
karg_offset() {
  local f=$1 prefix line_start
  prefix=$(grep -m1 -F -- "$KARG_FIXED $KARG_DEFAULT" "$f" | sed "s|$KARG_DEFAULT\$||")
  line_start=$(grep -b -m1 -F -- "$KARG_FIXED $KARG_DEFAULT" "$f" | cut -d: -f1)
  echo $((line_start + ${#prefix}))
}
grub_off=$(karg_offset "$iso/EFI/redhat/grub.cfg")
isol_off=$(karg_offset "$iso/isolinux/isolinux.cfg")
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

# ---- bootloaders (isolinux for BIOS, GRUB for UEFI), fetched as .debs
debs=$work/debs
mkdir -p "$debs" "$work/pkgs"
(cd "$debs" && apt-get download -o APT::Sandbox::User=root isolinux syslinux-common grub-efi-amd64-bin >/dev/null) ||
  { apt-get update -o DPkg::Lock::Timeout=600 >/dev/null && (cd "$debs" && apt-get download -o APT::Sandbox::User=root isolinux syslinux-common grub-efi-amd64-bin >/dev/null); }
for d in "$debs"/*.deb; do dpkg-deb -x "$d" "$work/pkgs"; done
cp "$work/pkgs/usr/lib/ISOLINUX/isolinux.bin" "$iso/isolinux/"
cp "$work/pkgs/usr/lib/syslinux/modules/bios/ldlinux.c32" "$iso/isolinux/"
cat >"$work/early.cfg" <<'EOF'
search --no-floppy --file --set=root /EFI/redhat/grub.cfg
set prefix=($root)/EFI/redhat
configfile $prefix/grub.cfg
EOF
grub-mkimage -O x86_64-efi -d "$work/pkgs/usr/lib/grub/x86_64-efi" -o "$work/BOOTX64.EFI" \
  -p /EFI/redhat -c "$work/early.cfg" \
  normal configfile search search_fs_file search_label iso9660 fat part_gpt part_msdos \
  linux echo test serial terminal efi_gop all_video boot
efiimg=$iso/images/efiboot.img
head -c $((4 * 1024 * 1024)) /dev/zero >"$efiimg"
mformat -i "$efiimg" -v EFI-SYSTEM -N 12345678 ::
mmd -i "$efiimg" ::/EFI ::/EFI/BOOT
mcopy -i "$efiimg" -m "$work/BOOTX64.EFI" ::/EFI/BOOT/BOOTX64.EFI

# ---- master
find "$iso" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
mkdir -p "$dir"
tmpout=$out.tmp.$$
xorriso -report_about WARNING -as mkisofs -o "$tmpout" \
  -V "$VOLID" -volset "$VOLID" -iso-level 1 -R -J -joliet-long \
  -b isolinux/isolinux.bin -c isolinux/boot.cat -no-emul-boot -boot-load-size 4 -boot-info-table \
  -isohybrid-mbr "$work/pkgs/usr/lib/ISOLINUX/isohdpfx.bin" \
  -eltorito-alt-boot -e images/efiboot.img -no-emul-boot -isohybrid-gpt-basdat \
  "$iso"
ign_lba=$(xorriso -indev "$tmpout" -find /images/ignition.img -exec report_lba -- 2>/dev/null |
  awk -F, '/^File data lba:/{gsub(/ /,"",$2); print $2; exit}')
[ -n "$ign_lba" ] || { echo "$0: images/ignition.img not found in ISO" >&2; exit 1; }
[ "$(dd if="$tmpout" bs=2048 skip="$ign_lba" count=128 status=none | tr -d '\0' | wc -c)" -eq 0 ] ||
  { echo "$0: ignition area is not zero" >&2; exit 1; }
mv -f "$tmpout" "$out"
echo "$(($(date +%s) - start))" >"$dir/build-seconds"
log "live fixture: $out ($(stat -c %s "$out") bytes) in $(cat "$dir/build-seconds")s"
# keep the four newest recipes' fixtures (worktrees with other recipes share
# this cache; a hit touches its directory)
ls -td "$root"/*/ | grep -v '/build\.' | tail -n +5 | while read -r old; do
  [ "$old" = "$dir/" ] || rm -rf "$old"
done
echo "$out"
