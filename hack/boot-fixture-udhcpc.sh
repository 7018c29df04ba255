#!/bin/busybox sh
# udhcpc hook of the boot fixture's /init: configure the leased address and
# the default route.
case "$1" in
bound | renew)
  ifconfig "$interface" "$ip" netmask "${subnet:-255.255.255.0}" up
  [ -z "$router" ] || route add default gw "${router%% *}" dev "$interface"
  ;;
esac
exit 0
