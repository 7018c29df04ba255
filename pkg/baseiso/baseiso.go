// Package baseiso finds, downloads, verifies and caches the RHCOS live ISO that agent images are built from.
//
// Resolution order (see docs/base-iso.md):
//
//  1. an explicit ISO (--base-iso PATH|URL or AGENTISO_BASE_ISO): a path is
//     used in place, a URL is downloaded into the cache;
//  2. the cache (DefaultCacheDir), when it holds the ISO named by the pinned
//     CoreOS stream metadata and its sha256 matches;
//  3. a download of that ISO from the URL in the stream metadata, or from
//     <mirror>/<file name> when a mirror (--os-image-mirror URL) is given;
//  4. the release payload's machine-os-images image in a registry
//     (Options.Registry), streamed into the cache: before step 3 when a
//     mirror registry serves the release, else when step 3 fails.
//
// Downloads resume from a .part file with HTTP Range requests, are
// serialised between runs with a lock file, are verified against the
// expected sha256 and are renamed into the cache only when complete.
package baseiso

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/seed-a052040e/agentiso/internal/redact"
	"github.com/seed-a052040e/agentiso/pkg/arch"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
)

// EnvBaseISO is the environment variable a caller reads when --base-iso is
// not given.
const EnvBaseISO = "AGENTISO_BASE_ISO"

// Defaults used when the matching Options field is zero.
const (
	DefaultLockTimeout  = 30 * time.Minute
	DefaultRetries      = 3
	DefaultRetryDelay   = 5 * time.Second
	DefaultStallTimeout = 2 * time.Minute
)

// Source says where Resolve found the ISO.
type Source string

// Values of Source.
const (
	SourcePath     Source = "path"     // explicit local path, used in place
	SourceURL      Source = "url"      // explicit URL, downloaded (or reused) in the cache
	SourceCache    Source = "cache"    // stream ISO already in the cache
	SourceDownload Source = "download" // stream ISO downloaded from its upstream URL
	SourceMirror   Source = "mirror"   // stream ISO downloaded from the mirror
)

// Options configures Resolve. The zero value resolves the ISO of the running
// architecture from the embedded stream metadata into the default cache.
type Options struct {
	// BaseISO is the value of --base-iso, or of AGENTISO_BASE_ISO when the
	// flag is not set: a local path (or file:// URL) or an http(s) URL.
	BaseISO string
	// BaseISOSHA256 is an optional expected sha256 (64 hex digits) for
	// BaseISO. For a URL without it, <URL>.sha256 is tried, then the stream
	// checksum when the file name equals the stream ISO's file name.
	BaseISOSHA256 string
	// Mirror is the value of --os-image-mirror: a base http(s) URL under
	// which the stream ISO is fetched as <Mirror>/<file name>.
	Mirror string
	// Offline forbids any network access for the stream ISO: when it is not
	// cached, Resolve returns an *UnavailableError at once.
	Offline bool
	// Registry, when set, is a container image holding the stream ISO (the
	// release payload's machine-os-images); see RegistrySource.
	Registry *RegistrySource
	// Arch is the target CPU architecture in either spelling arch.Normalize
	// accepts; empty means arch.Default.
	Arch string
	// CacheDir overrides DefaultCacheDir(nil).
	CacheDir string
	// Stream is the release's CoreOS stream metadata JSON; nil means it is
	// unknown (the payload was not read): no ISO is named, ErrStreamUnknown.
	Stream []byte
	// HTTPClient performs downloads; nil means a client with no overall
	// timeout that honours HTTP(S)_PROXY.
	HTTPClient *http.Client
	// Progress receives download progress; nil means none. IsTTY selects an
	// in-place progress bar instead of periodic lines.
	Progress io.Writer
	IsTTY    bool
	// Logger receives Info/Warn messages; nil discards them.
	Logger *slog.Logger
	// LockTimeout bounds the wait for another run holding the cache lock.
	LockTimeout time.Duration
	// KeepLock, when set, receives the release of a shared lock on the
	// cached ISO Resolve returns, instead of Resolve releasing it: until
	// the caller releases it, no other run can remove or replace that file
	// (runs that only read it are not held up). Call it once done reading.
	KeepLock func(release func())
	// Retries is the number of extra attempts after an interrupted transfer
	// or a 5xx answer (0 means DefaultRetries, negative means none).
	// Connection failures are not retried.
	Retries int
	// RetryDelay is the pause between attempts (0 means DefaultRetryDelay).
	RetryDelay time.Duration
	// StallTimeout aborts (and retries, resuming) a request that receives no
	// data for this long (0 means DefaultStallTimeout).
	StallTimeout time.Duration

	// Test hooks; zero in normal use. createPart opens part files (default
	// os.OpenFile), freeSpace measures a directory's free bytes, maxSize
	// replaces MaxISOSize.
	createPart func(name string, flag int, perm os.FileMode) (partFile, error)
	freeSpace  func(dir string) (int64, bool)
	maxSize    int64
}

// Result is the ISO Resolve settled on.
type Result struct {
	Path     string // absolute path of the ISO file
	Source   Source
	SHA256   string // sha256 of the file at Path (empty for an unverified local path)
	Verified bool   // SHA256 matched an expected checksum
	URL      string // where it was downloaded from (explicit URL, upstream or mirror), if any
	Release  string // RHCOS release from the stream metadata, when the ISO is the stream's
}

// FetchInfo names the ISO the stream metadata asks for, where it is fetched
// from and where the cache expects it. It is what a user must copy into an
// air-gapped environment.
type FetchInfo struct {
	Stream    string // e.g. "rhcos-4.16"
	Release   string // e.g. "416.94.202405291527-0"
	Arch      string // RPM naming
	FileName  string // e.g. "rhcos-416.94.202405291527-0-live.x86_64.iso"
	URL       string // upstream URL from the stream metadata
	MirrorURL string // <mirror>/<file name> when a mirror is set
	SHA256    string
	CachePath string // where Resolve looks for (and stores) the ISO
}

// Describe returns the FetchInfo for opts without touching the network or
// the cache.
func Describe(opts Options) (FetchInfo, error) {
	fi, err := describe(opts)
	return fi, redact.NewScrubber(opts.Mirror).Error(err)
}

func describe(opts Options) (FetchInfo, error) {
	art, err := streamISO(opts)
	if err != nil {
		return FetchInfo{}, err
	}
	dir, err := cacheDir(opts)
	if err != nil {
		return FetchInfo{}, err
	}
	fi := FetchInfo{
		Stream:    art.Stream,
		Release:   art.Release,
		Arch:      art.Arch,
		FileName:  art.FileName,
		URL:       art.URL,
		SHA256:    art.SHA256,
		CachePath: filepath.Join(dir, art.FileName),
	}
	if opts.Mirror != "" {
		if fi.MirrorURL, err = mirrorURL(opts.Mirror, art.FileName); err != nil {
			return FetchInfo{}, err
		}
	}
	return fi, nil
}

// WriteInstructions writes a how-to for fetching the ISO on a connected
// machine and making it available to an offline run.
func (fi FetchInfo) WriteInstructions(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Base ISO: RHCOS %s live ISO for %s (stream %s)\n", fi.Release, fi.Arch, fi.Stream)
	fmt.Fprintf(&b, "Fetch this file on a machine that can reach it:\n")
	fmt.Fprintf(&b, "  URL:     %s\n", redact.URL(fi.URL))
	fmt.Fprintf(&b, "  SHA256:  %s\n", fi.SHA256)
	fmt.Fprintf(&b, "  verify:  echo '%s  %s' | sha256sum -c -\n", fi.SHA256, fi.FileName)
	fmt.Fprintf(&b, "then do one of:\n")
	fmt.Fprintf(&b, "  - copy it to the cache:    %s\n", fi.CachePath)
	fmt.Fprintf(&b, "  - pass --base-iso PATH     (or set %s=PATH)\n", EnvBaseISO)
	fmt.Fprintf(&b, "  - serve it over HTTP and pass --os-image-mirror URL (the file name must stay %s)\n", fi.FileName)
	if fi.MirrorURL != "" {
		fmt.Fprintf(&b, "The mirror in use expects it at %s\n", redact.URL(fi.MirrorURL))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// UnavailableError is returned when the stream ISO is neither cached nor
// downloadable. Its message carries FetchInfo.WriteInstructions.
type UnavailableError struct {
	Info FetchInfo
	From string // URL that was tried; empty in offline mode
	Err  error
}

func (e *UnavailableError) Error() string {
	var b strings.Builder
	if e.From == "" {
		fmt.Fprintf(&b, "base ISO %s is not in the cache and offline mode forbids downloading it", e.Info.FileName)
	} else {
		fmt.Fprintf(&b, "base ISO %s is not in the cache and could not be downloaded from %s: %v", e.Info.FileName, e.From, e.Err)
	}
	b.WriteString("\n")
	_ = e.Info.WriteInstructions(&b)
	return strings.TrimRight(b.String(), "\n")
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// resolver carries the defaulted options of one Resolve call.
type resolver struct {
	opts       Options
	client     *http.Client
	log        *slog.Logger
	progress   io.Writer
	tty        bool
	now        func() time.Time
	retries    int
	retryDelay time.Duration
	lockWait   time.Duration
	stall      time.Duration
	maxSize    int64
	create     func(name string, flag int, perm os.FileMode) (partFile, error)
}

func newResolver(opts Options) *resolver {
	r := &resolver{
		opts:       opts,
		client:     opts.HTTPClient,
		log:        opts.Logger,
		progress:   opts.Progress,
		tty:        opts.IsTTY,
		now:        time.Now,
		retries:    opts.Retries,
		retryDelay: opts.RetryDelay,
		lockWait:   opts.LockTimeout,
		stall:      opts.StallTimeout,
		maxSize:    opts.maxSize,
		create:     opts.createPart,
	}
	if r.maxSize <= 0 {
		r.maxSize = MaxISOSize
	}
	if r.create == nil {
		r.create = openPartFile
	}
	if r.client == nil {
		r.client = &http.Client{}
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	switch {
	case r.retries == 0:
		r.retries = DefaultRetries
	case r.retries < 0:
		r.retries = 0
	}
	if r.retryDelay <= 0 {
		r.retryDelay = DefaultRetryDelay
	}
	if r.lockWait <= 0 {
		r.lockWait = DefaultLockTimeout
	}
	if r.stall <= 0 {
		r.stall = DefaultStallTimeout
	}
	return r
}

// Resolve returns a local, verified copy of the base ISO following the
// resolution order in the package documentation. The password and query
// values of the base ISO and mirror URLs never appear in its log lines or
// its error (internal/redact).
func Resolve(ctx context.Context, opts Options) (Result, error) {
	sc := redact.NewScrubber(opts.BaseISO, opts.Mirror)
	r := newResolver(opts)
	r.log = slog.New(sc.Handler(r.log.Handler()))
	res, err := r.resolve(ctx, opts)
	return res, sc.Error(err)
}

func (r *resolver) resolve(ctx context.Context, opts Options) (Result, error) {
	if opts.BaseISOSHA256 != "" {
		sum, err := normalizeSHA256(opts.BaseISOSHA256)
		if err != nil {
			return Result{}, fmt.Errorf("base ISO checksum: %w", err)
		}
		r.opts.BaseISOSHA256 = sum
	}
	if opts.BaseISO != "" {
		if p, ok, err := localPath(opts.BaseISO); err != nil {
			return Result{}, err
		} else if ok {
			return r.resolvePath(p)
		}
		return r.resolveURL(ctx, opts.BaseISO)
	}
	if opts.BaseISOSHA256 != "" {
		return Result{}, errors.New("a base ISO checksum was given without a base ISO (--base-iso PATH|URL)")
	}
	return r.resolveStream(ctx)
}

// localPath classifies an explicit base ISO value: a plain path or file://
// URL gives (path, true); an http(s) URL gives ("", false); other schemes
// are an error.
func localPath(v string) (string, bool, error) {
	if strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://") {
		return "", false, nil
	}
	if strings.HasPrefix(v, "file://") {
		u, err := url.Parse(v)
		if err != nil {
			return "", false, fmt.Errorf("base ISO %q: invalid file URL: %w", v, err)
		}
		if u.Host != "" && u.Host != "localhost" {
			return "", false, fmt.Errorf("base ISO %q: file URLs must not name a host", v)
		}
		return filepath.FromSlash(u.Path), true, nil
	}
	if i := strings.Index(v, "://"); i > 0 && !strings.ContainsAny(v[:i], `/\`) {
		return "", false, fmt.Errorf("base ISO %q: unsupported URL scheme %q; use a local path or an http(s) URL", v, v[:i])
	}
	return v, true, nil
}

// LocalPath is the local file an explicit base ISO value names (a plain
// path or a file:// URL), ok false for an http(s) URL; another scheme is
// an error.
func LocalPath(v string) (path string, ok bool, err error) { return localPath(v) }

// resolvePath checks an explicit local ISO and uses it in place.
func (r *resolver) resolvePath(p string) (Result, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return Result{}, fmt.Errorf("base ISO %s: %w", p, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Result{}, fmt.Errorf("base ISO %s does not exist; check the --base-iso / %s value", abs, EnvBaseISO)
		}
		return Result{}, fmt.Errorf("base ISO %s: %w", abs, err)
	}
	if !fi.Mode().IsRegular() {
		return Result{}, fmt.Errorf("base ISO %s is not a regular file; --base-iso / %s must name an ISO file", abs, EnvBaseISO)
	}
	f, err := os.Open(abs)
	if err != nil {
		return Result{}, fmt.Errorf("base ISO %s is not readable: %w", abs, err)
	}
	_ = f.Close()
	res := Result{Path: abs, Source: SourcePath}
	// A local ISO is hashed only when there is a checksum to verify: the
	// read would otherwise double the cost of building the image.
	if want := r.opts.BaseISOSHA256; want != "" {
		sum, err := r.fileSHA256(abs)
		if err != nil {
			return Result{}, fmt.Errorf("base ISO %s: %w", abs, err)
		}
		if sum != want {
			return Result{}, &ChecksumError{File: abs, Source: abs, Expected: want, Actual: sum}
		}
		res.SHA256, res.Verified = sum, true
	}
	if res.Verified {
		r.log.Info("Using base ISO " + abs + ": its sha256 is the one given")
	} else {
		r.log.Info("Using base ISO " + abs + " as it is (no sha256 given to verify it by)")
	}
	return res, nil
}

// resolveURL downloads an explicit URL into the cache (or reuses the cached
// copy when its checksum is known and matches).
func (r *resolver) resolveURL(ctx context.Context, raw string) (Result, error) {
	name, err := fileNameFromURL(raw)
	if err != nil {
		return Result{}, fmt.Errorf("base ISO: %w", err)
	}
	dir, err := r.ensureCacheDir()
	if err != nil {
		return Result{}, err
	}
	want, wantFrom, release, err := r.urlChecksum(ctx, raw, name)
	if err != nil {
		return Result{}, err
	}
	f := fetch{url: raw, sha256: want, final: filepath.Join(dir, name), name: name}
	hit := func() Result {
		r.log.Info("Using cached base ISO", "path", f.final, "url", raw)
		return Result{Path: f.final, Source: SourceURL, SHA256: want, Verified: true, URL: raw, Release: release}
	}
	return r.locked(ctx, f.final, want, hit, func() (Result, error) { return r.resolveURLLocked(ctx, raw, f, want, wantFrom, release, hit) })
}

// resolveURLLocked is resolveURL under the exclusive cache lock.
func (r *resolver) resolveURLLocked(ctx context.Context, raw string, f fetch, want, wantFrom, release string, hit func() Result) (Result, error) {
	if want != "" {
		if ok, err := r.cachedMatches(f.final, want); err != nil {
			return Result{}, err
		} else if ok {
			return hit(), nil
		}
	} else {
		r.log.Warn("No checksum known for the base ISO URL: it is downloaded, used unverified and removed from the cache again (a copy that cannot be verified is never reused). Publish "+raw+".sha256 or pass --base-iso-sha256 to verify it and keep it cached", "url", raw)
	}
	r.log.Info("Downloading base ISO", "url", raw, "cache", f.final, "sha256", wantFrom)
	sum, err := r.download(ctx, f)
	if err != nil {
		return Result{}, fmt.Errorf("base ISO %s: %w", raw, err)
	}
	return Result{Path: f.final, Source: SourceURL, SHA256: sum, Verified: want != "", URL: raw, Release: release}, nil
}

// urlChecksum decides the expected sha256 of an explicit URL: the given
// checksum, else <url>.sha256 when the server has it, else the stream
// checksum when the file name is the stream ISO's. from describes the
// choice for the log; release is set when the stream matched.
func (r *resolver) urlChecksum(ctx context.Context, raw, name string) (sum, from, release string, err error) {
	if r.opts.BaseISOSHA256 != "" {
		return r.opts.BaseISOSHA256, "given", "", nil
	}
	sum, err = r.fetchSidecar(ctx, raw)
	if err != nil {
		return "", "", "", err
	}
	if sum != "" {
		return sum, raw + ".sha256", "", nil
	}
	if art, serr := streamISO(r.opts); serr == nil && art.FileName == name {
		return art.SHA256, "stream " + art.Stream, art.Release, nil
	}
	return "", "none", "", nil
}

// fetchSidecar reads <raw>.sha256 (sha256sum format: the first field is the
// digest). A 404/403/410 answer means no sidecar.
func (r *resolver) fetchSidecar(ctx context.Context, raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("base ISO %q: %w", raw, err)
	}
	u.Path += ".sha256"
	u.RawPath = ""
	side := u.String()
	// A checksum is a few bytes: the whole request gets the stall timeout,
	// so a server that accepts it and never answers cannot hang the run.
	ctx, cancel := context.WithTimeout(ctx, r.stall)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, side, nil)
	if err != nil {
		return "", fmt.Errorf("base ISO checksum %s: %w", side, err)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("base ISO checksum %s: %w", side, err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound, http.StatusForbidden, http.StatusGone:
		return "", nil
	default:
		return "", fmt.Errorf("base ISO checksum: %w", &HTTPStatusError{URL: side, StatusCode: resp.StatusCode, Status: resp.Status})
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return "", fmt.Errorf("base ISO checksum %s: %w", side, err)
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return "", fmt.Errorf("base ISO checksum %s is empty; it must start with the 64-hex-digit sha256 of the ISO", side)
	}
	sum, err := normalizeSHA256(fields[0])
	if err != nil {
		return "", fmt.Errorf("base ISO checksum %s: %w", side, err)
	}
	return sum, nil
}

// resolveStream finds the stream ISO in the cache or downloads it.
func (r *resolver) resolveStream(ctx context.Context) (Result, error) {
	art, err := streamISO(r.opts)
	if err != nil {
		return Result{}, err
	}
	dir, err := r.ensureCacheDir()
	if err != nil {
		return Result{}, err
	}
	info := FetchInfo{
		Stream: art.Stream, Release: art.Release, Arch: art.Arch, FileName: art.FileName,
		URL: art.URL, SHA256: art.SHA256, CachePath: filepath.Join(dir, art.FileName),
	}
	src, source := art.URL, SourceDownload
	if r.opts.Mirror != "" {
		if src, err = mirrorURL(r.opts.Mirror, art.FileName); err != nil {
			return Result{}, err
		}
		info.MirrorURL, source = src, SourceMirror
	}

	hit := func() Result {
		r.log.Info("Using cached base ISO", "path", info.CachePath, "rhcos", art.Release)
		return Result{Path: info.CachePath, Source: SourceCache, SHA256: art.SHA256, Verified: true, Release: art.Release}
	}
	return r.locked(ctx, info.CachePath, art.SHA256, hit, func() (Result, error) { return r.resolveStreamLocked(ctx, art, info, src, source, hit) })
}

// resolveStreamLocked is resolveStream under the exclusive cache lock.
func (r *resolver) resolveStreamLocked(ctx context.Context, art Artifact, info FetchInfo, src string, source Source, hit func() Result) (Result, error) {
	if ok, err := r.cachedMatches(info.CachePath, art.SHA256); err != nil {
		return Result{}, err
	} else if ok {
		return hit(), nil
	}
	if r.opts.Offline {
		return Result{}, &UnavailableError{Info: info}
	}
	reg := r.opts.Registry
	var regErr error
	if reg != nil && reg.Preferred && r.opts.Mirror == "" {
		res, err := r.resolveRegistry(ctx, info)
		if err == nil || ctx.Err() != nil || isFinal(err) {
			return res, err
		}
		r.log.Warn("Could not stream the base ISO from the release payload; trying its URL", "image", reg.Image, "err", err.Error())
		regErr = err
	}
	r.log.Info("Downloading base ISO", "url", src, "cache", info.CachePath, "rhcos", art.Release)
	f := fetch{url: src, sha256: art.SHA256, final: info.CachePath, name: art.FileName}
	sum, err := r.download(ctx, f)
	if err != nil {
		if ctx.Err() != nil || isFinal(err) {
			return Result{}, fmt.Errorf("base ISO: %w", err)
		}
		if reg != nil && regErr == nil {
			r.log.Warn("Could not download the base ISO; streaming it from the release payload", "url", src, "image", reg.Image, "err", err.Error())
			res, rerr := r.resolveRegistry(ctx, info)
			if rerr == nil || ctx.Err() != nil || isFinal(rerr) {
				return res, rerr
			}
			regErr = rerr
		}
		if regErr != nil {
			err = fmt.Errorf("%w; the release payload's %s did not serve it either: %w", err, reg.Image, regErr)
		}
		return Result{}, &UnavailableError{Info: info, From: src, Err: err}
	}
	r.log.Info("Base ISO downloaded and cached", "path", info.CachePath)
	return Result{Path: info.CachePath, Source: source, SHA256: sum, Verified: true, URL: src, Release: art.Release}, nil
}

// locked runs resolve under the cache lock of the ISO at path and, with
// Options.KeepLock, hands over a shared lock on the result (else releases
// it). A run that finds the ISO cached and verified (want) needs only a
// shared lock, so runs reading the same ISO never wait for each other; one
// that may remove, download or replace it takes the lock exclusively, and
// downgrades it to shared once the ISO is in place.
func (r *resolver) locked(ctx context.Context, path, want string, hit func() Result, resolve func() (Result, error)) (Result, error) {
	lockPath := path + ".lock"
	if want != "" && r.opts.KeepLock != nil {
		lk, err := acquireLock(ctx, lockPath, r.lockWait, r.log, true)
		if err != nil {
			return Result{}, err
		}
		if ok, err := r.cachedMatchesNoRemove(path, want); err == nil && ok {
			r.opts.KeepLock(lk.release)
			return hit(), nil
		}
		lk.release()
	}
	lk, err := acquireLock(ctx, lockPath, r.lockWait, r.log, false)
	if err != nil {
		return Result{}, err
	}
	res, err := resolve()
	if err != nil || r.opts.KeepLock == nil || lk.downgrade == nil {
		lk.release()
		return res, err
	}
	// Between the exclusive lock and the shared one another run may slip
	// in: the file must still be the one just verified.
	before, serr := os.Stat(res.Path)
	if derr := lk.downgrade(); derr != nil || serr != nil {
		lk.release()
		return Result{}, fmt.Errorf("base ISO cache lock %s: %w", lockPath, errors.Join(derr, serr))
	}
	if after, err := os.Stat(res.Path); err != nil || !os.SameFile(before, after) {
		lk.release()
		return Result{}, fmt.Errorf("base ISO %s was replaced by another run while it was being verified; run again", res.Path)
	}
	if want == "" && !res.Verified && res.Path == path {
		// Downloaded with no checksum to verify it by, the file can never
		// be reused (a later run downloads it again): it is removed once
		// the caller is done with it, not left in the cache.
		r.opts.KeepLock(func() {
			if err := os.Remove(path); err == nil {
				r.log.Debug("removed the unverified base ISO download from the cache", "path", path)
			}
			lk.release()
		})
		return res, nil
	}
	r.opts.KeepLock(lk.release)
	return res, nil
}

// cachedMatchesNoRemove is cachedMatches without removing anything: a
// mismatch only says false.
func (r *resolver) cachedMatchesNoRemove(path, want string) (bool, error) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false, err
	}
	sum, err := r.fileSHA256(path)
	if err != nil || sum != want {
		return false, err
	}
	markOwn(path)
	return true, nil
}

// cachedMatches reports whether the cache holds path with digest want. A
// cached file with another digest is removed (with a warning) so it is
// fetched again.
func (r *resolver) cachedMatches(path, want string) (bool, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("cached base ISO %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return false, fmt.Errorf("cached base ISO %s is not a regular file; remove it", path)
	}
	sum, err := r.fileSHA256(path)
	if err != nil {
		return false, fmt.Errorf("cached base ISO %s: %w", path, err)
	}
	if sum == want {
		// The exact file agentiso would have written: its own from now on.
		markOwn(path)
		return true, nil
	}
	if !isOwn(path) {
		return false, fmt.Errorf("the cache holds %s, which agentiso did not write, and its sha256 is %s, not the expected %s: "+
			"agentiso never removes a file it did not write; move it away, or use another --cache-dir", path, sum, want)
	}
	r.log.Warn("Cached base ISO has the wrong sha256; removing it", "path", path, "expected", want, "actual", sum)
	if err := os.Remove(path); err != nil {
		return false, fmt.Errorf("remove corrupt cached base ISO %s: %w", path, err)
	}
	_ = os.Remove(ownMarker(path))
	return false, nil
}

// ownMarker is the empty file (".<name>.agentiso" beside it) that says
// agentiso wrote, or verified, the cached file p. Only such a file is ever
// removed from the cache: its name comes from a release's stream, and the
// cache directory may hold the user's own files.
func ownMarker(p string) string {
	return filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+".agentiso")
}

// markOwn records that agentiso wrote p (best effort: without the mark, a
// corrupt copy is reported instead of replaced).
func markOwn(p string) {
	f, err := os.OpenFile(ownMarker(p), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		f.Close()
	}
}

// replaceable refuses to put a download in place of a file at p that
// agentiso did not write.
func replaceable(p string) error {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && fi.Mode().IsRegular() && isOwn(p)) {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("the cache holds %s, which agentiso did not write: agentiso never replaces a file it did not write; move it away, or use another --cache-dir", p)
}

func isOwn(p string) bool {
	fi, err := os.Lstat(ownMarker(p))
	return err == nil && fi.Mode().IsRegular()
}

// ensureCacheDir returns the cache directory, creating it.
func (r *resolver) ensureCacheDir() (string, error) {
	return ensureCacheDir(r.opts)
}

// ensureCacheDir returns the cache directory of opts, creating it, and
// refuses one every user may write.
func ensureCacheDir(opts Options) (string, error) {
	dir, err := cacheDir(opts)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create base ISO cache directory %s: %w", dir, err)
	}
	// Another user who may write there could plant links or files by the
	// names agentiso uses (a sticky bit does not stop that).
	if fi, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("base ISO cache directory %s: %w", dir, err)
	} else if runtime.GOOS != "windows" && fi.Mode().Perm()&0o002 != 0 {
		return "", fmt.Errorf("base ISO cache directory %s is writable by every user (%s): another user could plant links or files there; "+
			"use a directory only you (or your group) can write: chmod o-w it, or pass --cache-dir", dir, fi.Mode())
	}
	return dir, nil
}

// HashRecords is where agentiso remembers the sha256 of the files it has
// hashed, base ISOs and what it built from them, so that a file it has
// read once is not read again only to be hashed: the directory "sha256" of
// the base ISO cache (cacheDirFlag, "" for the default). It records nothing
// (the zero value) when the cache directory cannot be used.
func HashRecords(cacheDirFlag string) fsutil.HashRecords {
	dir, err := ensureCacheDir(Options{CacheDir: cacheDirFlag})
	if err != nil {
		return fsutil.HashRecords{}
	}
	return fsutil.HashRecords{Dir: filepath.Join(dir, hashRecordsDir)}
}

// hashRecordsDir is HashRecords' directory in the cache.
const hashRecordsDir = "sha256"

// fileSHA256 returns the sha256 of the file at path: the one recorded for
// the file as it is now (fsutil.HashRecords: same device, inode, size and
// times) or, when there is none, computed by reading it, and then
// recorded.
func (r *resolver) fileSHA256(path string) (string, error) {
	in, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer in.Close()
	recs := HashRecords(r.opts.CacheDir)
	if sum, ok := recs.Lookup(in, ""); ok {
		r.log.Debug("sha256 of the base ISO taken from its record (the file has not changed since it was hashed)", "path", path, "sha256", sum)
		return sum, nil
	}
	sum, err := readSHA256(in)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	if err := recs.Record(in, "", sum); err != nil {
		r.log.Debug("cannot record the sha256 of the base ISO", "path", path, "err", err)
	}
	return sum, nil
}

// record remembers sum as the sha256 of the file just written at path.
func (r *resolver) record(path, sum string) {
	f, err := os.Open(path)
	if err == nil {
		err = HashRecords(r.opts.CacheDir).Record(f, "", sum)
		f.Close()
	}
	if err != nil {
		r.log.Debug("cannot record the sha256 of the base ISO", "path", path, "err", err)
	}
}

// cacheDir is opts.CacheDir or the default.
func cacheDir(opts Options) (string, error) {
	if opts.CacheDir != "" {
		return filepath.Abs(opts.CacheDir)
	}
	dir, err := DefaultCacheDir(nil)
	if err != nil {
		return "", fmt.Errorf("base ISO cache: %w", err)
	}
	return dir, nil
}

// ErrStreamUnknown is returned when the release's RHCOS stream is not known
// (its payload was not read) and the live ISO cannot be named: the caller
// says which release and asks for --base-iso. agentiso never falls back to
// another release's ISO.
var ErrStreamUnknown = errors.New("the RHCOS stream of the release is unknown")

// streamISO parses the stream metadata of opts and picks the live ISO.
func streamISO(opts Options) (Artifact, error) {
	if _, err := arch.Normalize(opts.Arch); err != nil {
		return Artifact{}, err
	}
	b := opts.Stream
	if len(b) == 0 {
		return Artifact{}, ErrStreamUnknown
	}
	st, err := ParseStream(b)
	if err != nil {
		return Artifact{}, err
	}
	return LiveISO(st, opts.Arch)
}

// mirrorURL joins the mirror base URL and the ISO file name.
func mirrorURL(mirror, name string) (string, error) {
	u, err := parseHTTPURL(mirror)
	if err != nil {
		return "", fmt.Errorf("--os-image-mirror: %w", err)
	}
	u.Path = path.Join("/", u.Path, name)
	u.RawPath = ""
	return u.String(), nil
}
