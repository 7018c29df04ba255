#!/bin/bash
# Installs this host's static network configuration before NetworkManager
# starts.
#
# /etc/assisted/network/host<N>/ holds NetworkManager keyfiles written for
# the logical NIC names of one host, plus mac_interface.ini with lines
# "<MAC>=<logical name>". Every directory that lists a MAC address present on
# this machine is selected; its keyfiles are renamed and rewritten from the
# logical names to this machine's kernel interface names, then copied into
# NetworkManager's connection directory (replacing what is there).
set -euo pipefail

# The PRE_NM_* variables exist for tests; the service never sets them.
network_dir=${PRE_NM_NETWORK_DIR:-/etc/assisted/network}
sys_class_net=${PRE_NM_SYS_CLASS_NET:-/sys/class/net}
if [ -n "${PRE_NM_TARGET_DIR:-}" ]; then
	target_dir=${PRE_NM_TARGET_DIR}
elif [ -f /etc/initrd-release ]; then
	target_dir=/etc/coreos-firstboot-network
else
	target_dir=/etc/NetworkManager/system-connections
fi

if [ ! -d "${network_dir}" ]; then
	echo "No static network configuration in ${network_dir}"
	exit 0
fi

# Upper-case MAC -> kernel interface name, for this machine.
declare -A nic_by_mac=()
for dev in "${sys_class_net}"/*; do
	name=$(basename "${dev}")
	if [ "${name}" = lo ] || [ ! -r "${dev}/address" ]; then
		continue
	fi
	mac=$(tr '[:lower:]' '[:upper:]' <"${dev}/address")
	if [ -n "${mac}" ]; then
		nic_by_mac["${mac}"]=${name}
	fi
done

# rewrite_values FILE: replaces every value that is a logical NIC name, or
# starts with "<logical name>.", by the kernel name (one pass, so names that
# are swapped between logical and kernel are not rewritten twice).
declare -A rename=()
declare -A vlan_rename=()
rewrite_values() {
	local file=$1 line key value head rest out
	out=$(mktemp)
	while IFS= read -r line || [ -n "${line}" ]; do
		if [[ "${line}" == *=* ]] && [[ "${line}" != \#* ]] && [[ "${line}" != \[* ]]; then
			key=${line%%=*}
			value=${line#*=}
			head=${value%%.*}
			if [ -n "${rename[${head}]+x}" ]; then
				rest=${value:${#head}}
				value="${rename[${head}]}${rest}"
				if [ -n "${vlan_rename[${value}]+x}" ]; then
					value=${vlan_rename[${value}]}
				fi
				line="${key}=${value}"
			fi
		fi
		printf '%s\n' "${line}" >>"${out}"
	done <"${file}"
	cat "${out}" >"${file}"
	rm -f "${out}"
}

collected=$(mktemp -d)
trap 'rm -rf "${collected}"' EXIT
found=false

for host_dir in "${network_dir}"/host*/; do
	ini="${host_dir}mac_interface.ini"
	[ -f "${ini}" ] || continue
	compgen -G "${host_dir}*.nmconnection" >/dev/null || continue

	rename=()
	vlan_rename=()
	while IFS= read -r entry || [ -n "${entry}" ]; do
		[ -n "${entry}" ] || continue
		mac=${entry%%=*}
		mac=${mac^^}
		logical=${entry#*=}
		if [ -n "${nic_by_mac[${mac}]+x}" ]; then
			rename["${logical}"]=${nic_by_mac[${mac}]}
		fi
	done <"${ini}"
	if [ "${#rename[@]}" -eq 0 ]; then
		continue
	fi
	echo "Using ${host_dir} (matched NICs: ${!rename[*]})"
	found=true

	work=$(mktemp -d)
	for src in "${host_dir}"*.nmconnection; do
		base=$(basename "${src}")
		head=${base%%.*}
		dest=${base}
		if [ -n "${rename[${head}]+x}" ]; then
			nic=${rename[${head}]}
			rest=${base:${#head}}
			dest="${nic}${rest}"
			# A VLAN file "<nic>.<id>.nmconnection": keep "<nic>.<id>" within
			# the kernel's 15 character interface name limit.
			vlan=${rest#.}
			vlan=${vlan%.nmconnection}
			if [[ "${vlan}" =~ ^[0-9]+$ ]] && [ $((${#nic} + 1 + ${#vlan})) -gt 15 ]; then
				short="${nic:0:$((15 - 1 - ${#vlan}))}.${vlan}"
				vlan_rename["${nic}.${vlan}"]=${short}
				dest="${short}.nmconnection"
			fi
		fi
		install -m 0600 "${src}" "${work}/${dest}"
	done
	for file in "${work}"/*; do
		rewrite_values "${file}"
		name=$(basename "${file}")
		if [ -e "${collected}/${name}" ]; then
			echo "Error: connection file name ${name} is already in use" >&2
			exit 1
		fi
		mv "${file}" "${collected}/${name}"
	done
	rmdir "${work}"
done

if [ "${found}" != true ]; then
	echo "No matching host directories found"
	exit 0
fi

mkdir -p "${target_dir}"
rm -f "${target_dir:?}"/*
cp -p "${collected}"/* "${target_dir}/"
echo "Installed $(find "${collected}" -type f | wc -l) connection file(s) into ${target_dir}"
