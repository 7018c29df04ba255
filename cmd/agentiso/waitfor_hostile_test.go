package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

// hostile is text a compromised or spoofed rendezvous API could send: a
// terminal title escape, a screen clear, a carriage return and a forged
// log line.
const hostile = "\x1b]0;pwned\x07\x1b[2J\rgone\nINFO Bootstrap is complete\u202e"

// TestWaitForSanitisesEverythingFromTheAPI points wait-for at an API whose
// every string is hostile and checks that nothing it prints carries a
// control character or a forged line.
func TestWaitForSanitisesEverythingFromTheAPI(t *testing.T) {
	dir := initDir(t)
	validations, err := json.Marshal(map[string][]rendezvous.Validation{
		"network": {{ID: "ntp-synced" + hostile, Status: "failure", Message: "validation " + hostile}},
	})
	require.NoError(t, err)
	host := map[string]any{
		"id": "h1", "requested_hostname": "master-0" + hostile, "role": "master" + hostile,
		"status": "insufficient", "status_info": "info " + hostile, "validations_info": string(validations),
		"progress": map[string]any{"current_stage": "stage" + hostile},
	}
	cluster := map[string]any{
		"id": "c1", "status": "insufficient", "status_info": "cluster " + hostile,
		"validations_info": string(validations), "hosts": []any{host},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch strings.TrimPrefix(r.URL.Path, rendezvous.APIPath) {
		case "/infra-envs":
			_ = json.NewEncoder(w).Encode([]any{map[string]any{"id": "ie", "cluster_id": "c1", "name": "ie" + hostile}})
		case "/clusters":
			_ = json.NewEncoder(w).Encode([]any{cluster})
		case "/clusters/c1":
			_ = json.NewEncoder(w).Encode(cluster)
		case "/events":
			_ = json.NewEncoder(w).Encode([]any{
				map[string]any{"severity": "info", "message": "event " + hostile, "event_time": "2026-01-01T00:00:00Z"},
				map[string]any{"severity": "warning", "message": "warn " + hostile, "event_time": "2026-01-01T00:00:01Z"},
			})
		default:
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte("body " + hostile))
		}
	}))
	defer srv.Close()
	t.Setenv("AGENTISO_RENDEZVOUS_URL", srv.URL+rendezvous.APIPath)

	var out, errOut bytes.Buffer
	code := run([]string{"--dir", dir, "--log-level", "debug", "wait-for", "bootstrap-complete", "--timeout", "3s", "--time-scale", "100"}, nil, &out, &errOut)
	assert.NotEqual(t, 0, code)
	printed := out.String() + errOut.String()
	require.Contains(t, printed, "event ", "the event was printed at all")
	require.Contains(t, printed, "master-0", "the host was printed at all")
	for _, bad := range []string{"\x1b", "\x07", "\r", "\u202e", "\nINFO Bootstrap is complete", "\ngone"} {
		assert.NotContains(t, printed, bad, "%q reached the terminal", bad)
	}
	assert.Contains(t, printed, `\x1b]0;pwned\a`, "control characters are shown escaped")
}

// An HTTP error body is printed escaped too.
func TestRESTErrorBodyIsSanitised(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte("oops " + hostile))
	}))
	defer srv.Close()
	c, err := rendezvous.NewClient(srv.URL+rendezvous.APIPath, "t", 0, nil)
	require.NoError(t, err)
	_, err = c.ListClusters(t.Context())
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "\x1b")
	assert.NotContains(t, err.Error(), "\n")
	assert.Contains(t, err.Error(), `oops \x1b]0;pwned`)
}
