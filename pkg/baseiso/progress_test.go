package baseiso

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock advances only when told to.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time           { return c.t }
func (c *fakeClock) add(d time.Duration)      { c.t = c.t.Add(d) }
func newFakeClock() *fakeClock                { return &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }
func chunk(n int) []byte                      { return make([]byte, n) }
func lines(s string) []string                 { return strings.Split(strings.TrimRight(s, "\n"), "\n") }
func writeN(t *testing.T, p *progress, n int) { _, err := p.Write(chunk(n)); require.NoError(t, err) }

func TestProgressPlainLinesEveryTenPercent(t *testing.T) {
	var out bytes.Buffer
	c := newFakeClock()
	const mib = 1 << 20
	p := newProgress(&out, false, "x.iso", c.now, 0, 100*mib)
	for range 100 {
		c.add(100 * time.Millisecond) // 1 MiB per 100 ms = 10 MiB/s
		writeN(t, p, mib)
	}
	p.finish(true)
	got := lines(out.String())
	require.Len(t, got, 11, out.String()) // header, 10%..90%, summary
	assert.Equal(t, "Downloading x.iso (100.0 MiB)", got[0])
	assert.Equal(t, "Downloading x.iso: 10.0 MiB / 100.0 MiB (10%)  10.0 MiB/s  ETA 0:09", got[1])
	assert.Equal(t, "Downloading x.iso: 90.0 MiB / 100.0 MiB (90%)  10.0 MiB/s  ETA 0:01", got[9])
	assert.Equal(t, "Downloaded x.iso: 100.0 MiB in 10s (10.0 MiB/s)", got[10])
	assert.NotContains(t, out.String(), "\r")
}

func TestProgressPlainLineEveryTenSecondsWhenSlow(t *testing.T) {
	var out bytes.Buffer
	c := newFakeClock()
	p := newProgress(&out, false, "x.iso", c.now, 0, 1<<30)
	for range 30 {
		c.add(time.Second)
		writeN(t, p, 1024)
	}
	got := lines(out.String())
	require.Len(t, got, 4) // header + at 10 s, 20 s, 30 s
	assert.True(t, strings.HasPrefix(got[1], "Downloading x.iso: 10.0 KiB / 1.0 GiB (0%)  1.0 KiB/s  ETA "), got[1])
}

func TestProgressUnknownTotal(t *testing.T) {
	var out bytes.Buffer
	c := newFakeClock()
	p := newProgress(&out, false, "x.iso", c.now, 0, -1)
	c.add(11 * time.Second)
	writeN(t, p, 2048)
	got := lines(out.String())
	require.Len(t, got, 2)
	assert.Equal(t, "Downloading x.iso (size unknown)", got[0])
	assert.Equal(t, "Downloading x.iso: 2.0 KiB  186 B/s", got[1])
}

func TestProgressResumeRateCountsOnlyNewBytes(t *testing.T) {
	var out bytes.Buffer
	c := newFakeClock()
	p := newProgress(&out, false, "x.iso", c.now, 50<<20, 100<<20)
	c.add(10 * time.Second)
	writeN(t, p, 10<<20)
	got := lines(out.String())
	require.Len(t, got, 2)
	assert.Equal(t, "Resuming download of x.iso at 50.0 MiB / 100.0 MiB (50%)", got[0])
	assert.Equal(t, "Downloading x.iso: 60.0 MiB / 100.0 MiB (60%)  1.0 MiB/s  ETA 0:40", got[1])
}

func TestProgressTTYRedrawsInPlace(t *testing.T) {
	var out bytes.Buffer
	c := newFakeClock()
	p := newProgress(&out, true, "x.iso", c.now, 0, 1000)
	writeN(t, p, 100) // too soon: no redraw
	assert.Empty(t, out.String())
	c.add(time.Second)
	writeN(t, p, 100)
	assert.Equal(t, "\rx.iso  200 B / 1000 B (20%)  200 B/s  ETA 0:04\x1b[K", out.String())
	c.add(100 * time.Millisecond)
	writeN(t, p, 100) // within 200 ms of the last redraw
	assert.Equal(t, 1, strings.Count(out.String(), "\r"))
	c.add(time.Second)
	writeN(t, p, 700)
	p.finish(true)
	s := out.String()
	assert.Equal(t, 3, strings.Count(s, "\r"))
	assert.True(t, strings.HasSuffix(s, "\rx.iso  1000 B / 1000 B (100%)  476 B/s  ETA 0:00\x1b[K\n"), "%q", s)
	assert.Equal(t, 1, strings.Count(s, "\n"))
}

func TestProgressNilWriter(t *testing.T) {
	p := newProgress(nil, true, "x.iso", time.Now, 0, 10)
	n, err := p.Write(chunk(10))
	require.NoError(t, err)
	assert.Equal(t, 10, n)
	p.finish(true)
}

func TestHumanBytesAndETA(t *testing.T) {
	assert.Equal(t, "0 B", humanBytes(0))
	assert.Equal(t, "1023 B", humanBytes(1023))
	assert.Equal(t, "1.0 KiB", humanBytes(1024))
	assert.Equal(t, "1.5 MiB", humanBytes(3<<19))
	assert.Equal(t, "1.1 GiB", humanBytes(1181116006))
	assert.Equal(t, "0:05", formatETA(5*time.Second))
	assert.Equal(t, "59:59", formatETA(time.Hour-time.Second))
	assert.Equal(t, "1:00:01", formatETA(time.Hour+time.Second))
}

func TestParseContentRange(t *testing.T) {
	for in, want := range map[string]struct {
		start, size int64
		ok          bool
	}{
		"bytes 100-199/200": {100, 200, true},
		"bytes 0-0/1":       {0, 1, true},
		"bytes 100-199/*":   {100, -1, true},
		"bytes */200":       {-1, 200, true},
		"bytes */*":         {-1, -1, false},
		"bytes 100-99/200":  {0, 0, false},
		"bytes 100-200/200": {0, 0, false},
		"bytes -1-5/10":     {0, 0, false},
		"items 0-1/2":       {0, 0, false},
		"bytes 0-1":         {0, 0, false},
		"":                  {0, 0, false},
	} {
		s, n, ok := parseContentRange(in)
		assert.Equal(t, want.ok, ok, in)
		if want.ok {
			assert.Equal(t, want.start, s, in)
			assert.Equal(t, want.size, n, in)
		}
	}
}
