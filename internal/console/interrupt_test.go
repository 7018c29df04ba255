package console

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The first signal cancels the context; the grace period then ends in
// force. Stopped, the watch calls force no more.
func TestCancelOnInterrupt(t *testing.T) {
	forced := make(chan struct{}, 1)
	ctx, stop := CancelOnInterrupt(context.Background(), 50*time.Millisecond, func() { forced <- struct{}{} })
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGTERM))
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the signal did not cancel the context")
	}
	select {
	case <-forced:
	case <-time.After(5 * time.Second):
		t.Fatal("force was not called after the grace period")
	}
	stop()

	ctx, stop = CancelOnInterrupt(context.Background(), time.Millisecond, func() { forced <- struct{}{} })
	stop()
	assert.Error(t, ctx.Err(), "stop cancels the context")
	time.Sleep(20 * time.Millisecond)
	assert.Empty(t, forced)
}

// Issue 37 item 15: after Ctrl-C, the images kept from an earlier run are
// named (the message says they hold that run's inputs).
func TestEarlierImages(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for _, n := range []string{"agent.x86_64.iso", "node.x86_64.iso", "base.iso"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), nil, 0o600))
		require.NoError(t, os.Chtimes(filepath.Join(dir, n), old, old))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agentconfig.noarch.iso"), nil, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o600))
	assert.Equal(t, []string{"agent.x86_64.iso", "node.x86_64.iso"}, EarlierImages(dir, time.Now().Add(-time.Minute)), "not the user's base ISO, not one this run wrote")
	assert.Nil(t, EarlierImages(t.TempDir(), time.Now()))
}
