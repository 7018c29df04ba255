package serve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeOutput writes rel with data and its sha256sum file, as agentiso does.
func writeOutput(t *testing.T, dir, rel string, data []byte) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, data, 0o600))
	sum := sha256.Sum256(data)
	require.NoError(t, os.WriteFile(p+".sha256", []byte(hex.EncodeToString(sum[:])+"  "+filepath.Base(p)+"\n"), 0o644))
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// assetDir is an asset directory with an ISO, PXE files, and the files
// that must never be served, including traps that look like outputs.
func assetDir(t *testing.T) (string, []byte) {
	t.Helper()
	dir := t.TempDir()
	iso := randomBytes(3<<20 + 17)
	writeOutput(t, dir, "agent.x86_64.iso", iso)
	writeOutput(t, dir, "boot-artifacts/agent.x86_64-rootfs.img", []byte("rootfs"))
	writeOutput(t, dir, "boot-artifacts/agent.x86_64.ipxe", []byte("#!ipxe\n"))
	for rel, data := range map[string]string{
		"install-config.yaml":     "pullSecret: secret",
		"agent-config.yaml":       "x",
		"auth/kubeconfig":         "kubeconfig-secret",
		"auth/kubeadmin-password": "password-secret",
		"agent.ign":               "ignition-secret",
		".agentiso/state.json":    "{}",
	} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o600))
	}
	// An ISO name that is a link to a secret, with a matching .sha256.
	sum := sha256.Sum256([]byte("kubeconfig-secret"))
	require.NoError(t, os.Symlink("../auth/kubeconfig", filepath.Join(dir, "boot-artifacts", "agent.aarch64-rootfs.img")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "boot-artifacts", "agent.aarch64-rootfs.img.sha256"), []byte(hex.EncodeToString(sum[:])+"  agent.aarch64-rootfs.img\n"), 0o644))
	// An output whose content no longer matches its .sha256.
	writeOutput(t, dir, "boot-artifacts/agent.x86_64-vmlinuz", []byte("kernel"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "boot-artifacts", "agent.x86_64-vmlinuz"), []byte("tampered"), 0o644))
	// An output without its .sha256.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent.aarch64.iso"), []byte("no sum"), 0o600))
	return dir, iso
}

func newTestServer(t *testing.T, o Options) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(o)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return s, hs
}

func get(t *testing.T, method, url string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, b
}

func TestServesOnlyVerifiedOutputs(t *testing.T) {
	dir, _ := assetDir(t)
	s, hs := newTestServer(t, Options{Dir: dir})
	var paths []string
	for _, f := range s.Files() {
		paths = append(paths, f.Path)
	}
	assert.Equal(t, []string{
		"agent.x86_64.iso", "agent.x86_64.iso.sha256",
		"boot-artifacts/agent.x86_64-rootfs.img", "boot-artifacts/agent.x86_64-rootfs.img.sha256",
		"boot-artifacts/agent.x86_64.ipxe", "boot-artifacts/agent.x86_64.ipxe.sha256",
	}, paths)
	reasons := map[string]string{}
	for _, sk := range s.Skipped() {
		reasons[sk.Path] = sk.Reason
	}
	assert.Contains(t, reasons["boot-artifacts/agent.aarch64-rootfs.img"], "not a regular file")
	assert.Contains(t, reasons["boot-artifacts/agent.x86_64-vmlinuz"], "is not what agent.x86_64-vmlinuz.sha256 records")
	assert.Contains(t, reasons["agent.aarch64.iso"], "agent.aarch64.iso.sha256 is missing")

	for _, p := range []string{
		"/", "/install-config.yaml", "/agent-config.yaml", "/auth/kubeconfig", "/auth/kubeadmin-password",
		"/agent.ign", "/.agentiso/state.json", "/boot-artifacts/", "/boot-artifacts",
		"/boot-artifacts/../auth/kubeconfig", "/boot-artifacts/%2e%2e/auth/kubeconfig",
		"/boot-artifacts/..%2fauth/kubeconfig", "/%2fauth/kubeconfig", "//auth/kubeconfig",
		"/boot-artifacts/agent.aarch64-rootfs.img", "/boot-artifacts/agent.x86_64-vmlinuz",
		"/agent.aarch64.iso", "/agent.x86_64.iso/", "/AGENT.X86_64.ISO", "/agent.x86_64.iso%00",
	} {
		resp, body := get(t, http.MethodGet, hs.URL+p, nil)
		assert.NotEqual(t, http.StatusOK, resp.StatusCode, p)
		assert.NotEqual(t, http.StatusPartialContent, resp.StatusCode, p)
		for _, secret := range []string{"kubeconfig-secret", "password-secret", "ignition-secret", "pullSecret"} {
			assert.NotContains(t, string(body), secret, p)
		}
	}
	// A raw request line that net/http's client would clean first.
	conn, err := net.Dial("tcp", strings.TrimPrefix(hs.URL, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	fmt.Fprintf(conn, "GET /boot-artifacts/../../auth/kubeconfig HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	raw, _ := io.ReadAll(conn)
	assert.NotContains(t, string(raw), "kubeconfig-secret")
	assert.NotContains(t, string(raw), "200 OK")
}

func TestRangesHeadAndConditionals(t *testing.T) {
	dir, iso := assetDir(t)
	_, hs := newTestServer(t, Options{Dir: dir})
	sum := sha256.Sum256(iso)
	etag := `"` + hex.EncodeToString(sum[:]) + `"`
	u := hs.URL + "/agent.x86_64.iso"

	resp, body := get(t, http.MethodHead, u, nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, body)
	assert.Equal(t, fmt.Sprint(len(iso)), resp.Header.Get("Content-Length"))
	assert.Equal(t, etag, resp.Header.Get("ETag"))
	assert.Equal(t, "bytes", resp.Header.Get("Accept-Ranges"))
	assert.NotEmpty(t, resp.Header.Get("Last-Modified"))
	assert.Equal(t, "application/x-iso9660-image", resp.Header.Get("Content-Type"))

	resp, body = get(t, http.MethodGet, u, map[string]string{"Range": "bytes=2048-4095"})
	assert.Equal(t, http.StatusPartialContent, resp.StatusCode)
	assert.Equal(t, fmt.Sprintf("bytes 2048-4095/%d", len(iso)), resp.Header.Get("Content-Range"))
	assert.Equal(t, iso[2048:4096], body)

	resp, body = get(t, http.MethodGet, u, map[string]string{"Range": "bytes=-10"})
	assert.Equal(t, http.StatusPartialContent, resp.StatusCode)
	assert.Equal(t, iso[len(iso)-10:], body)

	resp, body = get(t, http.MethodGet, u, map[string]string{"Range": "bytes=0-0,100-101"})
	assert.Equal(t, http.StatusPartialContent, resp.StatusCode)
	assert.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "multipart/byteranges"))
	assert.True(t, bytes.Contains(body, iso[100:102]))

	resp, _ = get(t, http.MethodGet, u, map[string]string{"Range": fmt.Sprintf("bytes=%d-", len(iso)+5)})
	assert.Equal(t, http.StatusRequestedRangeNotSatisfiable, resp.StatusCode)

	resp, body = get(t, http.MethodGet, u, map[string]string{"If-None-Match": etag})
	assert.Equal(t, http.StatusNotModified, resp.StatusCode)
	assert.Empty(t, body)

	resp, body = get(t, http.MethodGet, u, map[string]string{"Range": "bytes=0-9", "If-Range": etag})
	assert.Equal(t, http.StatusPartialContent, resp.StatusCode)
	assert.Equal(t, iso[:10], body)
	resp, body = get(t, http.MethodGet, u, map[string]string{"Range": "bytes=0-9", "If-Range": `"other"`})
	assert.Equal(t, http.StatusOK, resp.StatusCode, "If-Range with another ETag gets the whole file")
	assert.Len(t, body, len(iso))

	resp, _ = get(t, http.MethodPost, u, nil)
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, "GET, HEAD", resp.Header.Get("Allow"))

	resp, body = get(t, http.MethodGet, u+".sha256", nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, hex.EncodeToString(sum[:])+"  agent.x86_64.iso\n", string(body))
}

func TestConcurrentDownloads(t *testing.T) {
	dir, iso := assetDir(t)
	_, hs := newTestServer(t, Options{Dir: dir})
	want := sha256.Sum256(iso)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 8 {
		wg.Go(func() {
			resp, err := http.Get(hs.URL + "/agent.x86_64.iso")
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			h := sha256.New()
			if _, err := io.Copy(h, resp.Body); err != nil {
				errs <- err
				return
			}
			if !bytes.Equal(h.Sum(nil), want[:]) {
				errs <- fmt.Errorf("download %d: wrong sha256", i)
			}
		})
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 7))
			for range 40 {
				off := r.IntN(len(iso) - 70000)
				n := 1 + r.IntN(65536)
				req, _ := http.NewRequest(http.MethodGet, hs.URL+"/agent.x86_64.iso", nil)
				req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", off, off+n-1))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					errs <- err
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusPartialContent || !bytes.Equal(b, iso[off:off+n]) {
					errs <- fmt.Errorf("range %d+%d: status %d, err %v", off, n, resp.StatusCode, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestFileChangedWhileServing(t *testing.T) {
	dir, _ := assetDir(t)
	_, hs := newTestServer(t, Options{Dir: dir})
	p := filepath.Join(dir, "boot-artifacts", "agent.x86_64.ipxe")
	// Changed in place without its .sha256: refused.
	require.NoError(t, os.WriteFile(p, []byte("#!ipxe\nchain http://evil/\n"), 0o644))
	resp, body := get(t, http.MethodGet, hs.URL+"/boot-artifacts/agent.x86_64.ipxe", nil)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.NotContains(t, string(body), "evil")
	// Replaced by a new run (new file and .sha256): served, new ETag.
	writeOutput(t, dir, "boot-artifacts/agent.x86_64.ipxe", []byte("#!ipxe\nnew\n"))
	resp, body = get(t, http.MethodGet, hs.URL+"/boot-artifacts/agent.x86_64.ipxe", nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "#!ipxe\nnew\n", string(body))
	sum := sha256.Sum256(body)
	assert.Equal(t, `"`+hex.EncodeToString(sum[:])+`"`, resp.Header.Get("ETag"))
	// Replaced by a link to a secret: refused.
	require.NoError(t, os.Remove(p))
	require.NoError(t, os.Symlink("../auth/kubeconfig", p))
	resp, body = get(t, http.MethodGet, hs.URL+"/boot-artifacts/agent.x86_64.ipxe", nil)
	assert.NotEqual(t, http.StatusOK, resp.StatusCode)
	assert.NotContains(t, string(body), "kubeconfig-secret")
}

func TestBasicAuth(t *testing.T) {
	dir, _ := assetDir(t)
	var logs bytes.Buffer
	_, hs := newTestServer(t, Options{Dir: dir, User: "media", Password: "s3cret-pw", Log: slog.New(slog.NewTextHandler(&logs, nil))})
	resp, _ := get(t, http.MethodGet, hs.URL+"/agent.x86_64.iso.sha256", nil)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("WWW-Authenticate"), "Basic")
	req, _ := http.NewRequest(http.MethodGet, hs.URL+"/agent.x86_64.iso.sha256", nil)
	req.SetBasicAuth("media", "wrong")
	r2, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	r2.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, r2.StatusCode)
	req.SetBasicAuth("media", "s3cret-pw")
	r3, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	r3.Body.Close()
	assert.Equal(t, http.StatusOK, r3.StatusCode)
	assert.NotContains(t, logs.String(), "s3cret-pw")
	assert.NotContains(t, logs.String(), "wrong")
	assert.Contains(t, logs.String(), "user=media")
}

func TestNothingToServe(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent.x86_64.iso"), []byte("x"), 0o600))
	_, err := New(Options{Dir: dir})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nothing to serve in "+dir)
	assert.Contains(t, err.Error(), "agent.x86_64.iso.sha256 is missing")
}

func TestRunTLSAndCtrlC(t *testing.T) {
	dir, iso := assetDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, RunOptions{Dir: dir, Listen: "127.0.0.1:0", GenerateTLS: true,
			Ready: func(a net.Addr, scheme string) { ready <- scheme + "://" + a.String() }})
	}()
	var base string
	select {
	case base = <-ready:
	case err := <-done:
		t.Fatal(err)
	case <-time.After(30 * time.Second):
		t.Fatal("not ready")
	}
	pem, err := os.ReadFile(filepath.Join(dir, ".agentiso", "serve.crt"))
	require.NoError(t, err)
	assert.NotContains(t, string(pem), "PRIVATE KEY")
	cl := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	req, _ := http.NewRequest(http.MethodGet, base+"/agent.x86_64.iso", nil)
	req.Header.Set("Range", "bytes=10-19")
	resp, err := cl.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusPartialContent, resp.StatusCode)
	assert.Equal(t, iso[10:20], b)
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop after cancel")
	}
}

func TestRunOptionErrors(t *testing.T) {
	dir, _ := assetDir(t)
	for _, c := range []struct {
		o    RunOptions
		want string
	}{
		{RunOptions{TLSCert: "a"}, "--tls-cert and --tls-key go together"},
		{RunOptions{User: "u"}, "needs both --user and --password-file"},
		{RunOptions{GenerateTLS: true, Listen: ":0"}, "--tls needs the names or addresses"},
	} {
		c.o.Dir = dir
		err := Run(context.Background(), c.o)
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
	}
}

func FuzzParseSumLine(f *testing.F) {
	f.Add(strings.Repeat("a", 64)+"  agent.x86_64.iso\n", "agent.x86_64.iso")
	f.Add(strings.Repeat("A", 64)+" *x", "x")
	f.Add("", "x")
	f.Add(strings.Repeat("g", 64)+"  x", "x")
	f.Fuzz(func(t *testing.T, s, name string) {
		sum, err := ParseSumLine(s, name)
		if err == nil {
			if len(sum) != 64 || strings.ToLower(sum) != sum {
				t.Fatalf("bad sum %q", sum)
			}
		}
	})
}

func TestBootArtifactsAlsoAtBootArtifactsBaseURLPath(t *testing.T) {
	dir, _ := assetDir(t)
	_, hs := newTestServer(t, Options{Dir: dir, BootPath: "/boot"})
	resp, body := get(t, http.MethodGet, hs.URL+"/boot/agent.x86_64-rootfs.img", nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "rootfs", string(body))
	resp, _ = get(t, http.MethodGet, hs.URL+"/boot-artifacts/agent.x86_64-rootfs.img", nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	for _, p := range []string{"/boot/", "/boot/agent.x86_64.iso", "/boot/../auth/kubeconfig", "/boot/agent.x86_64-vmlinuz"} {
		resp, _ = get(t, http.MethodGet, hs.URL+p, nil)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, p)
	}

	// The path comes from agent-config.yaml's bootArtifactsBaseURL.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent-config.yaml"), []byte("apiVersion: v1beta1\nkind: AgentConfig\nrendezvousIP: 192.168.122.10\nbootArtifactsBaseURL: http://10.0.0.1:8080/pxe/boot/\n"), 0o600))
	assert.Equal(t, "/pxe/boot", bootArtifactsPath(context.Background(), dir, slog.New(slog.DiscardHandler)))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent-config.yaml"), []byte("apiVersion: v1beta1\nkind: AgentConfig\nrendezvousIP: 192.168.122.10\nbootArtifactsBaseURL: http://10.0.0.1:8080/boot-artifacts\n"), 0o600))
	assert.Equal(t, "", bootArtifactsPath(context.Background(), dir, slog.New(slog.DiscardHandler)))
	assert.Equal(t, "", bootArtifactsPath(context.Background(), filepath.Join(dir, "missing"), slog.New(slog.DiscardHandler)))
	assert.NoDirExists(t, filepath.Join(dir, "missing"))
}

// TestServesEveryArtifact: the generic ISO, the config image, a node ISO
// and a node image's PXE files are served as the agent ISO is, each with
// its .sha256; a node ISO written with --output-name is served when named;
// every ISO and initrd counts as holding secrets.
func TestServesEveryArtifact(t *testing.T) {
	dir := t.TempDir()
	for _, rel := range []string{
		"agent-unconfigured.x86_64.iso", "agentconfig.noarch.iso", "node.x86_64.iso", "rack7.iso",
		"boot-artifacts/node.x86_64-vmlinuz", "boot-artifacts/node.x86_64-initrd.img",
		"boot-artifacts/node.x86_64-rootfs.img", "boot-artifacts/node.x86_64.ipxe",
	} {
		writeOutput(t, dir, rel, []byte("content of "+rel))
	}
	s, hs := newTestServer(t, Options{Dir: dir, Extra: []string{"rack7.iso"}})
	secret := map[string]bool{}
	for _, f := range s.Files() {
		if !strings.HasSuffix(f.Path, ".sha256") {
			secret[f.Path] = f.Secret
		}
	}
	assert.Equal(t, map[string]bool{
		"agent-unconfigured.x86_64.iso": true, "agentconfig.noarch.iso": true, "node.x86_64.iso": true, "rack7.iso": true,
		"boot-artifacts/node.x86_64-vmlinuz": false, "boot-artifacts/node.x86_64-initrd.img": true,
		"boot-artifacts/node.x86_64-rootfs.img": false, "boot-artifacts/node.x86_64.ipxe": false,
	}, secret)
	for p := range secret {
		resp, body := get(t, http.MethodGet, hs.URL+"/"+p, nil)
		assert.Equal(t, http.StatusOK, resp.StatusCode, p)
		assert.Equal(t, "content of "+p, string(body), p)
		resp, body = get(t, http.MethodGet, hs.URL+"/"+p+".sha256", nil)
		assert.Equal(t, http.StatusOK, resp.StatusCode, p)
		assert.Contains(t, string(body), "  "+filepath.Base(p)+"\n", p)
	}
	// Without the name, the --output-name ISO is not served.
	s2, _ := newTestServer(t, Options{Dir: dir})
	for _, f := range s2.Files() {
		assert.NotEqual(t, "rack7.iso", f.Path)
	}
}

// TestExtraFilesRefused: a named file must be an ISO agentiso wrote in
// --dir itself: no path, no input or secret file, no missing file, no ISO
// without its .sha256; each refusal names the file and why.
func TestExtraFilesRefused(t *testing.T) {
	dir := t.TempDir()
	writeOutput(t, dir, "agent.x86_64.iso", []byte("iso"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nosum.iso"), []byte("x"), 0o600))
	writeOutput(t, dir, "agent.ign", []byte("ignition-secret"))
	for name, want := range map[string]string{
		"../elsewhere.iso":       "a file name in --dir",
		"sub/dir.iso":            "a file name in --dir",
		"/etc/passwd":            "a file name in --dir",
		"agent.ign":              "only ISOs",
		"install-config.yaml":    "only ISOs",
		".hidden.iso":            "a file name in --dir",
		"missing.iso":            "missing.iso: no such file in",
		"nosum.iso":              "nosum.iso.sha256 is missing",
		"":                       "a file name in --dir",
		"agent.x86_64.iso\n.iso": "a file name in --dir",
	} {
		_, err := New(Options{Dir: dir, Extra: []string{name}})
		if assert.Error(t, err, "%q", name) {
			assert.Contains(t, err.Error(), want, "%q", name)
		}
	}
	// Naming a file that is served anyway is harmless.
	s, err := New(Options{Dir: dir, Extra: []string{"agent.x86_64.iso"}})
	require.NoError(t, err)
	defer s.Close()
	assert.Len(t, s.Files(), 2)
}
