//go:build linux

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
)

// maxRejectedRSS is the peak resident memory any rejected input may cost.
const maxRejectedRSS = 256 << 20

const agentConfigHead = "apiVersion: v1beta1\nkind: AgentConfig\nmetadata:\n  name: ostest\nrendezvousIP: 192.168.111.20\n"

// hostileInputs are the worst inputs found for memory, each just under or
// over the limits: name -> (file, writer).
func hostileInputs() []struct {
	name, file string
	write      func(p string) error
} {
	under := asset.MaxInputFileSize - 64
	repeatTo := func(head, unit, tail string, n int) string {
		var b strings.Builder
		b.WriteString(head)
		for b.Len()+len(unit)+len(tail) <= n {
			b.WriteString(unit)
		}
		b.WriteString(tail)
		return b.String()
	}
	writeString := func(s string) func(string) error {
		return func(p string) error { return os.WriteFile(p, []byte(s), 0o644) }
	}
	blockNest := func() string {
		var b strings.Builder
		b.WriteString(agentConfigHead + "hosts:\n- networkConfig:\n")
		for d := 2; b.Len() < under-4*d; d++ {
			b.WriteString(strings.Repeat(" ", d) + "a:\n")
		}
		return b.String()
	}
	return []struct {
		name, file string
		write      func(p string) error
	}{
		{"dev-zero", "install-config.yaml", func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"over-size-limit", "install-config.yaml", writeString(strings.Repeat("#", asset.MaxInputFileSize+1))},
		{"flow-nesting", "agent-config.yaml", writeString(agentConfigHead + "hosts:\n- networkConfig: " +
			strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + "\n")},
		{"block-nesting", "agent-config.yaml", writeString(blockNest())},
		{"dash-nesting", "agent-config.yaml", writeString(agentConfigHead + "hosts:\n- networkConfig:\n    x:\n    " + strings.Repeat("- ", 9000) + "x\n")},
		// Just under the structure limit, then rejected by validation: the
		// most a rejected file can make agentiso parse.
		{"under-node-limit", "agent-config.yaml", writeString(agentConfigHead + "hosts:\n- networkConfig:\n    x: [" +
			strings.Repeat("{a: 1}, ", manifests.MaxYAMLNodes/3-100) + "{}]\n  role: nope\n")},
		{"wide-flow-list", "agent-config.yaml", writeString(repeatTo(agentConfigHead+"unknownField: [", "1,", "1]\n", under))},
		{"wide-free-form", "agent-config.yaml", writeString(repeatTo(agentConfigHead+"hosts:\n- networkConfig:\n    x: [", "{a: 1},", "{}]\n", under))},
		{"many-hosts", "agent-config.yaml", writeString(repeatTo(agentConfigHead+"hosts:\n", "- {hostname: h, role: nope}\n", "", under))},
		{"long-scalars", "agent-config.yaml", writeString(repeatTo(agentConfigHead+"hosts:\n", "- hostname: "+strings.Repeat("h", 4000)+"\n", "", under))},
	}
}

// peakRSS runs `agentiso create cluster-manifests` on the examples/ha inputs
// with one file replaced by a hostile one, and returns the child's exit
// code, its stderr and its peak resident memory.
func peakRSS(t testing.TB, file string, write func(string) error) (int, string, int64) {
	dir := t.TempDir()
	copyDir(t.(*testing.T), "../../examples/ha", dir)
	p := filepath.Join(dir, file)
	require.NoError(t, os.Remove(p))
	require.NoError(t, write(p))
	bin := filepath.Join(t.TempDir(), "agentiso")
	self, err := os.Executable()
	require.NoError(t, err)
	require.NoError(t, os.Symlink(self, bin))
	cmd := exec.Command(bin, withTestRelease("create", "cluster-manifests", "--dir", dir)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return code, stderr.String(), ru.Maxrss << 10 // KiB on Linux
}

// TestRejectedInputsBoundedMemory is the benchmark of issue 15: every
// hostile input is rejected, and rejecting it never costs more than
// maxRejectedRSS of memory. Set AGENTISO_RSS_REPORT=1 to print the figures.
func TestRejectedInputsBoundedMemory(t *testing.T) {
	for _, in := range hostileInputs() {
		t.Run(in.name, func(t *testing.T) {
			code, stderr, rss := peakRSS(t, in.file, in.write)
			if os.Getenv("AGENTISO_RSS_REPORT") != "" {
				t.Logf("%-16s exit %d peak RSS %6.1f MiB: %s", in.name, code, float64(rss)/(1<<20), firstLine(stderr))
			}
			assert.NotEqual(t, 0, code, "a hostile input must be rejected")
			assert.Less(t, rss, int64(maxRejectedRSS), "peak RSS %d MiB", rss>>20)
		})
	}
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "ERROR") {
			if len(l) > 160 {
				l = l[:160]
			}
			return l
		}
	}
	return ""
}
