package regstore

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// DigestError is a blob (or manifest, or config) whose bytes do not match
// the digest or size its manifest gives.
type DigestError struct {
	// Image is the first image that lists the blob (repository@digest).
	Image string
	Want  v1.Hash
	// Got is the digest of the bytes read (zero when the size was wrong
	// before the end).
	Got      v1.Hash
	Size     int64
	WantSize int64
}

func (e *DigestError) Error() string {
	if e.WantSize != 0 && e.Size != e.WantSize {
		return fmt.Sprintf("%s: blob %s: read %d bytes, the manifest says %d", e.Image, e.Want, e.Size, e.WantSize)
	}
	return fmt.Sprintf("%s: blob %s: digest mismatch: the bytes read have digest %s", e.Image, e.Want, e.Got)
}

// Open reads the blob, checked: the reader fails with a *DigestError when
// the blob is longer or shorter than its size, or at its end when the
// bytes do not have its digest. Close it.
func (b *Blob) Open() (io.ReadCloser, error) {
	if b.open == nil {
		return nil, fmt.Errorf("regstore: blob %s has no source", b.Digest)
	}
	if b.Digest.Algorithm != "sha256" {
		return nil, fmt.Errorf("%s: blob %s: only sha256 is verified", b.Image, b.Digest)
	}
	rc, err := b.open()
	if err != nil {
		return nil, fmt.Errorf("%s: blob %s: %w", b.Image, b.Digest, err)
	}
	v := &verifier{rc: rc, b: b}
	if !b.checked {
		v.h = sha256.New()
	}
	return v, nil
}

type verifier struct {
	rc   io.ReadCloser
	b    *Blob
	h    hash.Hash
	n    int64
	done error
}

func (v *verifier) Read(p []byte) (int, error) {
	if v.done != nil {
		return 0, v.done
	}
	// Never read more than one byte past the size: a longer blob is an
	// error, not a longer write.
	if left := v.b.Size + 1 - v.n; int64(len(p)) > left {
		p = p[:left]
	}
	n, err := v.rc.Read(p)
	if v.h != nil {
		v.h.Write(p[:n])
	}
	v.n += int64(n)
	if v.n > v.b.Size {
		v.done = &DigestError{Image: v.b.Image, Want: v.b.Digest, Size: v.n, WantSize: v.b.Size}
		return n - int(v.n-v.b.Size), v.done
	}
	if err == io.EOF {
		if v.n != v.b.Size {
			v.done = &DigestError{Image: v.b.Image, Want: v.b.Digest, Size: v.n, WantSize: v.b.Size}
			return n, v.done
		}
		if v.h == nil {
			// the source checked the digest before its io.EOF
			v.done = io.EOF
			return n, v.done
		}
		got := v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(v.h.Sum(nil))}
		if got != v.b.Digest {
			v.done = &DigestError{Image: v.b.Image, Want: v.b.Digest, Got: got, Size: v.n, WantSize: v.b.Size}
			return n, v.done
		}
		v.done = io.EOF
	} else if err != nil {
		err = fmt.Errorf("%s: blob %s: %w", v.b.Image, v.b.Digest, err)
	}
	return n, err
}

func (v *verifier) Close() error { return v.rc.Close() }
