package baseiso

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"sort"
	"strings"

	"github.com/coreos/stream-metadata-go/stream"

	"github.com/seed-a052040e/agentiso/pkg/arch"
)

// Artifact is the live ISO named by CoreOS stream metadata for one
// architecture.
type Artifact struct {
	Stream   string // stream name, e.g. "rhcos-4.16"
	Arch     string // RPM architecture, e.g. "x86_64"
	Release  string // RHCOS build, e.g. "416.94.202405291527-0"
	URL      string // download location of the ISO
	SHA256   string // lowercase hex sha256 of the ISO
	FileName string // base name of URL; also the file name in the cache
}

// ParseStream decodes CoreOS stream metadata JSON. It only checks that the
// document is a JSON object with a "stream" name and at least one
// architecture; per-artifact checks happen in LiveISO.
func ParseStream(b []byte) (*stream.Stream, error) {
	var st stream.Stream
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("parse CoreOS stream metadata: %w", err)
	}
	if st.Stream == "" {
		return nil, errors.New("parse CoreOS stream metadata: field \"stream\" is missing or empty")
	}
	if len(st.Architectures) == 0 {
		return nil, fmt.Errorf("parse CoreOS stream metadata %q: field \"architectures\" is missing or empty", st.Stream)
	}
	return &st, nil
}

// LiveISO returns the live ISO artifact
// (architectures.<arch>.artifacts.metal.formats.iso.disk) of the stream for
// cpu (any spelling arch.Normalize accepts; empty is arch.Default), after
// checking that its location is an absolute http(s) URL with a usable file name and that its
// sha256 is 64 hex digits.
func LiveISO(st *stream.Stream, cpu string) (Artifact, error) {
	a, err := arch.Normalize(cpu)
	if err != nil {
		return Artifact{}, err
	}
	prefix := fmt.Sprintf("CoreOS stream %q", st.Stream)
	ar, ok := st.Architectures[a]
	if !ok {
		have := make([]string, 0, len(st.Architectures))
		for k := range st.Architectures {
			have = append(have, k)
		}
		sort.Strings(have)
		return Artifact{}, fmt.Errorf("%s has no architecture %q (it has: %s)", prefix, a, strings.Join(have, ", "))
	}
	metal, ok := ar.Artifacts["metal"]
	if !ok {
		return Artifact{}, fmt.Errorf("%s: architectures.%s.artifacts.metal is missing", prefix, a)
	}
	iso, ok := metal.Formats["iso"]
	if !ok || iso.Disk == nil {
		return Artifact{}, fmt.Errorf("%s: architectures.%s.artifacts.metal.formats.iso.disk is missing", prefix, a)
	}
	field := fmt.Sprintf("architectures.%s.artifacts.metal.formats.iso.disk", a)
	name, err := fileNameFromURL(iso.Disk.Location)
	if err != nil {
		return Artifact{}, fmt.Errorf("%s: %s.location: %w", prefix, field, err)
	}
	sum, err := normalizeSHA256(iso.Disk.Sha256)
	if err != nil {
		return Artifact{}, fmt.Errorf("%s: %s.sha256: %w", prefix, field, err)
	}
	return Artifact{
		Stream:   st.Stream,
		Arch:     a,
		Release:  metal.Release,
		URL:      iso.Disk.Location,
		SHA256:   sum,
		FileName: name,
	}, nil
}

// fileNameFromURL checks that raw is an absolute http(s) URL and returns the
// last element of its path, which must be a plain file name.
func fileNameFromURL(raw string) (string, error) {
	u, err := parseHTTPURL(raw)
	if err != nil {
		return "", err
	}
	name := path.Base(u.Path)
	if !safeFileName(name) {
		return "", fmt.Errorf("URL %q does not end in a file name", raw)
	}
	return name, nil
}

// parseHTTPURL parses raw and requires an http or https scheme and a host.
func parseHTTPURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid URL %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("URL %q must use http or https", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("URL %q has no host", raw)
	}
	return u, nil
}

// safeFileName reports whether name can be used as a single file name inside
// the cache directory.
func safeFileName(name string) bool {
	if name == "" || name == "." || name == ".." || name == "/" {
		return false
	}
	if strings.ContainsAny(name, "/\\\x00") {
		return false
	}
	return true
}

// normalizeSHA256 lower-cases s and checks it is a 64-digit hex string.
func normalizeSHA256(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if len(s) != 64 {
		return "", fmt.Errorf("sha256 %q must be 64 hex digits", s)
	}
	if _, err := hex.DecodeString(s); err != nil {
		return "", fmt.Errorf("sha256 %q is not hex", s)
	}
	return s, nil
}

// PXERootfsURL returns the location of the live root file system that goes
// with the stream's live ISO for cpu
// (architectures.<arch>.artifacts.metal.formats.pxe.rootfs), after checking
// it is an absolute http(s) URL.
func PXERootfsURL(st *stream.Stream, cpu string) (string, error) {
	a, err := arch.Normalize(cpu)
	if err != nil {
		return "", err
	}
	field := fmt.Sprintf("architectures.%s.artifacts.metal.formats.pxe.rootfs", a)
	pxe, ok := st.Architectures[a].Artifacts["metal"].Formats["pxe"]
	if !ok || pxe.Rootfs == nil || pxe.Rootfs.Location == "" {
		return "", fmt.Errorf("CoreOS stream %q: %s is missing", st.Stream, field)
	}
	if _, err := parseHTTPURL(pxe.Rootfs.Location); err != nil {
		return "", fmt.Errorf("CoreOS stream %q: %s.location: %w", st.Stream, field, err)
	}
	return pxe.Rootfs.Location, nil
}

// SameStream reports whether two RHCOS releases are builds of the same
// stream: the same release with the build's date and serial left out
// ("418.94.202501221327-0" and "418.94.202503101200-0" are both 418.94,
// the 4.18-9.4 stream; "9.6.20251021-0" and "9.6.20260101-0" are both
// 9.6, the rhel-9.6 stream).
func SameStream(a, b string) bool {
	sa, oka := streamOf(a)
	sb, okb := streamOf(b)
	return oka && okb && sa == sb
}

// streamOf is an RHCOS release without its build id (the last
// dot-separated field, "<date>-<serial>").
func streamOf(release string) (string, bool) {
	i := strings.LastIndex(release, ".")
	if i <= 0 {
		return "", false
	}
	build := release[i+1:]
	date, serial, ok := strings.Cut(build, "-")
	if !ok || len(date) < 8 || !allDigits(date) || serial == "" || !allDigits(serial) {
		return "", false
	}
	return release[:i], true
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}
