#!/bin/bash
# Sets the hostname from /etc/assisted/hostnames/<mac> when one of this
# host's MAC addresses has an entry there.
#
# hostnamectl asks systemd-hostnamed over D-Bus, which systemd starts on
# the first request; on a host still busy booting that request can time
# out ("Could not set pretty hostname: Connection timed out"), which once
# failed the whole unit on a slow host. So hostnamectl is tried several
# times, and if it never answers the static hostname is written to
# /etc/hostname and the running one set with hostname(1), neither of which
# needs D-Bus. AGENT_ROOT prefixes every path (for tests);
# SET_HOSTNAME_TRIES and SET_HOSTNAME_PAUSE (seconds) bound the retries.
set -euo pipefail

root=${AGENT_ROOT:-}
tries=${SET_HOSTNAME_TRIES:-6}
pause=${SET_HOSTNAME_PAUSE:-5}

cat >"${root}/etc/motd" <<'MOTD'
The primary service is agent.service. To watch its status, run:
  sudo journalctl -u agent.service -f
MOTD
mkdir -p "${root}/etc/motd.d"
echo "Waiting for network..." >"${root}/etc/motd.d/60-rendezvous-host"

hostnames_dir=${root}/etc/assisted/hostnames
if [ ! -d "${hostnames_dir}" ]; then
	exit 0
fi

# set_hostname NAME: hostnamectl, retried; then without D-Bus.
set_hostname() {
	local name=$1 attempt
	for ((attempt = 1; attempt <= tries; attempt++)); do
		if hostnamectl set-hostname "${name}"; then
			return 0
		fi
		echo "hostnamectl set-hostname ${name} failed (attempt ${attempt} of ${tries})" >&2
		if [ "${attempt}" -lt "${tries}" ]; then
			sleep "${pause}"
		fi
	done
	echo "systemd-hostnamed did not answer: writing /etc/hostname and setting the running hostname directly" >&2
	local tmp
	tmp=$(mktemp "${root}/etc/.hostname.XXXXXX")
	printf '%s\n' "${name}" >"${tmp}"
	chmod 0644 "${tmp}"
	mv -f "${tmp}" "${root}/etc/hostname"
	hostname "${name}"
}

for mac in $(ip -j link | jq -r '.[].address // empty' | tr '[:upper:]' '[:lower:]'); do
	file="${hostnames_dir}/${mac}"
	if [ -f "${file}" ]; then
		name=$(tr -d '[:space:]' <"${file}")
		if [ -n "${name}" ]; then
			echo "Setting hostname to ${name} (MAC ${mac})"
			set_hostname "${name}"
			exit 0
		fi
	fi
done
echo "No hostname configured for this host's MAC addresses"
