package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// consoleBlock is one ```console block of README.md or docs/*.md.
type consoleBlock struct {
	file string // relative to the repository, e.g. "docs/release.md"
	line int    // of the opening fence
	text string
}

// key names a block by its file and its first line.
func (b consoleBlock) key() string {
	first, _, _ := strings.Cut(b.text, "\n")
	return b.file + ": " + first
}

// showsOutput reports whether the block shows lines agentiso printed: any
// line that is not a command, a here-document's body, a comment or blank,
// in a block that runs agentiso or shows agentiso's log lines.
func (b consoleBlock) showsOutput() bool {
	runs := false
	for _, st := range parseConsole(b.text) {
		if strings.Contains(st.cmd, "agentiso ") && len(st.want) > 0 {
			runs = true
		}
	}
	return runs || regexp.MustCompile(`(?m)^(INFO|WARNING|ERROR) `).MatchString(b.text)
}

// consoleBlocks returns every console block of README.md and docs/*.md.
func consoleBlocks(t *testing.T) []consoleBlock {
	t.Helper()
	root := filepath.Join("..", "..")
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	var out []consoleBlock
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		rel, err := filepath.Rel(root, f)
		require.NoError(t, err)
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines); i++ {
			if lines[i] != "```console" {
				continue
			}
			j := i + 1
			for j < len(lines) && !strings.HasPrefix(lines[j], "```") {
				j++
			}
			require.Less(t, j, len(lines), "%s:%d: console block never closed", rel, i+1)
			out = append(out, consoleBlock{file: rel, line: i + 1, text: strings.Join(lines[i+1:j], "\n") + "\n"})
			i = j
		}
	}
	return out
}

// consoleStep is one command of a console block and the lines it shows.
type consoleStep struct {
	cmd  string
	want []string
}

// parseConsole splits a console block into commands ("$ " lines, with a
// here-document's body up to its delimiter) and the output lines after
// each; "# " comments and blank lines are neither.
func parseConsole(text string) []consoleStep {
	var steps []consoleStep
	sc := bufio.NewScanner(strings.NewReader(text))
	heredoc := regexp.MustCompile(`<<'?([A-Z]+)'?`)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "$ "):
			cmd := strings.TrimPrefix(l, "$ ")
			if m := heredoc.FindStringSubmatch(cmd); m != nil {
				for sc.Scan() {
					cmd += "\n" + sc.Text()
					if sc.Text() == m[1] {
						break
					}
				}
			}
			steps = append(steps, consoleStep{cmd: cmd})
		case strings.TrimSpace(l) == "", strings.HasPrefix(l, "# "):
		default:
			if len(steps) == 0 {
				steps = append(steps, consoleStep{})
			}
			steps[len(steps)-1].want = append(steps[len(steps)-1].want, l)
		}
	}
	return steps
}

// docShell runs a console block's commands the way a user would, with
// bash, in dir, with agentiso on PATH (this test binary under that name:
// TestMain runs it as the command) and nothing of the developer's
// settings; repl rewrites the doc's placeholders (an address, a digest)
// into the test's in commands and in the expected lines alike.
type docShell struct {
	dir  string
	env  []string
	repl *strings.Replacer
}

func newDocShell(t *testing.T) *docShell {
	t.Helper()
	// Not t.TempDir: its name has the subtest's, and a "$" there would be
	// expanded by the shell in the commands that name the directory.
	dir, err := os.MkdirTemp("", "agentiso-docs-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, ".bin")
	require.NoError(t, os.Mkdir(bin, 0o755))
	exe, err := os.Executable()
	require.NoError(t, err)
	require.NoError(t, os.Symlink(exe, filepath.Join(bin, "agentiso")))
	env := []string{
		"PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin",
		"HOME=" + dir,
		"XDG_CACHE_HOME=" + filepath.Join(dir, ".cache"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, ".config"),
		"LANG=C.UTF-8",
		"TERM=dumb",
	}
	return &docShell{dir: dir, env: env, repl: strings.NewReplacer()}
}

func (s *docShell) setenv(k, v string) { s.env = append(s.env, k+"="+v) }

func (s *docShell) write(t *testing.T, name, content string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(s.dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), mode))
}

// run runs every command of the block and checks that each line the block
// shows after a command is a line that command printed, in order (a
// <digest> placeholder stands for a digest, "..." for anything, a size in
// bytes or percent for any). A command whose shown output has an ERROR
// line must fail; every other must succeed. wait-for needs a cluster: it
// is not run, and the block may show nothing of it.
func (s *docShell) run(t *testing.T, b consoleBlock, steps []consoleStep) {
	t.Helper()
	ran := 0
	for _, st := range steps {
		require.NotEmpty(t, st.cmd, "%s:%d: output shown before any command", b.file, b.line)
		if strings.Contains(st.cmd, "agentiso wait-for ") {
			require.Empty(t, st.want, "%s:%d: wait-for's output cannot be checked without a cluster", b.file, b.line)
			continue
		}
		// ls lists in columns, as it does on the terminal the docs show.
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", "ls() { command ls -C --tabsize=0 \"$@\"; }\n"+s.repl.Replace(st.cmd))
		cmd.Dir = s.dir
		cmd.Env = s.env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		fails := false
		for _, w := range st.want {
			fails = fails || strings.HasPrefix(w, "ERROR ")
		}
		if fails {
			require.Error(t, err, "%s:%d: %q shows an error, but it succeeded:\n%s", b.file, b.line, st.cmd, out.String())
		} else {
			require.NoError(t, err, "%s:%d: %q:\n%s", b.file, b.line, st.cmd, out.String())
		}
		got := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
		i := 0
		for _, w := range st.want {
			re := sampleLine(s.repl.Replace(w))
			for i < len(got) && !re.MatchString(got[i]) {
				i++
			}
			if !assert.Less(t, i, len(got), "%s:%d shows %q after %q, but the command printed (in this order):\n%s", b.file, b.line, w, st.cmd, out.String()) {
				break
			}
			i++
		}
		ran++
	}
	assert.Positive(t, ran, "%s:%d: no command ran", b.file, b.line)
}

// TestDocsConsoleOutput runs every console block of README.md and docs/
// that shows agentiso's output, each in the setting its text describes
// (the README's example directory, the lab's config file, the factory and
// the site), with a loopback registry and a test ISO in place of quay.io
// and RHCOS, and checks that what the docs show is what the tool prints.
// A new block that shows output fails here until it has a setting.
func TestDocsConsoleOutput(t *testing.T) {
	checks := docConsoleChecks()
	seen := map[string]bool{}
	for _, b := range consoleBlocks(t) {
		if !b.showsOutput() {
			continue
		}
		k := b.key()
		seen[k] = true
		check, ok := checks[k]
		if !assert.True(t, ok, "%s:%d shows agentiso's output, but no test checks it: add a setting for %q to docConsoleChecks", b.file, b.line, k) {
			continue
		}
		t.Run(b.file+":"+strings.TrimPrefix(k, b.file+": "), func(t *testing.T) {
			t.Parallel()
			check(t, b)
		})
	}
	var stale []string
	for k := range checks {
		if !seen[k] {
			stale = append(stale, k)
		}
	}
	sort.Strings(stale)
	assert.Empty(t, stale, "docConsoleChecks names blocks the docs no longer have (or that show no output)")
}
