package nodejoin

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

// WatcherTokens reads the watcher token file node-image create keeps in
// --dir: one token per line, the newest ISO's first, then those of the
// earlier ISOs written in the same directory that had not expired then (a
// host may still run one of them).
func WatcherTokens(b []byte) []string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// KeptWatcherTokens are the tokens of old (the watcher token file's
// contents before a new ISO is written) to keep beside the new one: those
// not expired at now and not equal to newest, at most max of them, the
// newest first.
func KeptWatcherTokens(old []byte, newest string, now time.Time, max int) []string {
	var out []string
	for _, t := range WatcherTokens(old) {
		if t == newest || len(out) == max {
			continue
		}
		if exp, ok := tokenExpiry(t); ok && !now.Before(exp) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// tokenFallback reads a host's own assisted-service with the first of its
// clients (one per watcher token, the newest first) that the service does
// not refuse (401), and keeps to that one: a host booted from an earlier
// node ISO of the same directory answers only that ISO's token.
type tokenFallback struct {
	clients []AgentAPI
	cur     int
}

func (t *tokenFallback) ListClusters(ctx context.Context) ([]rendezvous.Cluster, error) {
	for {
		c, err := t.clients[t.cur].ListClusters(ctx)
		if t.next(err) {
			continue
		}
		return c, err
	}
}

func (t *tokenFallback) GetCluster(ctx context.Context, id string) (*rendezvous.Cluster, error) {
	for {
		c, err := t.clients[t.cur].GetCluster(ctx, id)
		if t.next(err) {
			continue
		}
		return c, err
	}
}

// next moves to the next token after a 401, when there is one.
func (t *tokenFallback) next(err error) bool {
	var se *rendezvous.StatusError
	if errors.As(err, &se) && se.StatusCode == 401 && t.cur+1 < len(t.clients) {
		t.cur++
		return true
	}
	return false
}
