package baseiso

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// SourceRegistry: the stream ISO was streamed from a container image (the
// release payload's machine-os-images) into the cache.
const SourceRegistry Source = "registry"

// RegistrySource is a container image holding the stream ISO, typically the
// release payload's machine-os-images component in a mirror registry. It
// is tried after the cache, before the HTTP source when Preferred, else
// when the HTTP source fails.
type RegistrySource struct {
	// Image is the image pull spec (shown in messages, kept with a partial
	// copy so a resume continues only the same image).
	Image string
	// Preferred tries the image before the stream URL: set when a mirror
	// registry serves the release (an air gap).
	Preferred bool
	// Stream calls fn with the ISO's content and size, read from the image.
	Stream func(ctx context.Context, fn func(r io.Reader, size int64) error) error
}

type registryPartMeta struct {
	Image string `json:"image"`
}

// resolveRegistry streams the stream ISO from the image into the cache:
// into <cache>/<name>.registry.part first, kept across interruptions (a
// re-run skips what it holds), verified against the stream's sha256 and
// renamed into place only when complete. The caller holds the cache lock.
func (r *resolver) resolveRegistry(ctx context.Context, info FetchInfo) (Result, error) {
	reg := r.opts.Registry
	part, meta := info.CachePath+".registry.part", info.CachePath+".registry.part.json"
	var offset int64
	if fi, err := os.Stat(part); err == nil && fi.Mode().IsRegular() {
		var m registryPartMeta
		if b, err := os.ReadFile(meta); err == nil && json.Unmarshal(b, &m) == nil && m.Image == reg.Image {
			offset = fi.Size()
		}
	}
	if offset == 0 {
		_ = os.Remove(part)
		b, _ := json.Marshal(registryPartMeta{Image: reg.Image})
		if err := writeCacheFile(meta, b); err != nil {
			return Result{}, fmt.Errorf("base ISO cache: %w", err)
		}
	}
	h := sha256.New()
	if offset > 0 {
		if err := hashFilePrefix(h, part, offset); err != nil {
			return Result{}, fmt.Errorf("base ISO cache: %w", err)
		}
	}
	// The part is cut to what was hashed, then appended to.
	if err := os.Truncate(part, offset); err != nil && !errors.Is(err, os.ErrNotExist) {
		return Result{}, r.cacheWriteError(part, offset, -1, false, err)
	}
	f, err := r.create(part, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return Result{}, r.cacheWriteError(part, offset, -1, false, err)
	}
	r.log.Info("Streaming base ISO from the release payload", "image", reg.Image, "cache", info.CachePath, "rhcos", info.Release, "resume_at", offset)
	var finalErr error // a cache or size failure: not the registry's
	err = reg.Stream(ctx, func(rd io.Reader, size int64) error {
		if size > r.maxSize {
			finalErr = &SizeLimitError{Source: reg.Image, Size: size, Limit: r.maxSize}
			return finalErr
		}
		if offset > size {
			return fmt.Errorf("partial copy %s (%d bytes) is larger than the ISO (%d bytes)", part, offset, size)
		}
		if finalErr = r.checkRoom(part, offset, size, 0); finalErr != nil {
			return finalErr
		}
		if _, err := io.CopyN(io.Discard, rd, offset); err != nil {
			return err
		}
		p := newProgress(r.progress, r.tty, info.FileName, r.now, offset, size)
		cache := &recordingWriter{w: f}
		n, err := io.Copy(io.MultiWriter(cache, h, p), io.LimitReader(rd, size-offset))
		p.finish(err == nil)
		if cache.err != nil {
			finalErr = r.cacheWriteError(part, partSize(part, offset+n), size, true, cache.err)
			return finalErr
		}
		return err
	})
	if cerr := f.Close(); err == nil && cerr != nil {
		finalErr = r.cacheWriteError(part, partSize(part, 0), -1, true, cerr)
		err = finalErr
	}
	if finalErr != nil {
		var se *SizeLimitError
		if errors.As(finalErr, &se) {
			_ = os.Remove(part)
			_ = os.Remove(meta)
		}
		return Result{}, fmt.Errorf("stream base ISO from %s: %w", reg.Image, finalErr)
	}
	if err != nil {
		return Result{}, fmt.Errorf("stream base ISO from %s (partial copy kept at %s; run again to resume): %w", reg.Image, part, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if sum != info.SHA256 {
		_ = os.Remove(part)
		_ = os.Remove(meta)
		return Result{}, &ChecksumError{File: part + " (removed)", Source: reg.Image, Expected: info.SHA256, Actual: sum}
	}
	if err := replaceable(info.CachePath); err != nil {
		return Result{}, err
	}
	markOwn(info.CachePath)
	if err := os.Rename(part, info.CachePath); err != nil {
		return Result{}, fmt.Errorf("move %s to %s: %w", part, info.CachePath, err)
	}
	r.record(info.CachePath, sum)
	_ = os.Remove(meta)
	r.log.Info("Base ISO obtained from the release payload and cached", "path", info.CachePath)
	return Result{Path: info.CachePath, Source: SourceRegistry, SHA256: sum, Verified: true, URL: reg.Image, Release: info.Release}, nil
}

// isFinal reports an error that no other source can fix: a checksum
// mismatch, a cache that cannot take the ISO, a file over the size limit.
func isFinal(err error) bool {
	var ce *ChecksumError
	var se *SizeLimitError
	return errors.As(err, &ce) || errors.As(err, &se) || isCacheWrite(err)
}
