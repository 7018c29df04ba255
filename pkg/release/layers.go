package release

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/klauspost/compress/zstd"

	"github.com/seed-a052040e/agentiso/pkg/arch"
)

// cleanTarName turns "./a/b", "/a/b" and "a/b/" into "a/b".
func cleanTarName(n string) string {
	n = path.Clean("/" + n)
	return strings.TrimPrefix(n, "/")
}

// visitFunc sees one wanted regular file. Returning done stops the walk.
type visitFunc func(name string, hdr *tar.Header, r io.Reader) error

// walkWanted reads img's layers from the top down and calls visit for the
// newest version of each wanted file (whiteouts honoured). It stops once
// every wanted file is found, or after the layer holding stopAfter, and
// reads no further layer. A layer in which a file was found is read to its
// end so its digest is verified before the walk returns.
func (c *Client) walkWanted(ctx context.Context, img v1.Image, spec string, wanted []string, stopAfter string, visit visitFunc) error {
	layers, err := img.Layers()
	if err != nil {
		return fmt.Errorf("%s: layers: %w", spec, err)
	}
	left := map[string]bool{}
	for _, w := range wanted {
		left[w] = true
	}
	for i := len(layers) - 1; i >= 0 && len(left) > 0; i-- {
		l := layers[i]
		dg, _ := l.Digest()
		retries := c.opts.LayerRetries
		if retries == 0 {
			retries = 2
		}
		var stop bool
		for attempt := 0; ; attempt++ {
			found := map[string]bool{}
			stop, err = c.walkLayer(ctx, l, left, stopAfter, func(n string, h *tar.Header, r io.Reader) error {
				found[n] = true
				return visit(n, h, r)
			})
			if err == nil {
				for n := range found {
					delete(left, n)
				}
				break
			}
			var ve *visitError
			if errors.As(err, &ve) || !transient(err) || attempt >= retries || ctx.Err() != nil {
				if errors.As(err, &ve) {
					return ve.err
				}
				return fmt.Errorf("%s: layer %s: %w", spec, dg, err)
			}
			c.log.Debug("release: layer read broke, reading it again", "layer", dg, "err", err)
		}
		if stop {
			break
		}
	}
	return nil
}

// visitError carries an error of the visitor (not retried).
type visitError struct{ err error }

func (e *visitError) Error() string { return e.err.Error() }

// transient reports whether a read failure may pass on a second try.
func transient(err error) bool {
	var ne net.Error
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || errors.As(err, &ne) ||
		strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "unexpected EOF") || strings.Contains(err.Error(), "broken pipe")
}

// walkLayer streams one layer's tar. It removes whited-out names from left
// (they are absent in the image) and calls visit for wanted files present.
func (c *Client) walkLayer(ctx context.Context, l v1.Layer, left map[string]bool, stopAfter string, visit visitFunc) (stop bool, err error) {
	rc, err := l.Compressed()
	if err != nil {
		return false, err
	}
	defer rc.Close()
	br := bufio.NewReaderSize(&ctxReader{ctx: ctx, r: rc}, 64<<10)
	tr, closeDec, err := decompress(br)
	if err != nil {
		return false, err
	}
	defer closeDec()
	t := tar.NewReader(tr)
	remaining := len(left)
	sawStop := false
	for remaining > 0 {
		h, err := t.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return false, err
		}
		n := cleanTarName(h.Name)
		dir, base := path.Split(n)
		dir = strings.TrimSuffix(dir, "/")
		if base == ".wh..wh..opq" {
			for w := range left {
				if strings.HasPrefix(w, dir+"/") {
					delete(left, w)
					remaining--
				}
			}
			continue
		}
		if strings.HasPrefix(base, ".wh.") {
			w := path.Join(dir, strings.TrimPrefix(base, ".wh."))
			if left[w] {
				delete(left, w)
				remaining--
			}
			continue
		}
		if !left[n] || h.Typeflag != tar.TypeReg {
			continue
		}
		if err := visit(n, h, t); err != nil {
			var ve *visitError
			if errors.As(err, &ve) {
				return false, err
			}
			return false, err
		}
		if n == stopAfter {
			sawStop = true
		}
		remaining--
	}
	// Read the rest of the blob so the registry client checks its digest:
	// nothing read from a corrupted layer is ever used.
	if _, err := io.Copy(io.Discard, br); err != nil {
		return false, err
	}
	return sawStop || remaining == 0, nil
}

// decompress detects gzip, zstd or a plain tar stream.
func decompress(br *bufio.Reader) (io.Reader, func(), error) {
	magic, err := br.Peek(4)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, err
	}
	switch {
	case len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, err
		}
		zr.Multistream(true)
		return zr, func() { zr.Close() }, nil
	case len(magic) == 4 && bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(br)
		if err != nil {
			return nil, nil, err
		}
		return zr, zr.Close, nil
	default:
		return br, func() {}, nil
	}
}

// ctxReader stops a read once the context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// readFiles returns the wanted files of img (nil for absent ones), each
// bounded by its limit.
func (c *Client) readFiles(ctx context.Context, img v1.Image, spec string, wanted []string, stopAfter string, limits map[string]int64) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := c.walkWanted(ctx, img, spec, wanted, stopAfter, func(n string, h *tar.Header, r io.Reader) error {
		if lim := limits[n]; lim > 0 && h.Size > lim {
			return &visitError{fmt.Errorf("%s: /%s is %d bytes, more than the %d allowed", spec, n, h.Size, lim)}
		}
		b, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		out[n] = b
		return nil
	})
	return out, err
}

// ChecksDigests reports that every blob of the images the client opens is
// checked as it is read: go-containerregistry's remote layers fail at
// their end when the bytes do not have their digest and size
// (verify.ReadCloser), so a reader of them need not hash them again.
func (c *Client) ChecksDigests() bool { return true }

// Image opens an image (a component of the release, by digest) through
// the mirrors, the image of the client's architecture for an index: the
// first location serving it wins, which it returns. Registry text in its
// error is escaped (termsafe).
func (c *Client) Image(ctx context.Context, spec string) (v1.Image, string, error) {
	img, from, err := c.image(ctx, spec)
	return img, from, safeError(err)
}

// image is Image with the registry's own error text.
func (c *Client) image(ctx context.Context, spec string) (v1.Image, string, error) {
	ref, err := name.ParseReference(spec)
	if err != nil {
		return nil, "", fmt.Errorf("image %q: %w", spec, err)
	}
	f, err := c.get(ctx, spec, ref)
	if err != nil {
		return nil, "", err
	}
	if f.desc.MediaType.IsIndex() {
		idx, err := f.desc.ImageIndex()
		if err != nil {
			return nil, "", err
		}
		// New checked opts.Arch; empty is arch.Default.
		cpu, _ := arch.Normalize(c.opts.Arch)
		want, _ := arch.Go(cpu)
		im, err := idx.IndexManifest()
		if err != nil {
			return nil, "", err
		}
		for _, d := range im.Manifests {
			if d.Platform != nil && d.Platform.OS == "linux" && d.Platform.Architecture == want {
				img, err := remote.Image(f.location.Context().Digest(d.Digest.String()), c.remoteOpts(ctx)...)
				return img, f.location.String(), err
			}
		}
		return nil, "", fmt.Errorf("%s has no linux/%s image", spec, want)
	}
	img, err := f.desc.Image()
	return img, f.location.String(), err
}

// StreamFile finds file in the image spec and hands its content to fn
// (with its size); it reads layers from the top and stops after the layer
// holding the file. It returns the location the image was read from.
// Registry text in its error is escaped (termsafe).
func (c *Client) StreamFile(ctx context.Context, spec, file string, fn func(r io.Reader, size int64) error) (string, error) {
	from, err := c.streamFile(ctx, spec, file, fn)
	return from, safeError(err)
}

func (c *Client) streamFile(ctx context.Context, spec, file string, fn func(r io.Reader, size int64) error) (string, error) {
	img, from, err := c.image(ctx, spec)
	if err != nil {
		return "", err
	}
	file = cleanTarName(file)
	found := false
	err = c.walkWanted(ctx, img, spec, []string{file}, file, func(_ string, h *tar.Header, r io.Reader) error {
		found = true
		if err := fn(r, h.Size); err != nil {
			return &visitError{err}
		}
		return nil
	})
	if err != nil {
		return from, err
	}
	if !found {
		return from, fmt.Errorf("%s has no /%s", spec, file)
	}
	return from, nil
}
