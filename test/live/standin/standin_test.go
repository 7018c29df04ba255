package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testrelease"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

func TestCVO(t *testing.T) {
	root := t.TempDir()
	for p, b := range (testrelease.Payload{Components: map[string]string{"agent-installer-node-agent": "quay.io/x/y@sha256:abc"}}).Files() {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, p), b, 0o644))
	}
	dir := filepath.Join(root, "release-manifests")
	var out bytes.Buffer
	require.NoError(t, runCVO([]string{"image", "agent-installer-node-agent"}, dir, &out))
	assert.Equal(t, "quay.io/x/y@sha256:abc", out.String())
	require.ErrorIs(t, runCVO([]string{"image", "nope"}, dir, &out), errUnknownComponent)
	require.ErrorContains(t, runCVO([]string{"image"}, dir, &out), "missing command line argument short-name")
	require.ErrorContains(t, runCVO([]string{"start"}, dir, &out), "only answers: image SHORT-NAME")
	require.ErrorContains(t, runCVO([]string{"image", "x"}, t.TempDir(), &out), "read the release payload")
}

func TestRunDispatch(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, 1, run(context.Background(), []string{"/usr/bin/frobnicate"}, &out, &errb))
	assert.Contains(t, errb.String(), `unknown role "frobnicate"`)
	errb.Reset()
	assert.Equal(t, 2, run(context.Background(), []string{"standin"}, &out, &errb))
	for _, gone := range []string{"assisted-service", "agent-installer-client", "agent", "postgres", "bash", "cp"} {
		errb.Reset()
		assert.Equal(t, 1, run(context.Background(), []string{"standin", gone}, &out, &errb), "%s is a real program in the lab now", gone)
		assert.Contains(t, errb.String(), "unknown role")
	}
}

func TestComponent(t *testing.T) {
	var out bytes.Buffer
	env := func(k string) string { return map[string]string{"STANDIN_COMPONENT": "agent-installer-utils"}[k] }
	require.NoError(t, runComponent([]string{"x"}, env, &out))
	assert.Contains(t, out.String(), "stand-in for release component agent-installer-utils")
	require.ErrorContains(t, runComponent(nil, func(string) string { return "" }, &out), "STANDIN_COMPONENT is not set")
}

// TestInstallerReportsInstalling: the stand-in assisted-installer reports
// its host's Installing stage with the agent token, as the real one does
// first (PUT .../infra-envs/{id}/hosts/{id}/progress, X-Secret-Key).
func TestInstallerReportsInstalling(t *testing.T) {
	ie, host := "6a3f9b2e-1c4d-4e5f-8a9b-0c1d2e3f4a5b", "0c6f2b4e-8a1d-4f3e-9b2c-7d5e6f708192"
	var got hostProgress
	var key, path, method string
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method, path, key = r.Method, r.URL.Path, r.Header.Get("X-Secret-Key")
		_ = json.NewDecoder(r.Body).Decode(&got)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"reason":"no"}`))
	}))
	defer srv.Close()
	env := func(k string) string { return map[string]string{"PULL_SECRET_TOKEN": "agent-token"}[k] }
	args := []string{"--role", "master", "--infra-env-id", ie, "--cluster-id", "c", "--host-id", host, "--boot-device", "/dev/vda", "--url", srv.URL}
	var out bytes.Buffer
	require.NoError(t, runInstaller(context.Background(), args, env, &out))
	assert.Equal(t, http.MethodPut, method)
	assert.Equal(t, rendezvous.APIPath+"/infra-envs/"+ie+"/hosts/"+host+"/progress", path)
	assert.Equal(t, "agent-token", key)
	assert.Equal(t, "Installing", got.CurrentStage)
	assert.Contains(t, out.String(), "nothing is written")

	status = http.StatusUnauthorized
	require.ErrorContains(t, runInstaller(context.Background(), args, env, &out), "HTTP 401")
	require.ErrorContains(t, runInstaller(context.Background(), args, func(string) string { return "" }, &out), "PULL_SECRET_TOKEN")
	require.ErrorContains(t, runInstaller(context.Background(), args[2:], env, &out), "--role is required")
}
