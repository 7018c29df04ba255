#!/bin/bash
# Helpers shared by the agent scripts; source this file.
#
# curl_assisted_service ENDPOINT [METHOD [CURL ARGS...]]
#   calls ${SERVICE_BASE_URL}api/assisted-install/v2ENDPOINT with the user
#   token in the Authorization header (raw JWT, no "Bearer") and prints the
#   response body. Extra arguments go to curl before the URL.
#
# AGENT_ROOT prefixes every path (for tests).

if [ -z "${SERVICE_BASE_URL:-}" ] && [ -f "${AGENT_ROOT:-}/etc/assisted/rendezvous-host.env" ]; then
	# shellcheck source=/dev/null
	source "${AGENT_ROOT:-}/etc/assisted/rendezvous-host.env"
fi

curl_assisted_service() {
	local endpoint=$1
	local method=${2:-GET}
	if [ $# -ge 2 ]; then
		shift 2
	else
		shift
	fi
	curl --silent --show-error --max-time 30 \
		--request "${method}" \
		--header "Authorization: ${USER_AUTH_TOKEN:-}" \
		--header "Content-Type: application/json" \
		--header "Accept: application/json" \
		"$@" \
		"${SERVICE_BASE_URL}api/assisted-install/v2${endpoint}"
}
