// Package upstream runs the real assisted-service and agent-installer client of one upstream branch on the test host (make e2e-upstream, docs/e2e.md), and the real assisted-service's controllers against a real kube-apiserver (make e2e-hub, docs/hub.md).
//
// The binaries come from hack/build-upstream.sh (sources pinned in
// upstream.lock). The helpers here read the lock file, the env files and
// units of an Ignition config agentiso wrote, and start PostgreSQL and the
// service on loopback; the oracle itself is oracle_test.go, built with the
// upstream tag. hub.go applies manifests to an API server as kubectl apply
// does and reads back the controllers' conditions, for hub_test.go.
package upstream
