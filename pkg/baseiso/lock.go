package baseiso

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// lockPoll is how often a waiting run retries the lock.
const lockPoll = 100 * time.Millisecond

// heldLock is a lock on a cached ISO's lock file.
type heldLock struct {
	release func()
	// downgrade turns an exclusive lock into a shared one; nil where
	// locks cannot be shared.
	downgrade func() error
}

// acquireLock takes the lock file at path, shared or exclusive, waiting at
// most timeout for other runs to release a conflicting lock. It logs once
// when it has to wait.
func acquireLock(ctx context.Context, path string, timeout time.Duration, log *slog.Logger, shared bool) (*heldLock, error) {
	deadline := time.Now().Add(timeout)
	waiting := false
	for {
		release, ok, err := tryLock(path, shared)
		if err != nil {
			return nil, err
		}
		if ok {
			if waiting {
				log.Info("Lock acquired", "lock", path)
			}
			return release, nil
		}
		if !waiting {
			waiting = true
			log.Info("Another agentiso run is fetching the base ISO; waiting for it", "lock", path, "timeout", timeout.String())
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("timed out after %s waiting for lock %s held by another agentiso run; wait for it to finish, or remove the lock file if no other run is active", timeout, path)
		}
		t := time.NewTimer(lockPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("waiting for lock %s: %w", path, ctx.Err())
		case <-t.C:
		}
	}
}
