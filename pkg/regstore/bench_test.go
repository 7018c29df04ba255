package regstore_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/regstore"
)

// BenchmarkWriteDirVsCopy writes a 256 MiB store (16 images of 16 MiB
// layers, held in memory) against copying the same layer bytes into one
// file each; x-copy is the ratio of the medians of the two (the cost of
// the layout, the links and the digest check over a plain copy).
func BenchmarkWriteDirVsCopy(b *testing.B) {
	const images, layer = 16, 16 << 20
	var imgs []v1.Image
	var blobs [][]byte
	for i := 0; i < images; i++ {
		buf := make([]byte, layer)
		_, err := rand.Read(buf)
		require.NoError(b, err)
		blobs = append(blobs, buf)
		img, err := mutate.AppendLayers(empty.Image, static.NewLayer(buf, types.DockerLayer))
		require.NoError(b, err)
		imgs = append(imgs, img)
	}
	p := regstore.NewPlan()
	for i, img := range imgs {
		require.NoError(b, p.Add(context.Background(), "openshift/release", "t"+string(rune('a'+i)), img))
	}
	var write, cp []time.Duration
	b.SetBytes(p.Bytes())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		t0 := time.Now()
		require.NoError(b, regstore.WriteDir(context.Background(), filepath.Join(dir, "store"), p, nil))
		write = append(write, time.Since(t0))

		t0 = time.Now()
		for j, blob := range blobs {
			f, err := os.Create(filepath.Join(dir, "copy-"+string(rune('a'+j))))
			require.NoError(b, err)
			_, err = io.Copy(f, bytes.NewReader(blob))
			require.NoError(b, err)
			require.NoError(b, f.Close())
		}
		cp = append(cp, time.Since(t0))
		require.NoError(b, os.RemoveAll(dir))
	}
	b.ReportMetric(float64(median(write))/float64(median(cp)), "x-copy")
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}
