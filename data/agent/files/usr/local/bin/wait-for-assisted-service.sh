#!/bin/bash
# Blocks until the assisted-service REST API answers. An answer that is an
# error (a refused token, a failing database) is printed with the service's
# message, once per change: it will not go away by waiting, and without it
# the journal would only say "Waiting".
set -uo pipefail

# shellcheck source=/dev/null
source "${AGENT_ROOT:-}/usr/local/bin/common.sh"

while true; do
	get_assisted_service /infra-envs
	case "${ANSWER_CODE}" in
	2??)
		echo "assisted-service is up"
		exit 0
		;;
	[1-5]??)
		say_once "$(answer_said)"
		;;
	*)
		echo "Waiting for assisted-service at ${SERVICE_BASE_URL}"
		;;
	esac
	sleep 5
done
