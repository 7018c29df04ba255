package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/assetdir"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/devcmd"
	"github.com/seed-a052040e/agentiso/internal/fake/rendezvoussim"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

// startDirSim serves scenario sc for the inputs in dir, as `agentiso-dev simulate` does.
func startDirSim(t *testing.T, dir string, sc *rendezvoussim.Scenario, speed float64) *rendezvoussim.Simulator {
	t.Helper()
	cfg, err := rendezvoussim.ConfigForDir(dir, rendezvoussim.DirOptions{Scenario: sc, Speed: speed, HoldUntilSeen: true})
	require.NoError(t, err)
	s, err := rendezvoussim.New(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	return s
}

func initDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	code := devcmd.Run([]string{"init-dir", "--dir", dir, "--rendezvous-ip", "127.0.0.1", "--local"}, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	return dir
}

// TestWaitForExitCodes runs the real wait-for command against every shipped
// scenario and checks the exit code the scenario documents.
func TestWaitForExitCodes(t *testing.T) {
	// The simulator holds each REST state until wait-for was served it
	// (HoldUntilSeen), so a loaded machine cannot make wait-for miss one.
	const speed = 300
	for _, name := range rendezvoussim.BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sc, err := rendezvoussim.Builtin(name)
			require.NoError(t, err)
			dir := initDir(t)
			s := startDirSim(t, dir, sc, speed)
			args := []string{"--dir", dir, "wait-for", sc.Expect.Command, "--time-scale", strconv.Itoa(speed), "-o", "json",
				"--timeout", rendezvoussim.WaitTimeout(sc, speed).String()}
			var out, errOut bytes.Buffer
			code := run(args, nil, &out, &errOut)
			assert.Equal(t, sc.Expect.ExitCode, code, errOut.String())
			for _, c := range sc.Expect.Contains {
				assert.Contains(t, errOut.String(), c)
			}
			st := oneStatus(t, out.Bytes())
			assert.Equal(t, code, st.ExitCode)
			assert.Equal(t, sc.Expect.Command, st.Target)
			if code == 0 && sc.Expect.Command == "install-complete" {
				assert.Contains(t, errOut.String(), "export KUBECONFIG="+filepath.Join(dir, "auth/kubeconfig"))
			}
			// Only the watcher token was ever sent, and never refused.
			for _, r := range s.Requests() {
				assert.Equal(t, []string{rendezvous.WatcherHeader}, r.AuthHeaders)
				assert.Equal(t, 200, r.Status)
			}
		})
	}
}

// oneStatus decodes the one status object wait-for -o json printed: there
// is exactly one, and nothing else.
func oneStatus(t *testing.T, out []byte) rendezvous.Status {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	var st rendezvous.Status
	require.NoError(t, dec.Decode(&st), "stdout: %s", out)
	_, err := dec.Token()
	require.ErrorIs(t, err, io.EOF, "more than one object on stdout: %s", out)
	return st
}

// Whatever ends wait-for -o json before the wait begins, stdout holds one
// status object with the error and the exit code the process exits with.
func TestWaitForStatusWhenItFailsEarly(t *testing.T) {
	dir := initDir(t)
	for _, tc := range []struct {
		name, target, err string
		args              []string
	}{
		{"missing dir", "install-complete", "nowhere/rendezvousIP", []string{"--dir", filepath.Join(dir, "nowhere"), "wait-for", "install-complete", "-o", "json"}},
		{"no target", "", "wait-for needs a target", []string{"--dir", dir, "wait-for", "-o", "json"}},
		{"unknown target", "", `unknown command "install"`, []string{"--dir", dir, "wait-for", "install", "-o", "json"}},
		{"unknown flag first", "bootstrap-complete", "unknown flag: --bogus", []string{"--dir", dir, "wait-for", "bootstrap-complete", "--bogus", "-o", "json"}},
		{"bad timeout", "bootstrap-complete", "--timeout must be positive", []string{"--dir", dir, "wait-for", "bootstrap-complete", "-o", "json", "--timeout", "-1s"}},
		{"bad log level", "bootstrap-complete", `invalid --log-level "loud"`, []string{"--dir", dir, "--log-level", "loud", "wait-for", "bootstrap-complete", "-o", "json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(tc.args, nil, &out, &errOut)
			assert.Equal(t, rendezvous.ExitUsage, code, errOut.String())
			st := oneStatus(t, out.Bytes())
			assert.Equal(t, rendezvous.Status{Target: tc.target, Result: rendezvous.ResultFailed, ExitCode: code, Error: st.Error}, st)
			assert.Contains(t, st.Error, tc.err)
			assert.Contains(t, errOut.String(), "ERROR "+st.Error, "the same error on stderr")
		})
	}
}

func TestWaitForInterrupted(t *testing.T) {
	dir := initDir(t)
	var errOut bytes.Buffer
	g := &globals{dir: dir, logLevel: "info", out: io.Discard, errOut: &errOut, log: slog.New(slog.DiscardHandler)}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := waitFor(ctx, g, waitForOptions{target: "install-complete", timeScale: 1, requestTimeout: time.Second})
	var ee *exitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 130, ee.code)
	assert.ErrorIs(t, err, rendezvous.ErrInterrupted)
}

func TestInitDirFiles(t *testing.T) {
	dir := initDir(t)
	for _, f := range []string{assetdir.State, assetdir.Kubeconfig, assetdir.KubeadminPassword} {
		fi, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), f)
	}
	// The state file is the asset store's, with the documented shape.
	var st struct {
		Version int `json:"version"`
		Assets  map[string]struct {
			Data json.RawMessage `json:"data"`
		} `json:"assets"`
	}
	b, err := os.ReadFile(filepath.Join(dir, assetdir.State))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &st))
	assert.Equal(t, 1, st.Version)
	assert.Contains(t, string(st.Assets["Agent Auth Config"].Data), `"watcherAuthToken"`)
	fi, err := os.Stat(filepath.Join(dir, assetdir.State))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

// The REST and Kubernetes ports of `agentiso-dev init-dir --local` are never the
// same port: picked one after the other with the first closed, they could be.
func TestFreeLoopbackAddrsDistinct(t *testing.T) {
	for range 200 {
		addrs, err := rendezvoussim.FreeLoopbackAddrs(2)
		require.NoError(t, err)
		require.Len(t, addrs, 2)
		require.NotEqual(t, addrs[0], addrs[1])
		assert.True(t, strings.HasPrefix(addrs[0], "127.0.0.1:"), addrs[0])
	}
}
