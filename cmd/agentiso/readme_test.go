package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/testiso"
	"github.com/seed-a052040e/agentiso/internal/testrelease"
)

// readmeSection returns the text of README.md from the heading heading to
// the next heading of the same or a higher level.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	s := string(b)
	i := strings.Index(s, "\n"+heading+"\n")
	require.GreaterOrEqual(t, i, 0, "README.md has no %q", heading)
	s = s[i+len(heading)+2:]
	level := heading[:strings.IndexByte(heading, ' ')+1]
	for _, l := range []string{"\n" + level, "\n" + level[1:]} {
		if j := strings.Index(s, l); j >= 0 && len(l) > 1 {
			s = s[:j]
		}
	}
	return s
}

// fenced returns the body of the first fenced block of kind lang after
// the line that contains marker.
func fenced(t *testing.T, s, marker, lang string) string {
	t.Helper()
	i := strings.Index(s, marker)
	require.GreaterOrEqual(t, i, 0, "no %q", marker)
	s = s[i:]
	open := "```" + lang + "\n"
	j := strings.Index(s, open)
	require.GreaterOrEqual(t, j, 0, "no %s block after %q", lang, marker)
	s = s[j+len(open):]
	k := strings.Index(s, "```")
	require.GreaterOrEqual(t, k, 0)
	return s[:k]
}

// sampleSizes are the sizes a sample line shows that depend on the pull
// secret and keys (the Ignition config's size and share of the embed
// area): any number matches there.
var sampleSizes = regexp.MustCompile(`\b[0-9]+( bytes)|\b[0-9]+\\\.[0-9]+(%)`)

// sampleLine makes a regular expression of a line of sample output: the
// placeholder <digest> stands for a digest, "..." for anything, a size in
// bytes or percent for any, and the sample's release repository for the
// test's.
func sampleLine(line, repo string) *regexp.Regexp {
	q := regexp.QuoteMeta(line)
	q = sampleSizes.ReplaceAllString(q, "[0-9.]+$1$2")
	q = strings.ReplaceAll(q, regexp.QuoteMeta("quay.io/openshift-release-dev/ocp-release"), regexp.QuoteMeta(repo))
	q = strings.ReplaceAll(q, regexp.QuoteMeta("<digest>"), "[0-9a-f]{64}")
	q = strings.ReplaceAll(q, regexp.QuoteMeta("..."), ".*")
	return regexp.MustCompile("^" + q + "$")
}

// TestREADMEWorkedExample runs the README's worked example as written,
// with its install-config.yaml and agent-config.yaml, its commands and the
// release of its environment variable (a loopback registry and a test ISO
// stand in for quay.io and the RHCOS ISO; the pull secret and the
// registry's CA are the test's), and checks that every line of output the
// README shows is a line the command printed, in order.
func TestREADMEWorkedExample(t *testing.T) {
	sec := readmeSection(t, "### Worked example: a single-node cluster with a static IP")
	ic := fenced(t, sec, "`mycluster/install-config.yaml`:", "yaml")
	ac := fenced(t, sec, "`mycluster/agent-config.yaml`:", "yaml")
	console := fenced(t, sec, "Then (this output is checked", "console")

	reg, err := testrelease.NewRegistry(testrelease.RegistryOptions{Auth: testrelease.AuthBasic})
	require.NoError(t, err)
	defer reg.Close()
	obj, err := testrelease.Payload{Version: "4.20.3", Arch: "x86_64"}.Image()
	require.NoError(t, err)
	digest, err := reg.Push("ocp/release", "4.20.3-x86_64", obj)
	require.NoError(t, err)
	repo := reg.Host + "/ocp/release"

	work := t.TempDir()
	t.Chdir(work)
	t.Setenv("HOME", work)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(work, ".cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(work, ".config"))
	for _, k := range []string{"AGENTISO_RELEASE_IMAGE", "AGENTISO_RELEASE_VERSION", "AGENTISO_OFFLINE", "AGENTISO_BASE_ISO", "AGENTISO_CONFIG"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	require.NoError(t, os.MkdirAll(filepath.Join(work, "mycluster"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(work, "isos"), 0o755))
	_, err = testiso.WriteFile(filepath.Join(work, "isos", "rhcos-live.x86_64.iso"), testiso.Options{})
	require.NoError(t, err)
	// The test's pull secret and registry CA replace the README's.
	ps := regexp.MustCompile(`(?m)^pullSecret: .*$`)
	require.True(t, ps.MatchString(ic))
	ic = ps.ReplaceAllLiteralString(ic, "pullSecret: '"+string(reg.PullSecret())+"'\nadditionalTrustBundle: |\n  "+strings.ReplaceAll(strings.TrimSpace(string(reg.CAPEM)), "\n", "\n  "))
	require.NoError(t, os.WriteFile(filepath.Join(work, "mycluster", "install-config.yaml"), []byte(ic), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(work, "mycluster", "agent-config.yaml"), []byte(ac), 0o600))

	type step struct {
		cmd  string
		want []string
	}
	var steps []step
	sc := bufio.NewScanner(strings.NewReader(console))
	for sc.Scan() {
		l := sc.Text()
		if c, ok := strings.CutPrefix(l, "$ "); ok {
			steps = append(steps, step{cmd: c})
			continue
		}
		require.NotEmpty(t, steps, "output before the first command: %q", l)
		steps[len(steps)-1].want = append(steps[len(steps)-1].want, l)
	}
	require.NotEmpty(t, steps)
	ran := 0
	for _, st := range steps {
		f := strings.Fields(strings.ReplaceAll(st.cmd, "~/", work+"/"))
		switch {
		case len(f) == 2 && f[0] == "export":
			k, v, ok := strings.Cut(f[1], "=")
			require.True(t, ok, st.cmd)
			v = strings.ReplaceAll(v, "quay.io/openshift-release-dev/ocp-release@sha256:<digest>", repo+"@"+digest)
			t.Setenv(k, v)
			continue
		case f[0] != "agentiso":
			t.Fatalf("README's worked example runs %q: the test knows export and agentiso only", st.cmd)
		case len(f) > 1 && f[1] == "wait-for":
			// Needs a cluster: its output is docs/wait-for.md's.
			require.Empty(t, st.want, "wait-for's sample output cannot be checked here")
			continue
		}
		var out, errOut bytes.Buffer
		code := run(f[1:], strings.NewReader(""), &out, &errOut)
		require.Equal(t, 0, code, "%s:\n%s", st.cmd, errOut.String())
		got := strings.Split(strings.TrimRight(errOut.String()+out.String(), "\n"), "\n")
		i := 0
		for _, w := range st.want {
			re := sampleLine(w, repo)
			for i < len(got) && !re.MatchString(got[i]) {
				i++
			}
			if !assert.Less(t, i, len(got), "README.md shows %q after %q, but the command printed (in this order):\n%s", w, st.cmd, strings.Join(got, "\n")) {
				break
			}
			i++
		}
		ran++
	}
	assert.GreaterOrEqual(t, ran, 2, "the worked example's create commands ran")
}
