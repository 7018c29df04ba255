package rendezvoussim

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
)

// ServeDir serves a directory written by WriteDevDir on the addresses it
// recorded, and says where and, when stopped, how much it answered.
func TestServeDir(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, WriteDevDir(DevDirOptions{Dir: dir, RendezvousIP: "127.0.0.1", ClusterName: "ocp", BaseDomain: "example.com", Local: true}))
	ds, err := agent.ReadDevSim(dir)
	require.NoError(t, err)
	sc, err := Builtin("sno-happy")
	require.NoError(t, err)
	cfg, err := ConfigForDir(dir, DirOptions{Scenario: sc, Speed: 1})
	require.NoError(t, err)
	assert.Equal(t, ds.RESTAddr, cfg.RESTAddr)
	assert.Equal(t, ds.KubeAddr, cfg.KubeAddr)
	assert.Equal(t, "ocp", cfg.ClusterName)
	assert.Equal(t, "example.com", cfg.BaseDomain)

	var logs bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	require.NoError(t, ServeDir(ctx, dir, DirOptions{Scenario: sc, Speed: 1, Log: slog.New(slog.NewTextHandler(&logs, nil))}))
	assert.Contains(t, logs.String(), `msg=simulating scenario=sno-happy`)
	assert.Contains(t, logs.String(), `msg="simulator stopped" requests=0 denied=0`)
}

// Simulate refuses a speed that is not positive and a scenario that is
// neither a file nor a built-in name, before serving anything.
func TestSimulateRefusals(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, WriteDevDir(DevDirOptions{Dir: dir, RendezvousIP: "127.0.0.1", ClusterName: "ocp", BaseDomain: "example.com", Local: true}))
	assert.EqualError(t, Simulate(context.Background(), dir, "sno-happy", DirOptions{Speed: 0}), "--speed must be greater than zero")
	assert.Error(t, Simulate(context.Background(), dir, "no-such-scenario", DirOptions{Speed: 1}))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	assert.NoError(t, Simulate(ctx, dir, "sno-happy", DirOptions{Speed: 1, Log: slog.New(slog.DiscardHandler)}))
}
