package baseiso

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/data"
)

// Rule: a password or a query token in --base-iso or --os-image-mirror is
// never printed: not in a log line, not in an error, not in the fetch
// instructions (hidden as `config view` hides them).
func TestURLCredentialsAreNeverPrinted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusNotFound)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	secret, token := "s3cretpw", "t0kenvalue"
	check := func(what, s string) {
		t.Helper()
		assert.NotContains(t, s, secret, what)
		assert.NotContains(t, s, token, what)
	}

	var logs strings.Builder
	opts := Options{BaseISO: "http://admin:" + secret + "@" + host + "/rhcos.iso?sig=" + token, CacheDir: t.TempDir(),
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), Retries: -1}
	_, err := Resolve(context.Background(), opts)
	require.Error(t, err)
	check("error", err.Error())
	check("log", logs.String())
	assert.Contains(t, logs.String(), "admin:xxxxx@", "the URL is shown, redacted")

	logs.Reset()
	opts = Options{Mirror: "http://admin:" + secret + "@" + host + "/isos?sig=" + token, CacheDir: t.TempDir(), Stream: data.RHCOSStream(),
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), Retries: -1}
	_, err = Resolve(context.Background(), opts)
	require.Error(t, err)
	check("mirror error", err.Error())
	check("mirror log", logs.String())
	fi, err := Describe(opts)
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, fi.WriteInstructions(&b))
	check("instructions", b.String())
	assert.Contains(t, b.String(), "admin:xxxxx@")
}
