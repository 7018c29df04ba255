#!/bin/bash
# Helpers shared by the agent scripts; source this file.
#
# curl_assisted_service ENDPOINT [METHOD [CURL ARGS...]]
#   calls ${SERVICE_BASE_URL}api/assisted-install/v2ENDPOINT with the user
#   token in the Authorization header (raw JWT, no "Bearer") and prints the
#   response body. Extra arguments go to curl before the URL.
#
# get_assisted_service ENDPOINT
#   GETs ENDPOINT and sets ANSWER_CODE (the HTTP status; 000 when nothing
#   answered) and ANSWER_BODY. Never fails: the caller looks at the code.
#
# say_once MESSAGE
#   prints MESSAGE on stderr unless it is the one say_once printed last: an
#   error answer that does not go away by waiting is said once per change.
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

get_assisted_service() {
	local answer
	answer=$(curl_assisted_service "$1" GET --write-out '\n%{http_code}' 2>/dev/null) || true
	ANSWER_CODE=${answer##*$'\n'}
	ANSWER_BODY=${answer%$'\n'*}
	[ "${ANSWER_BODY}" = "${answer}" ] && ANSWER_BODY=""
	[ -n "${ANSWER_CODE}" ] || ANSWER_CODE=000
}

SAID_LAST=""
say_once() {
	if [ "$1" != "${SAID_LAST}" ]; then
		echo "$1" >&2
		SAID_LAST=$1
	fi
}

# answer_said: the message for an error answer of get_assisted_service.
answer_said() {
	echo "assisted-service at ${SERVICE_BASE_URL} answered HTTP ${ANSWER_CODE}: $(printf '%s' "${ANSWER_BODY}" | tr -d '\r' | tr '\n' ' ' | head -c 400)"
}
