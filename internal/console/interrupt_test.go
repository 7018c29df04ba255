package console

import (
	"context"
	"os"
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
