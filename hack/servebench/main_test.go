package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	assert.Equal(t, 99*time.Millisecond, percentile(d, 0.99))
	assert.Equal(t, 50*time.Millisecond, percentile(d, 0.5))
	assert.Equal(t, 100*time.Millisecond, percentile(d, 1))
	assert.Equal(t, 7*time.Millisecond, percentile([]time.Duration{7 * time.Millisecond}, 0.99))
	assert.Zero(t, percentile(nil, 0.99))
	assert.Equal(t, 100*time.Millisecond, d[0], "the input is left unsorted")
}

func TestMedian(t *testing.T) {
	assert.Equal(t, 2.0, median([]float64{3, 1, 2}))
	assert.Equal(t, 2.5, median([]float64{4, 1, 2, 3}))
	assert.Zero(t, median(nil))
}

func TestParseProc(t *testing.T) {
	status := "Name:\tagentiso\nVmPeak:\t 1300000 kB\nVmHWM:\t   25344 kB\nVmRSS:\t   20000 kB\n"
	assert.EqualValues(t, 25344<<10, parseVmHWM(status))
	assert.Zero(t, parseVmHWM("Name:\tx\n"))
	// A command name with spaces and parentheses; utime 150, stime 50 ticks.
	stat := "4242 (nginx: a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 150 50 0 0 20 0 1 0 100 0 0"
	assert.Equal(t, 2*time.Second, parseStatCPU(stat))
	assert.Zero(t, parseStatCPU("garbage"))
}

func TestCheckAnswer(t *testing.T) {
	resp := func(code int, cl int64, cr string) *http.Response {
		h := http.Header{}
		if cr != "" {
			h.Set("Content-Range", cr)
		}
		return &http.Response{StatusCode: code, Status: http.StatusText(code), ContentLength: cl, Header: h}
	}
	require.NoError(t, checkAnswer(resp(206, 1<<20, "bytes 2048-1050623/4194304"), "range", 2048, 1<<20, 4<<20))
	assert.ErrorContains(t, checkAnswer(resp(200, 4<<20, ""), "range", 2048, 1<<20, 4<<20), "Content-Range")
	assert.ErrorContains(t, checkAnswer(resp(206, 1<<19, "bytes 2048-1050623/4194304"), "range", 2048, 1<<20, 4<<20), "Content-Length")
	require.NoError(t, checkAnswer(resp(200, 4<<20, ""), "whole", 0, 4<<20, 4<<20))
	assert.ErrorContains(t, checkAnswer(resp(404, 10, ""), "whole", 0, 4<<20, 4<<20), "status")
}

func TestReadBodyChecksTheBytes(t *testing.T) {
	p := filepath.Join(t.TempDir(), isoName)
	require.NoError(t, writeFile(p, 4<<20))
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	sum, err := os.ReadFile(p + ".sha256")
	require.NoError(t, err)
	assert.Regexp(t, `^[0-9a-f]{64}  `+isoName+`\n$`, string(sum))
	buf := make([]byte, readBuf)
	n, err := readBody(strings.NewReader(string(data[8192:8192+100000])), buf, f, 8192)
	require.NoError(t, err)
	assert.EqualValues(t, 100000, n)
	_, err = readBody(strings.NewReader(string(data[4096:4096+100000])), buf, f, 8192)
	assert.ErrorContains(t, err, "not the file's bytes")
	_, err = readBody(strings.NewReader("short"), buf, f, 0)
	assert.ErrorContains(t, err, "body of 5 bytes")
}

func TestVerdict(t *testing.T) {
	ok := func(mibps float64, lat time.Duration, rss int64) result {
		return result{bytes: int64(mibps * float64(1<<20)), dur: time.Second, lat: []time.Duration{lat}, peakRSS: rss}
	}
	r := row{proto: "http", mode: "range", clients: 50, ag: []result{ok(96, 10*time.Millisecond, 30<<20)}, ng: []result{ok(100, 10*time.Millisecond, 0)}}
	assert.Empty(t, r.verdict())
	r.ag[0] = ok(90, 16*time.Millisecond, 70<<20)
	assert.Equal(t, []string{"throughput 0.900x < 0.95x", "p99 1.60x > 1.5x", "RSS 70 MiB >= 64"}, r.verdict())
	w := row{proto: "https", mode: "whole", clients: 1, ag: []result{ok(99, 0, 0)}, ng: []result{ok(100, 0, 0)}}
	assert.Equal(t, []string{"throughput 0.990x < 1.00x"}, w.verdict())
	// Just under the goal: not rounded up to it.
	r.ag[0] = ok(94.97, 10*time.Millisecond, 30<<20)
	assert.Equal(t, []string{"throughput 0.949x < 0.95x"}, r.verdict())
}

// TestOwnCPUTimeLeavesChildrenOut: the client's CPU is the load
// generator's own; a child busy meanwhile (a server it started) is not
// counted in it.
func TestOwnCPUTimeLeavesChildrenOut(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc")
	}
	child := exec.Command("sh", "-c", "while :; do :; done")
	require.NoError(t, child.Start())
	t.Cleanup(func() {
		_ = child.Process.Kill()
		_ = child.Wait()
	})
	own0, child0 := ownCPUTime(), cpuTime(child.Process.Pid)
	// However loaded the machine, until the child has had 300 ms of CPU.
	var own, busy time.Duration
	for end := time.Now().Add(60 * time.Second); busy < 300*time.Millisecond && time.Now().Before(end); {
		time.Sleep(100 * time.Millisecond)
		own, busy = ownCPUTime()-own0, cpuTime(child.Process.Pid)-child0
	}
	require.GreaterOrEqual(t, busy, 300*time.Millisecond, "the child was busy")
	assert.Less(t, own, busy/2, "the child's CPU is not the client's")
}
