#!/bin/busybox sh
# agentiso boot fixture's /init (every architecture; hack/build-boot-fixture.sh
# and hack/build-arch-fixture.sh put it in the fixture's initramfs): report
# what the kernel unpacked, then power off.
# The initramfs also holds /fixture-console (the serial device the report
# goes to: ttyS0, ttyAMA0, hvc0, or console for the kernel's console),
# /fixture-manifest (its own paths) and /lib/modules/net/ (the NIC driver
# modules, loaded in the order of /lib/modules/net/order, for
# coreos.live.rootfs_url=).
/bin/busybox mkdir -p /tmp/bb
/bin/busybox --install -s /tmp/bb
export PATH=/tmp/bb
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
dmesg -n 1
out=/dev/$(cat /fixture-console)
[ -c "$out" ] || out=/dev/console
# Runtime files live under /tmp/fixture (left out of the PATH lines).
mkdir -p /tmp/fixture
# fetch_rootfs URL: bring up the first NIC with DHCP and download URL (what
# RHCOS's initramfs does for coreos.live.rootfs_url=); prints why on failure.
fetch_rootfs() {
  for m in $(cat /lib/modules/net/order); do
    insmod "/lib/modules/net/$m" 2>/tmp/fixture/insmod.log || { echo "insmod $m: $(cat /tmp/fixture/insmod.log)"; return 1; }
  done
  ip link set lo up
  nic=
  for i in 1 2 3 4 5 6 7 8 9 10; do
    for d in /sys/class/net/*; do
      [ "${d##*/}" = lo ] || { nic=${d##*/}; break 2; }
    done
    sleep 1
  done
  [ -n "$nic" ] || { echo "no network interface"; return 1; }
  ip link set "$nic" up
  udhcpc -i "$nic" -s /udhcpc.script -n -q -t 10 -T 2 >/tmp/fixture/udhcpc.log 2>&1 ||
    { echo "no DHCP lease on $nic: $(tail -n 3 /tmp/fixture/udhcpc.log | tr '\n' ' ')"; return 1; }
  # (busybox 1.35 wget crashes with -T: timeout bounds it instead)
  timeout 120 wget -q -O /tmp/fixture/rootfs.img "$1" >/tmp/fixture/wget.log 2>&1 ||
    { echo "wget $1: $(tr '\n' ' ' </tmp/fixture/wget.log)"; return 1; }
}
rootfs_url=$(sed -n 's/.*coreos\.live\.rootfs_url=\([^ ]*\).*/\1/p' /proc/cmdline)
rootfs_line=
if [ -n "$rootfs_url" ]; then
  if why=$(fetch_rootfs "$rootfs_url"); then
    rootfs_line="ROOTFS-SHA256 $(sha256sum /tmp/fixture/rootfs.img | cut -d' ' -f1) $(wc -c </tmp/fixture/rootfs.img)"
  else
    rootfs_line="ROOTFS-FETCH-FAILED $why"
  fi
  rm -f /tmp/fixture/rootfs.img
fi
{
  # (a newline first: the marker must start a line, and the kernel may have
  # left one unfinished on this console)
  echo
  echo "AGENTISO-E2E-BEGIN"
  [ -z "$rootfs_line" ] || echo "$rootfs_line"
  if [ -f /config.ign ]; then
    echo "IGNITION-SHA256 $(sha256sum /config.ign | cut -d' ' -f1)"
  else
    echo "IGNITION-ABSENT"
  fi
  # Every path the initrds added on top of this initramfs.
  find / -xdev | grep -v -e '^/tmp/bb' -e '^/tmp/fixture' | sort | grep -Fxv -f /fixture-manifest | while read -r p; do
    if [ -L "$p" ]; then
      echo "PATH L $p"
    elif [ -d "$p" ]; then
      echo "PATH D $p"
    elif [ -f "$p" ]; then
      echo "PATH F $p $(wc -c <"$p") $(sha256sum "$p" | cut -d' ' -f1)"
    else
      echo "PATH O $p"
    fi
  done
  echo "CMDLINE $(cat /proc/cmdline)"
  dmesg | grep -iE 'initramfs|initrd|unpack' | grep -iv 'command line' | sed 's/^/DMESG /'
  if dmesg | grep -qiE 'Initramfs unpacking failed|rootfs image is not initramfs'; then
    echo "UNPACK-FAILED"
  fi
  echo "AGENTISO-E2E-END"
} >"$out" 2>&1
sync
poweroff -f
