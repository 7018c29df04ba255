package regstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Progress is where a write stands.
type Progress struct {
	Bytes, Total     int64 // bytes written of the tree's Bytes
	Blobs, Of        int   // blobs written of Blobs
	Images, ImagesOf int   // images whose blobs are all written, of Images
	// Elapsed is the time since the write began.
	Elapsed time.Duration
}

// Left estimates the time left from the rate so far (0 until a byte is
// written).
func (p Progress) Left() time.Duration {
	if p.Bytes <= 0 || p.Elapsed <= 0 {
		return 0
	}
	rate := float64(p.Bytes) / p.Elapsed.Seconds()
	return time.Duration(float64(p.Total-p.Bytes) / rate * float64(time.Second))
}

// ctxReader stops a copy when ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// CopyBlob copies the blob to w, checked (Open), reading its source once.
// It returns the bytes written.
func CopyBlob(ctx context.Context, w io.Writer, b *Blob, buf []byte) (int64, error) {
	rc, err := b.Open()
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	n, err := copyFull(w, ctxReader{ctx, rc}, buf)
	if err != nil {
		return n, err
	}
	if n != b.Size {
		return n, &DigestError{Image: b.Image, Want: b.Digest, Size: n, WantSize: b.Size}
	}
	return n, nil
}

// copyFull copies r to w in writes of len(buf) bytes (the last may be
// shorter): a network source returns a TLS record (16 KiB) or less per
// read, and a write per read costs a system call and a mark of the ISO's
// hash follower each (docs/airgap.md "Measured"). Bytes read with an error
// are written before the error is returned, as io.Copy does.
func copyFull(w io.Writer, r io.Reader, buf []byte) (int64, error) {
	var total int64
	for {
		n := 0
		var rerr error
		for n < len(buf) && rerr == nil {
			var k int
			k, rerr = r.Read(buf[n:])
			n += k
		}
		if n > 0 {
			k, err := w.Write(buf[:n])
			total += int64(k)
			if err != nil {
				return total, err
			}
			if k != n {
				return total, io.ErrShortWrite
			}
		}
		if rerr == io.EOF {
			return total, nil
		}
		if rerr != nil {
			return total, rerr
		}
	}
}

// WriteDir writes the planned tree as files under dir, which must not
// exist: the small files first, then each blob once, checked as it is
// copied (a file naming a blob already written is a hard link to it). The
// tree is built in a temporary directory beside dir and renamed to dir at
// the end; on an error or a cancelled ctx it is removed and dir is not
// created. progress, when not nil, is called after each blob.
func WriteDir(ctx context.Context, dir string, p *Plan, progress func(Progress)) (err error) {
	if _, err := os.Lstat(dir); err == nil {
		return fmt.Errorf("regstore: %s already exists", dir)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	start := time.Now()
	st := Progress{Total: p.Bytes(), Of: len(p.blobs), ImagesOf: p.images}
	byBlob := map[string][]string{}
	for _, f := range p.Files() {
		if err := ctx.Err(); err != nil {
			return err
		}
		dst := filepath.Join(tmp, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if f.Data == nil {
			byBlob[f.Blob.String()] = append(byBlob[f.Blob.String()], dst)
			continue
		}
		if err := os.WriteFile(dst, f.Data, 0o644); err != nil {
			return err
		}
		st.Bytes += f.Size
	}
	buf := make([]byte, 1<<20)
	for _, b := range p.blobs {
		names := byBlob[b.Digest.String()]
		if len(names) == 0 {
			return fmt.Errorf("regstore: blob %s has no file", b.Digest)
		}
		if err := writeBlobFile(ctx, names[0], b, buf); err != nil {
			return err
		}
		for _, n := range names[1:] {
			if err := os.Link(names[0], n); err != nil {
				return err
			}
		}
		st.Bytes += b.Size
		st.Blobs++
		st.Images = p.ImagesDone(st.Blobs)
		if progress != nil {
			st.Elapsed = time.Since(start)
			progress(st)
		}
	}
	return os.Rename(tmp, dir)
}

func writeBlobFile(ctx context.Context, name string, b *Blob, buf []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := CopyBlob(ctx, f, b, buf); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
