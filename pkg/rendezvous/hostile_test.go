package rendezvous

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flappingEvents answers ListEvents with a long list and a one-event list in
// turn, as a hostile rendezvous API did: every time the list grows again,
// its tail is "new" again.
type flappingEvents struct {
	*world
	long  []Event
	calls int
}

func (f *flappingEvents) ListEvents(ctx context.Context, id string) ([]Event, error) {
	f.calls++
	if f.calls%2 == 1 {
		return f.long, nil
	}
	return f.long[:1], nil
}

// Rule: what the waiter keeps from the events it saw is bounded, however
// often a hostile API makes the same list look new.
func TestWaiterKeepsABoundedEventHistory(t *testing.T) {
	c := newFakeClock()
	w := newWorld(c, step{0, restUp}, step{0, status(ClusterInstalling)})
	long := make([]Event, MaxKeptEvents+1000)
	for i := range long {
		long[i] = Event{Severity: "info", Message: strings.Repeat("m", 4<<10), EventTime: c.Now()}
	}
	f := &flappingEvents{world: w, long: long}
	r := &recordReporter{}
	wt := NewWaiter(Options{REST: f, Kube: w, Reporter: r, Clock: c, BootstrapTimeout: 40 * DefaultPollInterval})
	require.Error(t, wt.WaitForBootstrapComplete(context.Background()))
	require.Greater(t, f.calls, 20, "the API was polled often enough for the history to grow")
	assert.LessOrEqual(t, len(wt.events), MaxKeptEvents)
	kept := 0
	for _, e := range wt.events {
		kept += len(e.Message)
	}
	assert.LessOrEqual(t, kept, MaxKeptEvents*(maxKeptEventMessage+len("...")), "kept messages are cut")
}

// Rule: validation state is kept only for what the last answer holds; a
// host renamed on every poll does not pile up entries.
func TestWaiterForgetsValidationsOfVanishedHosts(t *testing.T) {
	c := newFakeClock()
	w := newWorld(c, step{0, restUp}, step{0, status(ClusterInsufficient)})
	vi, err := EncodeValidations([]Validation{{Category: "network", ID: "ntp-synced", Status: ValidationFailure, Message: "no ntp"}})
	require.NoError(t, err)
	n := 0
	for i := 1; i <= 30; i++ {
		w.steps = append(w.steps, step{time.Duration(i) * DefaultPollInterval, func(w *world) {
			n++
			w.cluster.Hosts = []Host{{ID: fmt.Sprintf("h-%d", n), Status: "insufficient", ValidationsInfo: vi}}
		}})
	}
	r := &recordReporter{}
	wt := newTestWaiter(w, c, r, func(o *Options) { o.BootstrapTimeout = 30 * DefaultPollInterval })
	require.Error(t, wt.WaitForBootstrapComplete(context.Background()))
	require.Greater(t, n, 20)
	assert.LessOrEqual(t, len(wt.validations), 1)

	p := NewPlainReporter(io.Discard, 0)
	for i := range 100 {
		p.Hosts([]HostRow{{Name: fmt.Sprintf("h-%d", i)}})
	}
	assert.LessOrEqual(t, len(p.last), 1, "the plain reporter keeps only the last answer's hosts")
}

func hostileServer(t *testing.T, body func(w io.Writer)) *Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { body(w) }))
	t.Cleanup(srv.Close)
	c, err := NewClient(srv.URL+APIPath, "t", 30*time.Second, nil)
	require.NoError(t, err)
	return c
}

// Rule: an answer with more JSON objects than any real one is refused
// before it is decoded (2 MiB of `{}` decodes into ~100 MB of events).
func TestClientRefusesAnswerWithTooManyObjects(t *testing.T) {
	c := hostileServer(t, func(w io.Writer) {
		var b bytes.Buffer
		b.WriteString("[{}")
		for b.Len() < 2<<20 {
			b.WriteString(",{}")
		}
		b.WriteString("]")
		_, _ = w.Write(b.Bytes())
	})
	evs, err := c.ListEvents(context.Background(), "ie")
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("more than %d JSON objects and arrays", MaxAnswerObjects))
	assert.Empty(t, evs)
}

// Rule: an answer larger than MaxAnswerBytes is an error, not silently cut.
func TestClientRefusesOversizedAnswer(t *testing.T) {
	c := hostileServer(t, func(w io.Writer) {
		_, _ = io.WriteString(w, `[{"message":"`)
		chunk := bytes.Repeat([]byte("a"), 1<<20)
		for i := 0; i <= MaxAnswerBytes>>20; i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		_, _ = io.WriteString(w, `"}]`)
	})
	_, err := c.ListEvents(context.Background(), "ie")
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("larger than %d MiB", MaxAnswerBytes>>20))
}

// Rule: validations_info, JSON inside a JSON string, is bounded the same way.
func TestParseValidationsRefusesTooManyObjects(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"network":[{}`)
	for range MaxAnswerObjects {
		b.WriteString(",{}")
	}
	b.WriteString("]}")
	_, err := ParseValidations(b.String())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "JSON objects and arrays")
}
