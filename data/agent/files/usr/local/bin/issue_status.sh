#!/bin/bash
# Console status lines; source this file.
#
# set_issue NAME MESSAGE   shows MESSAGE on the login console (and in
#                          /etc/issue.d/NAME.issue) until cleared
# clear_issue NAME         removes it again
#
# AGENT_ROOT prefixes every path (for tests).

issue_dir=${AGENT_ROOT:-}/etc/issue.d

set_issue() {
	local name=$1
	local message=$2
	local file="${issue_dir}/${name}.issue"
	mkdir -p "${issue_dir}"
	if [ -f "${file}" ] && [ "$(cat "${file}")" = "${message}" ]; then
		return 0
	fi
	printf '%s\n' "${message}" >"${file}"
	agetty --reload 2>/dev/null || true
}

clear_issue() {
	local file="${issue_dir}/$1.issue"
	if [ -f "${file}" ]; then
		rm -f "${file}"
		agetty --reload 2>/dev/null || true
	fi
}
