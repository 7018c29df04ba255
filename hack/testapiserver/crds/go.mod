// The OpenShift CRDs the tests load into the real API server
// (hack/build-testapiserver.sh): the openshift/api that assisted-service
// release-4.23 vendors (its vendor/modules.txt), from the module proxy.
module agentiso.invalid/testapiserver/crds

go 1.26.0

require github.com/openshift/api v0.0.0-20251203133830-85216507eada
