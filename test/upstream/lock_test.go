package upstream

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const c1 = "0123456789abcdef0123456789abcdef01234567"
const c2 = "89abcdef0123456789abcdef0123456789abcdef"

func TestParseLock(t *testing.T) {
	in := "# comment\n\nassisted-service release-4.20 " + c1 + " " + c2 + "\n  assisted-installer-agent master " + c2 + " " + c1 + "  \n"
	got, err := ParseLock(strings.NewReader(in), "x.lock")
	require.NoError(t, err)
	assert.Equal(t, []LockEntry{
		{Repo: "assisted-service", Branch: "release-4.20", Tree: c1, Upstream: c2},
		{Repo: "assisted-installer-agent", Branch: "master", Tree: c2, Upstream: c1},
	}, got)
	e, err := Find(got, "assisted-service", "release-4.20")
	require.NoError(t, err)
	assert.Equal(t, c2, e.Upstream)
	_, err = Find(got, "assisted-service", "release-4.99")
	assert.ErrorContains(t, err, "no assisted-service release-4.99 in the lock file (have: release-4.20)")
}

func TestParseLockErrors(t *testing.T) {
	for in, want := range map[string]string{
		"a b " + c1 + "\n":                                "x.lock:1: want 4 fields",
		"\na b " + c1 + " xyz\n":                          `x.lock:2: "xyz" is not a 40-hex-digit commit`,
		"a b " + c1 + " " + strings.ToUpper(c2):           "is not a 40-hex-digit commit",
		"a b " + c1 + " " + c2 + "\na b " + c2 + " " + c1: "x.lock:2: a b already pinned on line 1",
	} {
		_, err := ParseLock(strings.NewReader(in), "x.lock")
		assert.ErrorContains(t, err, want, "input %q", in)
	}
}

func FuzzParseLock(f *testing.F) {
	f.Add("assisted-service release-4.20 " + c1 + " " + c2 + "\n# x\n")
	f.Add("a b c d")
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ParseLock(strings.NewReader(in), "f")
		if err != nil {
			return
		}
		for _, e := range got {
			if !commitRE.MatchString(e.Tree) || !commitRE.MatchString(e.Upstream) || e.Repo == "" || e.Branch == "" {
				t.Fatalf("accepted a bad entry %+v", e)
			}
		}
	})
}

// TestLockFileMatchesBundles checks the committed upstream.lock against the
// bundles beside the clone (../shared/upstream): every branch of each bundle
// is pinned at the commit the bundle holds, and nothing else is pinned.
func TestLockFileMatchesBundles(t *testing.T) {
	entries, err := ReadLock("upstream.lock")
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	shared := filepath.Join("..", "..", "..", "shared", "upstream")
	for _, repo := range []string{"assisted-service", "assisted-installer-agent"} {
		bundle := filepath.Join(shared, repo+".bundle")
		if _, err := os.Stat(bundle); err != nil {
			t.Skipf("no %s beside the clone: the lock file cannot be checked here", bundle)
		}
		out, err := exec.Command("git", "bundle", "list-heads", bundle).Output()
		require.NoError(t, err, "git bundle list-heads %s", bundle)
		heads := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			commit, ref, ok := strings.Cut(l, " ")
			if b, isHead := strings.CutPrefix(ref, "refs/heads/"); ok && isHead {
				heads[b] = commit
			}
		}
		pinned := map[string]string{}
		for _, e := range entries {
			if e.Repo == repo {
				pinned[e.Branch] = e.Tree
			}
		}
		assert.Equal(t, heads, pinned, "%s: upstream.lock vs %s", repo, bundle)
	}
}
