package release_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testrelease"
	"github.com/seed-a052040e/agentiso/pkg/release"
)

// bytesToResolve pushes a payload with filler OS layers below the manifests
// and returns the layer bytes the registry served for one Resolve (blob
// bytes less the image config, which lists every layer and so grows a few
// dozen bytes per layer).
func bytesToResolve(tb testing.TB, fillers int, size int64) int64 {
	r := testrelease.StartRegistry(tb, testrelease.RegistryOptions{})
	img, err := testrelease.Payload{FillerLayers: fillers, FillerSize: size}.Image()
	require.NoError(tb, err)
	_, err = r.Push("ocp/release", "x", img)
	require.NoError(tb, err)
	c, err := release.New(release.Options{TrustBundle: r.CAPEM})
	require.NoError(tb, err)
	before := r.BlobBytes()
	_, err = c.Resolve(ctxTB(tb), r.Host+"/ocp/release:x")
	require.NoError(tb, err)
	cfg, err := img.RawConfigFile()
	require.NoError(tb, err)
	return r.BlobBytes() - before - int64(len(cfg))
}

// TestResolveReadsOnlyNeededLayers: the bytes read do not grow with the
// payload's other layers.
func TestResolveReadsOnlyNeededLayers(t *testing.T) {
	small := bytesToResolve(t, 0, 0)
	big := bytesToResolve(t, 6, 1<<20)
	assert.Equal(t, small, big, "resolving read filler layers")
	assert.Less(t, big, int64(64<<10))
}

func BenchmarkResolve(b *testing.B) {
	for _, fillers := range []int{0, 8} {
		b.Run(fmt.Sprintf("filler-layers=%d", fillers), func(b *testing.B) {
			var n int64
			for i := 0; i < b.N; i++ {
				n = bytesToResolve(b, fillers, 1<<20)
			}
			b.ReportMetric(float64(n), "layer-bytes-read/op")
			b.ReportMetric(float64(fillers)*(1<<20), "payload-filler-bytes")
		})
	}
}
