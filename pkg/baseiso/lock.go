package baseiso

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// lockPoll is how often a waiting run retries the lock.
const lockPoll = 100 * time.Millisecond

// acquireLock takes the lock file at path, waiting at most timeout for
// another run to release it. It logs once when it has to wait.
func acquireLock(ctx context.Context, path string, timeout time.Duration, log *slog.Logger) (func(), error) {
	deadline := time.Now().Add(timeout)
	waiting := false
	for {
		release, ok, err := tryLock(path)
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
