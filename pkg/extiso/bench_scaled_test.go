package extiso_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
	"github.com/seed-a052040e/agentiso/internal/fake/testrelease"
	"github.com/seed-a052040e/agentiso/pkg/extiso"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
	"github.com/seed-a052040e/agentiso/pkg/ocmirror"
	"github.com/seed-a052040e/agentiso/pkg/regstore"
	"github.com/seed-a052040e/agentiso/pkg/release"
)

// genLayer is a layer of size pseudo-random bytes (ChaCha8 seeded by
// seed), generated each time it is read, so that GiBs of layers take no
// memory. Its bytes are its own diff, as static.Layer's are.
type genLayer struct {
	seed uint64
	size int64
	d    v1.Hash
}

func (g *genLayer) reader() io.Reader {
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], g.seed)
	return io.LimitReader(rand.NewChaCha8(s), g.size)
}

func newGenLayer(b *testing.B, seed uint64, size int64) *genLayer {
	g := &genLayer{seed: seed, size: size}
	h := sha256.New()
	_, err := io.CopyBuffer(h, g.reader(), make([]byte, 1<<20))
	require.NoError(b, err)
	g.d = v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(h.Sum(nil))}
	return g
}

func (g *genLayer) Digest() (v1.Hash, error)             { return g.d, nil }
func (g *genLayer) DiffID() (v1.Hash, error)             { return g.d, nil }
func (g *genLayer) Size() (int64, error)                 { return g.size, nil }
func (g *genLayer) MediaType() (types.MediaType, error)  { return types.DockerLayer, nil }
func (g *genLayer) Compressed() (io.ReadCloser, error)   { return io.NopCloser(g.reader()), nil }
func (g *genLayer) Uncompressed() (io.ReadCloser, error) { return g.Compressed() }

// scaled is a 4.21.0 release served by the real distribution registry
// (its handlers and filesystem driver, in the process, over TLS) from a
// storage tree on disk: components (docker-registry, c01, ...) that all
// list four shared base layers (a quarter of the bytes, stored and
// embedded once) and two layers of their own, of sizes weighted 1 to 11.
type scaled struct {
	root   string
	host   string
	ca     []byte
	hc     *http.Client
	blobs  []v1.Hash // every unique layer, in the order written
	layers int64     // their bytes
	spec   string    // the release, by digest
}

// scaledFixtures keeps each payload (and its registry) for the whole test
// binary: a benchmark function runs once with b.N = 1 and again with
// BENCHTIME's N, and the payload takes minutes to generate. TestMain
// removes them.
var scaledFixtures = struct {
	sync.Mutex
	m     map[string]*scaledFixture
	close []func()
}{m: map[string]*scaledFixture{}}

type scaledFixture struct {
	dir, basePath string
	s             *scaled
}

func closeScaledFixtures() {
	scaledFixtures.Lock()
	defer scaledFixtures.Unlock()
	for _, c := range scaledFixtures.close {
		c()
	}
}

func scaledSetup(b *testing.B, mib, components int) *scaledFixture {
	scaledFixtures.Lock()
	defer scaledFixtures.Unlock()
	key := fmt.Sprint(mib, "/", components)
	if f, ok := scaledFixtures.m[key]; ok {
		return f
	}
	dir, err := os.MkdirTemp("", "extiso-bench-")
	require.NoError(b, err)
	scaledFixtures.close = append(scaledFixtures.close, func() { os.RemoveAll(dir) })
	f := &scaledFixture{dir: dir, basePath: filepath.Join(dir, "base.iso")}
	f.s = newScaled(b, dir, int64(mib)<<20, components)
	_, err = testiso.WriteFile(f.basePath, testiso.Options{Size: 1 << 30, Dense: true})
	require.NoError(b, err)
	scaledFixtures.m[key] = f
	return f
}

func newScaled(b *testing.B, dir string, size int64, components int) *scaled {
	s := &scaled{root: filepath.Join(dir, "registry")}
	cfg := &configuration.Configuration{Storage: configuration.Storage{
		"filesystem":  configuration.Parameters{"rootdirectory": s.root},
		"maintenance": configuration.Parameters{"readonly": map[any]any{"enabled": true}},
	}}
	cfg.HTTP.Secret = "extiso-bench"
	srv := httptest.NewUnstartedServer(handlers.NewApp(context.Background(), cfg))
	srv.StartTLS()
	scaledFixtures.close = append([]func(){srv.Close}, scaledFixtures.close...)
	s.host = strings.TrimPrefix(srv.URL, "https://")
	s.ca = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	s.hc = srv.Client()

	const align = 4096
	seed := uint64(1)
	add := func(n int64) v1.Layer {
		g := newGenLayer(b, seed, max(align, n/align*align))
		seed++
		s.blobs = append(s.blobs, g.d)
		s.layers += g.size
		return g
	}
	var shared []v1.Layer
	for i := 0; i < 4; i++ {
		shared = append(shared, add(size/16))
	}
	var weights []int64
	var sum int64
	for i := 0; i < 2*components; i++ {
		w := int64(1 + (i*7)%11)
		weights = append(weights, w)
		sum += w
	}
	ctx := context.Background()
	p := regstore.NewPlan()
	comps := map[string]string{}
	for i := 0; i < components; i++ {
		name := fmt.Sprintf("c%02d", i)
		if i == 0 {
			name = extiso.RegistryComponent
		}
		ls := append(append([]v1.Layer(nil), shared...), add(size*3/4*weights[2*i]/sum), add(size*3/4*weights[2*i+1]/sum))
		img, err := mutate.AppendLayers(empty.Image, ls...)
		require.NoError(b, err)
		d, err := img.Digest()
		require.NoError(b, err)
		require.NoError(b, p.Add(ctx, "ocp/release", name, img))
		comps[name] = s.host + "/ocp/release@" + d.String()
	}
	payload, err := testrelease.Payload{Version: "4.21.0", Components: comps}.Image()
	require.NoError(b, err)
	d, err := payload.Digest()
	require.NoError(b, err)
	require.NoError(b, p.Add(ctx, "ocp/release", "4.21.0-x86_64", payload))
	require.NoError(b, regstore.WriteDir(ctx, s.root, p, nil))
	s.spec = s.host + "/ocp/release@" + d.String()
	return s
}

// blobFile is where the registry's storage keeps a blob.
func (s *scaled) blobFile(d v1.Hash) string {
	return filepath.Join(s.root, filepath.FromSlash(regstore.BlobPath(d)))
}

// envInt is an integer from the environment, or def.
func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(b, err, name)
	return n
}

// BenchmarkExtendedISOScaled is issue 36's speed check on a payload of
// several GiB (BENCH_PAYLOAD_MIB, default 4096, in BENCH_COMPONENTS
// components, default 48) after a 1 GiB dense base ISO: the real flow
// (release.Client resolves the release, extiso.PlanRelease plans it, the
// extended ISO is written and synced) against baselines, each run
// alternately with it (median of the per-iteration ratios). Two sources:
//
//   - registry: the release read from the real distribution registry over
//     TLS (a mirror registry), against x-copy (cp of the base ISO, then
//     every unique layer's file in the registry's storage appended: the
//     payload's bytes copied, nothing read through the registry or
//     checked; fsync) and x-download (cp of the base ISO, then every
//     unique layer downloaded from the same registry, HTTPS GET, nothing
//     checked, appended; fsync);
//   - store: the same tree read as an oc-mirror v2 store (--mirror-from on
//     its docker/registry/v2 directory: ocmirror.Store answers the
//     client, nothing goes over a socket), the laptop's flow, against the
//     same x-copy.
//
// make bench runs it with BENCHTIME iterations.
func BenchmarkExtendedISOScaled(b *testing.B) {
	b.Run("registry", func(b *testing.B) { benchScaled(b, false) })
	b.Run("store", func(b *testing.B) { benchScaled(b, true) })
}

func benchScaled(b *testing.B, store bool) {
	t0 := time.Now()
	fx := scaledSetup(b, envInt(b, "BENCH_PAYLOAD_MIB", 4096), envInt(b, "BENCH_COMPONENTS", 48))
	dir, s, basePath := b.TempDir(), fx.s, fx.basePath
	f, err := os.Open(basePath)
	require.NoError(b, err)
	b.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	require.NoError(b, err)
	iso, err := isoeditor.Open(f, st.Size())
	require.NoError(b, err)
	img, err := iso.Edit(isoeditor.Edit{Ignition: []byte(`{"ignition":{"version":"3.2.0"}}`)})
	require.NoError(b, err)

	ctx := context.Background()
	opts := release.Options{TrustBundle: s.ca, Arch: "x86_64"}
	if store {
		ms, err := ocmirror.OpenStore(s.root)
		require.NoError(b, err)
		opts = release.Options{Local: ms, Arch: "x86_64"}
	}
	c, err := release.New(opts)
	require.NoError(b, err)
	rel, err := c.Resolve(ctx, s.spec)
	require.NoError(b, err)
	b.Logf("payload: %d unique layers, %d MiB, %d components; set up in %v (b.N %d)", len(s.blobs), s.layers>>20, len(rel.Components), time.Since(t0).Round(time.Second), b.N)
	ext := func(out string) {
		plan, err := extiso.PlanRelease(ctx, c, rel, nil)
		require.NoError(b, err)
		x, err := extiso.Extend(iso, img, plan, time.Now(), nil)
		require.NoError(b, err)
		stg, err := x.WriteStaged(ctx, out, isoeditor.WriteOptions{})
		require.NoError(b, err)
		require.NoError(b, stg.Commit())
	}
	appendAll := func(out string, open func(d v1.Hash) io.ReadCloser) {
		o, err := os.Create(out)
		require.NoError(b, err)
		src, err := os.Open(basePath)
		require.NoError(b, err)
		_, err = io.Copy(o, src)
		require.NoError(b, err)
		src.Close()
		for _, d := range s.blobs {
			rc := open(d)
			_, err = io.Copy(o, rc)
			require.NoError(b, err)
			rc.Close()
		}
		require.NoError(b, o.Sync())
		require.NoError(b, o.Close())
	}
	cp := func(out string) {
		appendAll(out, func(d v1.Hash) io.ReadCloser {
			f, err := os.Open(s.blobFile(d))
			require.NoError(b, err)
			return f
		})
	}
	download := func(out string) {
		appendAll(out, func(d v1.Hash) io.ReadCloser {
			resp, err := s.hc.Get("https://" + s.host + "/v2/ocp/release/blobs/" + d.String())
			require.NoError(b, err)
			require.Equal(b, http.StatusOK, resp.StatusCode)
			return resp.Body
		})
	}
	baselines := map[string]func(string){"copy": cp, "download": download}
	if store {
		delete(baselines, "download")
	}
	compareN(b, dir, st.Size()+s.layers, ext, baselines)
}
