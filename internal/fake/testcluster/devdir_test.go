package testcluster

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The hosts played joining are those of nodes-config.yaml, each with its
// first address and MAC; a host without a static address is refused,
// naming it; no file, no host.
func TestJoiningHosts(t *testing.T) {
	dir := t.TempDir()
	hosts, err := joiningHosts(dir)
	require.NoError(t, err)
	assert.Empty(t, hosts)

	host := func(name, mac, network string) string {
		return "- hostname: " + name + "\n  interfaces:\n  - name: eth0\n    macAddress: " + mac + "\n" + network
	}
	static := "  networkConfig:\n    interfaces:\n    - name: eth0\n      type: ethernet\n      state: up\n      mac-address: 52:54:00:00:00:31\n" +
		"      ipv4:\n        enabled: true\n        address: [{ip: 127.0.0.31, prefix-length: 8}]\n"
	write := func(doc string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "nodes-config.yaml"), []byte(doc), 0o644))
	}
	write("hosts:\n" + host("worker-1", "52:54:00:00:00:31", static))
	hosts, err = joiningHosts(dir)
	require.NoError(t, err)
	require.Len(t, hosts, 1)
	assert.Equal(t, "worker-1", hosts[0].Name)
	assert.Equal(t, "127.0.0.31", hosts[0].IP)
	assert.Equal(t, "52:54:00:00:00:31", hosts[0].MAC)

	write("hosts:\n" + host("worker-1", "52:54:00:00:00:31", static) + host("worker-2", "52:54:00:00:00:32", ""))
	_, err = joiningHosts(dir)
	assert.ErrorContains(t, err, `nodes-config.yaml: host "worker-2": give it a static 127.x address`)
}

// ServeDir writes the cluster's kubeconfig (0600) and serves until ctx is
// done.
func TestServeDir(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeDir(ctx, dir, time.Second, slog.New(slog.DiscardHandler)) }()
	kc := filepath.Join(dir, "kubeconfig")
	require.Eventually(t, func() bool { _, err := os.Stat(kc); return err == nil }, 30*time.Second, 20*time.Millisecond)
	fi, err := os.Stat(kc)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("ServeDir did not stop when its context was done")
	}
}
