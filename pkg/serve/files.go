// Package serve serves the boot media agentiso wrote into an asset directory (agent ISOs, PXE files, iPXE scripts, with their .sha256 files) over HTTP or HTTPS, read-only, each verified against its .sha256, with range requests for BMC virtual media.
package serve

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/arch"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

// File is one file the server serves.
type File struct {
	// Path is the file's slash-separated path in the asset directory,
	// which is also its URL path (without the leading "/").
	Path string
	// Size and ModTime are those of the file when it was verified.
	Size    int64
	ModTime time.Time
	// SHA256 is the verified hex sha256 of its content ("" for a .sha256
	// file itself, whose ETag is computed from its bytes when served).
	SHA256 string
	// Secret is whether the file embeds the pull secret and tokens (an
	// agent ISO, a PXE initrd).
	Secret bool

	info fs.FileInfo
}

// maxSumFileSize bounds a .sha256 file: one line of sha256sum output.
const maxSumFileSize = 4096

// candidates are the paths, relative to the asset directory, of every
// file agentiso may have written that a host boots from: for each
// architecture the agent ISO, the generic ISO (create unconfigured-image),
// the node ISO (node-image create) and the PXE files and iPXE scripts of
// an install and of a node image; and the config image (create
// config-image). Nothing else (not auth/, not the inputs, not the state,
// not agent.ign) is ever a candidate.
func candidates() []string {
	out := []string{assetdir.ConfigImage}
	for _, a := range arch.Supported() {
		out = append(out, assetdir.AgentISO(a), assetdir.UnconfiguredISO(a), assetdir.NodeISO(a),
			assetdir.IPXEScript(a), assetdir.NodeIPXEScript(a))
		for _, k := range []string{assetdir.PXEKernel, assetdir.PXEInitrd, assetdir.PXERootfs, assetdir.PXEAddrsize, assetdir.PXEGenericIns, assetdir.PXEParm} {
			out = append(out, assetdir.BootArtifact(a, k), assetdir.NodeBootArtifact(a, k))
		}
	}
	sort.Strings(out)
	return out
}

// checkExtra checks a file named to be served besides the candidates (a
// node ISO written with --output-name): a plain file name in the asset
// directory, an ISO, and none of the inputs or secrets agentiso keeps
// there.
func checkExtra(name string) error {
	if name == "" || name != path.Base(name) || strings.ContainsAny(name, "/\\\x00\n\r") || strings.HasPrefix(name, ".") {
		return fmt.Errorf("%q: give a file name in --dir (no directory, not hidden)", name)
	}
	if !strings.HasSuffix(name, ".iso") {
		return fmt.Errorf("%q: only ISOs agentiso wrote are served by name (such as node-image create --output-name's)", name)
	}
	return nil
}

// Skipped is a candidate file present in the asset directory that is not
// served, and why.
type Skipped struct {
	Path   string
	Reason string
}

// scan finds the candidates present in root and verifies each against
// its .sha256 file. It returns the files to serve (each data file
// followed by its .sha256) and the ones it refused.
func scan(root *os.Root, extra []string) (served []File, skipped []Skipped, err error) {
	named := map[string]bool{}
	list := candidates()
	for _, n := range extra {
		if err := checkExtra(n); err != nil {
			return nil, nil, err
		}
		if !slices.Contains(list, n) {
			named[n] = true
			list = append(list, n)
		}
	}
	for _, p := range list {
		fi, err := root.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			if named[p] {
				return nil, nil, fmt.Errorf("%s: no such file in the asset directory", p)
			}
			continue
		}
		if err != nil {
			skipped = append(skipped, Skipped{p, err.Error()})
			continue
		}
		if !fi.Mode().IsRegular() {
			skipped = append(skipped, Skipped{p, "not a regular file (" + fi.Mode().Type().String() + "): agentiso writes regular files only"})
			continue
		}
		f, sumFile, err := verify(root, p)
		if err != nil {
			if named[p] {
				return nil, nil, fmt.Errorf("%s: %w", p, err)
			}
			skipped = append(skipped, Skipped{p, err.Error()})
			continue
		}
		served = append(served, f, sumFile)
	}
	return served, skipped, nil
}

// verify hashes the file at p and checks it against p.sha256, returning
// the file and its .sha256 file.
func verify(root *os.Root, p string) (File, File, error) {
	want, sumInfo, err := readSum(root, p)
	if err != nil {
		return File{}, File{}, err
	}
	fh, err := root.Open(p)
	if err != nil {
		return File{}, File{}, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return File{}, File{}, err
	}
	if !fi.Mode().IsRegular() {
		return File{}, File{}, fmt.Errorf("not a regular file")
	}
	got, err := hashReader(fh)
	if err != nil {
		return File{}, File{}, fmt.Errorf("read: %w", err)
	}
	if got != want {
		return File{}, File{}, fmt.Errorf("its content (sha256 %s) is not what %s.sha256 records (%s): changed after agentiso wrote it, or a run was interrupted; run the create command again", got, path.Base(p), want)
	}
	return File{Path: p, Size: fi.Size(), ModTime: fi.ModTime(), SHA256: got, Secret: holdsSecrets(p), info: fi},
		File{Path: p + ".sha256", Size: sumInfo.Size(), ModTime: sumInfo.ModTime(), info: sumInfo}, nil
}

// holdsSecrets is whether a served file embeds the pull secret or tokens:
// every ISO (an agent, generic or node ISO holds the pull secret; the
// config image the install's tokens and keys) and every PXE initrd.
func holdsSecrets(p string) bool {
	return assetdir.Mode(p) == assetdir.Private || strings.HasSuffix(p, ".iso")
}

// readSum reads p.sha256, which agentiso writes in sha256sum's format
// ("<64 hex>  <file name>"), and returns the sum.
func readSum(root *os.Root, p string) (string, fs.FileInfo, error) {
	sp := p + ".sha256"
	fi, err := root.Lstat(sp)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, fmt.Errorf("%s is missing: agentiso writes it beside every file it builds, so this file is not one of its outputs (or a run was interrupted); run the create command again", sp)
	}
	if err != nil {
		return "", nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxSumFileSize {
		return "", nil, fmt.Errorf("%s is not a sha256sum file (a regular file of one line)", sp)
	}
	fh, err := root.Open(sp)
	if err != nil {
		return "", nil, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, maxSumFileSize+1))
	if err != nil {
		return "", nil, err
	}
	sum, err := ParseSumLine(string(b), path.Base(p))
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", sp, err)
	}
	return sum, fi, nil
}

// ParseSumLine parses a sha256sum line for the file name (text mode "  "
// or binary mode " *") and returns the lower-case hex sum.
func ParseSumLine(s, name string) (string, error) {
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 0, 256), maxSumFileSize)
	if !sc.Scan() {
		return "", errors.New("empty: expected \"<sha256>  " + name + "\"")
	}
	line := sc.Text()
	if sc.Scan() && strings.TrimSpace(sc.Text()) != "" {
		return "", errors.New("more than one line: expected \"<sha256>  " + name + "\"")
	}
	sum, rest, ok := strings.Cut(line, " ")
	if !ok || len(sum) != sha256.Size*2 {
		return "", errors.New("not a sha256sum line: expected \"<sha256>  " + name + "\"")
	}
	if _, err := hex.DecodeString(sum); err != nil {
		return "", errors.New("the sum is not hexadecimal")
	}
	rest = strings.TrimPrefix(strings.TrimPrefix(rest, " "), "*")
	if rest != name {
		return "", fmt.Errorf("names %q, not %q", rest, name)
	}
	return strings.ToLower(sum), nil
}

func hashReader(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
