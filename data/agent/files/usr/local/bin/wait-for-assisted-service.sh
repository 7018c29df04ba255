#!/bin/bash
# Blocks until the assisted-service REST API answers.
set -uo pipefail

# shellcheck source=/dev/null
source /usr/local/bin/common.sh

until curl_assisted_service /infra-envs GET --fail --output /dev/null 2>/dev/null; do
	echo "Waiting for assisted-service at ${SERVICE_BASE_URL}"
	sleep 5
done
echo "assisted-service is up"
