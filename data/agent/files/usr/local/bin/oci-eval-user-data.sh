#!/bin/bash
# On Oracle Cloud Infrastructure, runs the script passed as the instance's
# user data (base64, from the instance metadata service) with bash. Does
# nothing on any other machine or when the instance has no user data.
set -euo pipefail
tag_file=${OCI_CHASSIS_TAG_FILE:-/sys/class/dmi/id/chassis_asset_tag}
metadata_url=${OCI_USER_DATA_URL:-http://169.254.169.254/opc/v2/instance/metadata/user_data}
tag=""
if [ -r "${tag_file}" ]; then
	tag=$(tr -d '[:space:]' <"${tag_file}")
fi
if [ "${tag}" != "OracleCloud.com" ]; then
	echo "Not an Oracle Cloud instance (chassis asset tag '${tag}'); nothing to do"
	exit 0
fi
body=$(mktemp)
script=$(mktemp)
trap 'rm -f "${body}" "${script}"' EXIT
if ! code=$(curl --silent --show-error --location --max-time 30 --retry 5 --retry-delay 30 \
	--retry-connrefused --header "Authorization: Bearer Oracle" \
	--output "${body}" --write-out '%{http_code}' "${metadata_url}"); then
	echo "Reading the instance user data from ${metadata_url} failed" >&2
	exit 1
fi
case "${code}" in
200) ;;
404)
	echo "The instance has no user data"
	exit 0
	;;
*)
	echo "Reading the instance user data returned HTTP ${code}" >&2
	exit 1
	;;
esac
if ! base64 --decode <"${body}" >"${script}"; then
	echo "The instance user data is not base64" >&2
	exit 1
fi
echo "Running the instance user data script"
bash "${script}"
