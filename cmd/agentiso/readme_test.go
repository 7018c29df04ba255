package main

import (
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestREADMELayoutMatchesPackageDocs keeps the README's Layout table and the
// tree in step: every Go package has a package comment and a row, and the
// row says what the comment's first sentence says (without "Package x" or
// "Command x"). Rows for paths that are not Go packages (hack/, examples/)
// must name a directory that exists.
func TestREADMELayoutMatchesPackageDocs(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	_, layout, ok := strings.Cut(string(readme), "\n## Layout\n")
	require.True(t, ok, "README.md has no Layout section")
	layout, _, _ = strings.Cut(layout, "\n## ")
	rowRE := regexp.MustCompile("(?m)^\\| `([^`]+)` \\| (.*) \\|$")
	rows := map[string]string{}
	for _, m := range rowRE.FindAllStringSubmatch(layout, -1) {
		rows[m[1]] = m[2]
	}
	require.NotEmpty(t, rows)

	packages := map[string]string{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		synopsis, isPkg := packageSynopsis(t, p)
		if isPkg {
			rel, err := filepath.Rel(root, p)
			require.NoError(t, err)
			packages[filepath.ToSlash(rel)] = synopsis
		}
		return nil
	})
	require.NoError(t, err)
	require.Contains(t, packages, "pkg/asset")

	for pkg, synopsis := range packages {
		if !assert.NotEmpty(t, synopsis, "%s has no package comment", pkg) {
			continue
		}
		row, ok := rows[pkg]
		if !assert.True(t, ok, "README.md Layout has no row for %s; add:\n| `%s` | %s |", pkg, pkg, synopsis) {
			continue
		}
		assert.Equal(t, synopsis, row, "README.md Layout row for %s differs from its package comment", pkg)
	}
	for path := range rows {
		if _, ok := packages[path]; ok {
			continue
		}
		fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(path)))
		if assert.NoError(t, err, "README.md Layout names %s, which does not exist", path) {
			assert.True(t, fi.IsDir(), "README.md Layout names %s, which is not a directory", path)
		}
	}
}

// packageSynopsis returns the first sentence of the package comment of the
// Go package in dir without its "Package x "/"Command x " opening, and
// whether dir holds a Go package (non-test .go files).
func packageSynopsis(t *testing.T, dir string) (string, bool) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	isPkg := false
	text := ""
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		isPkg = true
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, n), nil, parser.PackageClauseOnly|parser.ParseComments)
		require.NoError(t, err)
		if f.Doc != nil {
			text = f.Doc.Text()
		}
	}
	if text == "" {
		return "", isPkg
	}
	s := (&doc.Package{}).Synopsis(text)
	for _, prefix := range []string{"Package ", "Command "} {
		if rest, ok := strings.CutPrefix(s, prefix); ok {
			if _, after, ok := strings.Cut(rest, " "); ok {
				return after, isPkg
			}
		}
	}
	return s, isPkg
}
