#!/bin/bash
# Blocks until the assisted-service REST API answers. An answer that is an
# error (a refused token, a failing database) is printed with the service's
# message, once per change: it will not go away by waiting, and without it
# the journal would only say "Waiting".
set -uo pipefail

# shellcheck source=/dev/null
source "${AGENT_ROOT:-}/usr/local/bin/common.sh"

last=""
while true; do
	answer=$(curl_assisted_service /infra-envs GET --write-out '\n%{http_code}' 2>/dev/null)
	code=${answer##*$'\n'}
	body=${answer%$'\n'*}
	[ "${body}" = "${answer}" ] && body=""
	case "${code}" in
	2??)
		echo "assisted-service is up"
		exit 0
		;;
	[1-5]??)
		said="assisted-service at ${SERVICE_BASE_URL} answered HTTP ${code}: $(printf '%s' "${body}" | tr -d '\r' | tr '\n' ' ' | head -c 400)"
		if [ "${said}" != "${last}" ]; then
			echo "${said}" >&2
			last=${said}
		fi
		;;
	*)
		echo "Waiting for assisted-service at ${SERVICE_BASE_URL}"
		;;
	esac
	sleep 5
done
