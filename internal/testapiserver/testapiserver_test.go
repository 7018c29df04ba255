package testapiserver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed-a052040e/agentiso/internal/testapiserver"
)

// The shipped binary must not link the test API server (nor client-go's
// fake clients it would bring).
func TestNotInShippedBinary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/seed-a052040e/agentiso/cmd/agentiso").CombinedOutput()
	require.NoError(t, err, string(out))
	for _, p := range strings.Fields(string(out)) {
		assert.NotEqual(t, "github.com/seed-a052040e/agentiso/internal/testapiserver", p)
		assert.NotEqual(t, "k8s.io/client-go/testing", p)
	}
}

func start(t *testing.T) *testapiserver.Server {
	t.Helper()
	bin, err := testapiserver.Find()
	if err != nil {
		if testapiserver.Required() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	s, err := testapiserver.Start(bin, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(s.Stop)
	t.Logf("kube-apiserver + etcd ready in %s", s.StartTime.Round(time.Millisecond))
	return s
}

// The real schemas validate what the tests create: a ClusterVersion
// without its required spec.clusterID is refused, with the field named.
func TestRealSchemas(t *testing.T) {
	s := start(t)
	ctx := context.Background()
	t0 := time.Now()
	require.NoError(t, s.LoadCRDs(ctx,
		"openshift/0000_00_cluster-version-operator_01_clusterversions-Default.crd.yaml",
		"openshift/0000_10_config-operator_01_imagecontentsourcepolicies.crd.yaml"))
	t.Logf("2 CRDs established and served in %s", time.Since(t0).Round(time.Millisecond))
	cv := schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "clusterversions"}
	_, err := s.Create(ctx, cv, "ClusterVersion", map[string]any{"metadata": map[string]any{"name": "version"}, "spec": map[string]any{}})
	require.Error(t, err)
	assert.True(t, apierrors.IsInvalid(err), err)
	assert.Contains(t, err.Error(), "spec.clusterID")

	_, err = s.Create(ctx, cv, "ClusterVersion", map[string]any{"metadata": map[string]any{"name": "version"},
		"spec":   map[string]any{"clusterID": "5ab2f1f2-55c4-4d5f-9c0e-2b1a7b0d7c11"},
		"status": map[string]any{"desired": map[string]any{"version": "4.20.3", "image": "quay.io/x/y@sha256:" + strings.Repeat("a", 64)}, "observedGeneration": 1, "versionHash": "x", "availableUpdates": nil}})
	require.NoError(t, err)
	dc, err := s.Dynamic()
	require.NoError(t, err)
	got, err := dc.Resource(cv).Get(ctx, "version", metav1.GetOptions{})
	require.NoError(t, err)
	v, _, _ := unstructuredString(got.Object, "status", "desired", "version")
	assert.Equal(t, "4.20.3", v, "the status is written through the status subresource")
}

func unstructuredString(m map[string]any, path ...string) (string, bool, error) {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return "", false, nil
		}
		cur = mm[p]
	}
	s, ok := cur.(string)
	return s, ok, nil
}

// A server that never becomes ready makes Start return its error, with the
// log named, and stop what it had started: no panic on the way out and no
// etcd left running. The build here is two scripts: an etcd that records
// its pid and waits, and a kube-apiserver that exits at once.
func TestStartFailureStopsWhatItStarted(t *testing.T) {
	bin := t.TempDir()
	pidFile := filepath.Join(bin, "etcd.pid")
	require.NoError(t, os.WriteFile(filepath.Join(bin, "etcd"), []byte("#!/bin/sh\necho $$ >'"+pidFile+"'\nexec sleep 600\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "kube-apiserver"), []byte("#!/bin/sh\necho 'no etcd for me' >&2\nexit 3\n"), 0o755))
	var s *testapiserver.Server
	var err error
	require.NotPanics(t, func() { s, err = testapiserver.Start(bin, t.TempDir()) })
	require.Error(t, err)
	assert.Nil(t, s)
	assert.Contains(t, err.Error(), "kube-apiserver exited")
	assert.Contains(t, err.Error(), "no etcd for me", "the error carries the log's tail")
	b, rerr := os.ReadFile(pidFile)
	require.NoError(t, rerr, "etcd was started")
	pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, perr)
	assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "etcd (pid %d) was stopped and reaped", pid)
}
