package asset

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
)

// Input limits: far above what any real cluster needs (the whole agent
// Ignition config must fit a 256 KiB compressed embed area in the ISO), and
// low enough that a hostile or mistaken input (a huge file, /dev/zero, a
// FIFO) is refused quickly with bounded memory. Listed in docs/inputs.md.
const (
	// MaxInputFileSize bounds every input file read from the asset
	// directory (install-config.yaml, agent-config.yaml, manifests, mirror
	// configuration, extra manifests).
	MaxInputFileSize = 4 << 20
	// MaxStateFileSize bounds .agentiso/state.json.
	MaxStateFileSize = 64 << 20
)

// Source says where a resolved asset came from.
type Source string

// Sources of a resolved asset.
const (
	FromGenerator Source = "generated"
	FromState     Source = "state"
	FromUser      Source = "user"
)

type stateFile struct {
	Version int                    `json:"version"`
	Assets  map[string]*assetState `json:"assets"`
}

type assetState struct {
	// Hash is the fingerprint of the parents the data was generated from.
	Hash string          `json:"hash"`
	Data json.RawMessage `json:"data"`
	// Files records what was last written (or found, for user files)
	// for each of the asset's files: content hash and who owns it.
	Files map[string]fileState `json:"files,omitempty"`
	// Inputs is, for data from the user's files, the fingerprint of the
	// parents it would otherwise be generated from: a later change of
	// those is pointed out, since it does not reach the user's copy.
	Inputs string `json:"inputs,omitempty"`
}

type fileState struct {
	SHA256 string `json:"sha256"`
	User   bool   `json:"user,omitempty"`
}

type resolved struct {
	asset  Asset
	fp     string
	source Source
}

// Store resolves assets against an asset directory and its state.
type Store struct {
	// stateProblem is "" when the state file was read, "missing" when
	// there was none, or "unreadable (reason)".
	stateProblem string
	dir          string
	log          *slog.Logger
	state        *stateFile
	done         map[reflect.Type]*resolved
	stack        []string
	// outputs are what Persist wrote (Outputs).
	outputs []Output
	// writerOf names the command that writes an asset's files, for the
	// hint on stale outputs; nil or "" when unknown (SetWriterOf).
	writerOf func(Asset) string
}

// SetWriterOf tells the store which command writes each asset's files
// ("create ignition"), so that a note on a stale output names the command
// that refreshes it.
func (s *Store) SetWriterOf(f func(Asset) string) { s.writerOf = f }

// NewStore opens the asset directory dir (created if missing) and loads
// its state.
func NewStore(dir string, log *slog.Logger) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create asset directory: %w", err)
	}
	s := &Store{dir: dir, log: log, done: map[reflect.Type]*resolved{}, state: &stateFile{Version: 1, Assets: map[string]*assetState{}}}
	b, err := fsutil.ReadRegular(filepath.Join(dir, assetdir.State), MaxStateFileSize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.stateProblem = "missing"
	case err != nil:
		return nil, fmt.Errorf("read state: %w", err)
	default:
		if err := decodeState(b, s.state); err != nil {
			s.stateProblem = "unreadable (" + err.Error() + ")"
			log.Warn("ignoring unreadable state file; everything will be regenerated", "file", filepath.Join(dir, assetdir.State), "reason", err)
			s.state = &stateFile{Version: 1, Assets: map[string]*assetState{}}
		}
	}
	return s, nil
}

// decodeState parses and checks a state file. Every file path it records
// must be a clean, slash-separated path inside the asset directory: state is
// read from disk and could have been crafted, and agentiso removes files
// by these paths.
func decodeState(b []byte, st *stateFile) error {
	if err := json.Unmarshal(b, st); err != nil {
		return err
	}
	if st.Assets == nil {
		return errors.New("no assets")
	}
	for name, a := range st.Assets {
		if a == nil {
			return fmt.Errorf("asset %q: empty entry", name)
		}
		for p := range a.Files {
			if !isLocalSlashPath(p) {
				return fmt.Errorf("asset %q: file path %q is not a clean relative path inside the asset directory", name, p)
			}
		}
	}
	return nil
}

// isLocalSlashPath reports whether p is a clean relative slash-separated path
// that stays inside the directory it is relative to.
func isLocalSlashPath(p string) bool {
	return p != "" && p != "." && path.Clean(p) == p && !strings.Contains(p, `\`) &&
		filepath.IsLocal(filepath.FromSlash(p)) && !strings.HasPrefix(p, "/")
}

// StateProblem says why no state was loaded: "" when the state file was
// read, "missing" when there is none, "unreadable (reason)" when it could
// not be parsed or failed its checks.
func (s *Store) StateProblem() string { return s.stateProblem }

// InState reports whether the state holds data for the named asset.
func (s *Store) InState(name string) bool {
	st, ok := s.state.Assets[name]
	return ok && len(st.Data) > 0
}

// Forget drops the named assets from the state, so they are generated
// afresh (e.g. credentials the user asked to regenerate).
func (s *Store) Forget(names ...string) {
	for _, n := range names {
		delete(s.state.Assets, n)
	}
}

// Dir is the asset directory.
func (s *Store) Dir() string { return s.dir }

// ReadFile implements Dir. Only regular files of at most MaxInputFileSize
// bytes are read: a FIFO or device is refused instead of blocking, a huge
// file instead of exhausting memory.
func (s *Store) ReadFile(name string) ([]byte, error) {
	b, err := fsutil.ReadRegular(filepath.Join(s.dir, filepath.FromSlash(name)), MaxInputFileSize)
	var tl *fsutil.TooLargeError
	if errors.As(err, &tl) {
		tl.Path = name
	}
	return b, err
}

// Glob implements Dir; results are relative, slash-separated and sorted.
func (s *Store) Glob(pattern string) ([]string, error) {
	// filepath.Glob ignores I/O errors: a directory that exists but cannot
	// be read would silently yield no files. Only a missing one does.
	if d := path.Dir(pattern); d != "." && !strings.ContainsAny(d, "*?[\\") {
		if _, err := os.ReadDir(filepath.Join(s.dir, filepath.FromSlash(d))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("read %s/: %w", d, err)
		}
	}
	m, err := filepath.Glob(filepath.Join(s.dir, filepath.FromSlash(pattern)))
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(m))
	for _, p := range m {
		rel, err := filepath.Rel(s.dir, p)
		if err != nil {
			return nil, err
		}
		out = append(out, filepath.ToSlash(rel))
	}
	sort.Strings(out)
	return out, nil
}

// Fetch resolves a and its ancestors and returns the resolved instance
// (of the same type as a).
func (s *Store) Fetch(ctx context.Context, a Asset) (Asset, error) {
	r, err := s.fetch(ctx, a)
	if err != nil {
		return nil, err
	}
	return r.asset, nil
}

// Fetch resolves the asset of type T and its ancestors in s and returns it
// typed, e.g. Fetch[*agent.AgentIgnition](ctx, s): the same instance as
// s.Fetch. T must be a pointer to an asset type.
func Fetch[T Asset](ctx context.Context, s *Store) (T, error) {
	var zero T
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Pointer {
		return zero, fmt.Errorf("asset: %v is not a pointer type", t)
	}
	r, err := s.fetch(ctx, reflect.New(t.Elem()).Interface().(T))
	if err != nil {
		return zero, err
	}
	return r.asset.(T), nil
}

// SourceOf reports where a fetched asset came from.
func (s *Store) SourceOf(a Asset) Source {
	if r, ok := s.done[reflect.TypeOf(a)]; ok {
		return r.source
	}
	return ""
}

func (s *Store) fetch(ctx context.Context, a Asset) (*resolved, error) {
	t := reflect.TypeOf(a)
	if r, ok := s.done[t]; ok {
		return r, nil
	}
	for _, n := range s.stack {
		if n == a.Name() {
			return nil, fmt.Errorf("asset graph cycle: %s -> %s", strings.Join(s.stack, " -> "), a.Name())
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.stack = append(s.stack, a.Name())
	defer func() { s.stack = s.stack[:len(s.stack)-1] }()

	parents := Parents{}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", a.Name())
	for _, d := range a.Dependencies() {
		r, err := s.fetch(ctx, d)
		if err != nil {
			return nil, err
		}
		parents[reflect.TypeOf(d)] = r.asset
		fmt.Fprintf(h, "%s=%s\n", d.Name(), r.fp)
	}
	inputHash := hex.EncodeToString(h.Sum(nil))
	st := s.state.Assets[a.Name()]

	inst := fresh(a)
	source, err := s.resolve(ctx, inst, parents, inputHash, st)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(inst)
	if err != nil {
		return nil, fmt.Errorf("%s: encode state: %w", a.Name(), err)
	}
	sum := sha256.Sum256(data)
	r := &resolved{asset: inst, fp: hex.EncodeToString(sum[:]), source: source}
	s.done[t] = r

	if _, ok := inst.(Volatile); ok {
		return r, nil
	}
	ns := &assetState{Hash: inputHash, Data: data}
	if st != nil && source != FromUser {
		ns.Files = st.Files
	}
	if source == FromUser {
		// Data from the user is never reused once their file is gone.
		ns.Hash, ns.Inputs = "", inputHash
		if ns.Files, err = s.userFiles(inst); err != nil {
			return nil, err
		}
		s.noteOverride(inst, st, inputHash)
	}
	s.state.Assets[a.Name()] = ns
	return r, nil
}

// resolve fills inst: from the user's files, from state, or by generating.
func (s *Store) resolve(ctx context.Context, inst Asset, parents Parents, inputHash string, st *assetState) (Source, error) {
	if l, ok := inst.(Loader); ok {
		found, err := l.Load(s)
		if err != nil {
			if d, ok := inst.(Described); ok {
				return "", fmt.Errorf("cannot %s: %w", d.Doing(), err)
			}
			return "", fmt.Errorf("failed to load %s: %w", inst.Name(), err)
		}
		if found {
			ours, err := s.isOurUnchangedOutput(inst, st)
			if err != nil {
				return "", err
			}
			if !ours {
				s.log.Debug("using the copy found in the asset directory", "asset", inst.Name())
				return FromUser, nil
			}
			// Our own earlier output, untouched: treat as absent.
			reset(inst)
		}
	}
	if _, volatile := inst.(Volatile); !volatile && st != nil && st.Hash == inputHash && len(st.Data) > 0 {
		if err := json.Unmarshal(st.Data, inst); err == nil {
			s.log.Debug("reusing from state", "asset", inst.Name())
			return FromState, nil
		}
		reset(inst)
	}
	s.log.Debug("generating", "asset", inst.Name())
	if err := inst.Generate(ctx, parents); err != nil {
		if d, ok := inst.(Described); ok {
			return "", fmt.Errorf("cannot %s: %w", d.Doing(), err)
		}
		return "", fmt.Errorf("failed to generate %s: %w", inst.Name(), err)
	}
	return FromGenerator, nil
}

func reset(a Asset) {
	v := reflect.ValueOf(a).Elem()
	v.Set(reflect.Zero(v.Type()))
}

// noteOverride says, in one line, when a file in the asset directory wins
// over what agentiso would generate and the user may not expect it: a
// file agentiso wrote that has been edited since, or an edited file whose
// inputs have changed since (the change does not reach it). A file the
// user supplied from the start and nothing changed is not worth a line.
func (s *Store) noteOverride(inst Asset, st *assetState, inputHash string) {
	w, ok := inst.(Writable)
	if !ok || st == nil {
		return
	}
	out, err := files(w)
	if err != nil || len(out) == 0 {
		return
	}
	names := make([]string, 0, len(out))
	edited := false
	for _, f := range out {
		names = append(names, f.Path)
		if rec, ok := st.Files[f.Path]; ok && !rec.User {
			edited = true
		}
	}
	which := strings.Join(names, ", ")
	switch {
	case edited:
		s.log.Info(which + " was edited after agentiso wrote it: the edited file is used as it is, and wins over the inputs it was made from from now on (delete it to have it generated again)")
	case st.Inputs != "" && st.Inputs != inputHash:
		s.log.Warn(which + " is used as you edited it, but the inputs it was made from changed since: their change does not reach it (delete it to have it generated from them again)")
	}
}

// staleOutputs says which files agentiso wrote earlier, untouched since,
// no longer match the current inputs and are not rewritten by this
// command (targets): what the ISO carries differs from what they show.
func (s *Store) noteStaleOutputs(targets []Asset) {
	isTarget := map[reflect.Type]bool{}
	for _, t := range targets {
		isTarget[reflect.TypeOf(t)] = true
	}
	stale := map[string][]string{} // command that writes them -> paths
	for t, r := range s.done {
		w, ok := r.asset.(Writable)
		if !ok || isTarget[t] || r.source == FromUser {
			continue
		}
		st := s.state.Assets[r.asset.Name()]
		if st == nil {
			continue
		}
		out, err := files(w)
		if err != nil {
			continue
		}
		by := ""
		if s.writerOf != nil {
			by = s.writerOf(r.asset)
		}
		for _, f := range out {
			rec, ok := st.Files[f.Path]
			if !ok || rec.User || rec.SHA256 == hashBytes(f.Data) {
				continue
			}
			if b, err := s.ReadFile(f.Path); err == nil && hashBytes(b) == rec.SHA256 {
				stale[by] = append(stale[by], f.Path)
			}
		}
	}
	cmds := make([]string, 0, len(stale))
	for by := range stale {
		cmds = append(cmds, by)
	}
	sort.Strings(cmds)
	for _, by := range cmds {
		paths := stale[by]
		sort.Strings(paths)
		how := "run the create command that wrote it again, with this command's options, to refresh it"
		if by != "" {
			how = "run the command that wrote it (" + by + ") with this command's options to refresh it"
		}
		s.log.Info(strings.Join(paths, ", ") + " on disk is out of date: the inputs changed since it was written, and what this command built follows the inputs; " + how)
	}
}

// isOurUnchangedOutput reports whether every file of a writable asset on
// disk is byte-identical to what agentiso itself last wrote.
func (s *Store) isOurUnchangedOutput(inst Asset, st *assetState) (bool, error) {
	if v, ok := inst.(Viewer); ok {
		// The files are the viewed asset's: so is their record.
		return s.unchangedFiles(v.ViewedPaths(), s.state.Assets[v.Views().Name()]), nil
	}
	w, ok := inst.(Writable)
	if !ok {
		return false, nil
	}
	files, err := files(w)
	if err != nil {
		return false, err
	}
	paths := make([]string, 0, len(files))
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	return s.unchangedFiles(paths, st), nil
}

// unchangedFiles reports whether st records every one of paths as written
// by agentiso (not the user's) and each is on disk as written.
func (s *Store) unchangedFiles(paths []string, st *assetState) bool {
	if st == nil || len(st.Files) == 0 {
		return false
	}
	for _, p := range paths {
		rec, ok := st.Files[p]
		if !ok || rec.User {
			return false
		}
		b, err := s.ReadFile(p)
		if err != nil || hashBytes(b) != rec.SHA256 {
			return false
		}
	}
	return true
}

// userFiles records the on-disk hashes of a user-supplied asset's files.
func (s *Store) userFiles(inst Asset) (map[string]fileState, error) {
	w, ok := inst.(Writable)
	if !ok {
		return nil, nil
	}
	files, err := files(w)
	if err != nil {
		return nil, err
	}
	out := map[string]fileState{}
	for _, f := range files {
		if b, err := s.ReadFile(f.Path); err == nil {
			out[f.Path] = fileState{SHA256: hashBytes(b), User: true}
		}
	}
	return out, nil
}

// files returns w's files, its error naming the asset.
func files(w Writable) ([]File, error) {
	out, err := w.Files()
	if err != nil {
		return nil, fmt.Errorf("%s: render files: %w", w.Name(), err)
	}
	return out, nil
}

func hashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Persist writes the outputs of the given (already fetched) targets, each
// Writable or Streamed, and saves the state, as one unit. The targets'
// files are rendered first (an asset that cannot render them fails the
// run before anything changes), streamed outputs are staged next (nothing
// visible changes while the slow part runs), then the files are written,
// the state saved, and the staged outputs renamed into place last. If any step fails, every file written and the
// state are put back as they were and the staged outputs removed, so the
// outputs on disk stay consistent with each other and with the state.
// Files the user supplied are never rewritten; files whose content is
// unchanged are not touched. Every write is atomic.
func (s *Store) Persist(ctx context.Context, targets ...Asset) (err error) {
	var undo undoLog
	var staged []stagedOutput
	var committed []committedOutput
	var outputs []Output
	defer func() {
		if err == nil {
			s.outputs = append(s.outputs, outputs...)
		}
		for _, o := range staged {
			o.Discard()
		}
		if err != nil {
			rerr := rollbackOutputs(committed)
			if uerr := undo.rollback(); uerr != nil {
				rerr = errors.Join(rerr, uerr)
			}
			if rerr != nil {
				err = fmt.Errorf("%w (and restoring the previous files failed: %v)", err, rerr)
			}
			return
		}
		for _, c := range committed {
			if c.prev != "" {
				_ = os.Remove(c.prev)
			}
		}
	}()
	// The files of every target are rendered before anything is staged
	// or written, so an asset that cannot render them changes nothing.
	type writable struct {
		asset Asset
		files []File
	}
	var writables []writable
	var streamed []Streamed
	for _, t := range targets {
		r, ok := s.done[reflect.TypeOf(t)]
		if !ok {
			return fmt.Errorf("persist %s: asset was not fetched", t.Name())
		}
		w, isW := r.asset.(Writable)
		st, isS := r.asset.(Streamed)
		if !isW && !isS {
			return fmt.Errorf("persist %s: the asset writes no files", t.Name())
		}
		if r.source == FromUser {
			continue
		}
		if isW {
			out, err := files(w)
			if err != nil {
				return fmt.Errorf("persist %w", err)
			}
			writables = append(writables, writable{r.asset, out})
		}
		if isS {
			streamed = append(streamed, st)
		}
	}
	for _, st := range streamed {
		for _, o := range st.Streams() {
			p, err := s.outputPath(o.Path)
			if err != nil {
				return fmt.Errorf("write %w", err)
			}
			sg, err := o.Stage(ctx, p)
			if err != nil {
				return err
			}
			staged = append(staged, stagedOutput{Staged: sg, path: p, rel: o.Path})
		}
	}
	type pending struct {
		st    *assetState
		files map[string]fileState
	}
	var done []pending
	for _, w := range writables {
		st := s.state.Assets[w.asset.Name()]
		if st == nil {
			st = &assetState{}
		}
		written := map[string]fileState{}
		for _, f := range w.files {
			p, err := s.outputPath(f.Path)
			if err != nil {
				return fmt.Errorf("write %w", err)
			}
			out := Output{Path: f.Path, Size: int64(len(f.Data)), SHA256: hashBytes(f.Data), Mode: fmt.Sprintf("%04o", f.Mode.Perm())}
			if old, err := readRegular(p); err == nil && string(old) == string(f.Data) {
				out.Unchanged = true
				if err := os.Chmod(p, f.Mode); err != nil {
					return fmt.Errorf("write %s: %w", f.Path, err)
				}
			} else {
				if err := undo.save(p); err != nil {
					return fmt.Errorf("write %s: %w", f.Path, err)
				}
				if err := fsutil.WriteFileAtomic(p, f.Data, f.Mode); err != nil {
					return fmt.Errorf("write %s: %w", f.Path, err)
				}
				s.log.Debug("wrote", "file", f.Path)
			}
			written[f.Path] = fileState{SHA256: out.SHA256}
			outputs = append(outputs, out)
		}
		// A file agentiso wrote earlier that the asset no longer produces
		// (e.g. nmstateconfig.yaml once no host has static networking) is
		// removed if it is still exactly as written; otherwise it would
		// later look like a file the user supplied.
		for rel, rec := range st.Files {
			if _, still := written[rel]; still || rec.User || !isLocalSlashPath(rel) {
				continue
			}
			p, err := s.outputPath(rel)
			if err != nil {
				s.log.Warn("not removing a stale output", "file", rel, "reason", err)
				continue
			}
			if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
				s.log.Warn("not removing a stale output: it is no longer a regular file (a symbolic link?)", "file", rel)
				continue
			}
			if b, err := readRegular(p); err == nil && hashBytes(b) == rec.SHA256 {
				if err := undo.save(p); err != nil {
					return fmt.Errorf("remove stale %s: %w", rel, err)
				}
				if err := os.Remove(p); err != nil {
					return fmt.Errorf("remove stale %s: %w", rel, err)
				}
				s.log.Debug("removed stale output", "file", rel)
			}
		}
		done = append(done, pending{st, written})
	}
	for _, d := range done {
		d.st.Files = d.files
	}
	if err := undo.save(filepath.Join(s.dir, filepath.FromSlash(assetdir.State))); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	s.noteStaleOutputs(targets)
	if err := s.SaveState(); err != nil {
		return err
	}
	// Each output's previous version is kept aside until every output is
	// in place: if a later commit fails, the earlier ones are put back too,
	// so the user never finds a new output beside old ones and the old state.
	for _, o := range staged {
		if u, ok := o.Staged.(interface{ Unchanged() bool }); ok && u.Unchanged() {
			// Already in place, untouched: not even linked aside (a
			// link would change the file's identity).
			out := Output{Path: o.rel, Unchanged: true}
			if m, ok := o.Staged.(Measured); ok {
				out.Size, out.SHA256 = m.Measure()
			}
			if fi, err := os.Stat(o.path); err == nil {
				out.Mode = fmt.Sprintf("%04o", fi.Mode().Perm())
			}
			outputs = append(outputs, out)
			continue
		}
		prev, err := keepPrevious(o.path)
		if err != nil {
			return fmt.Errorf("write %s: keep the previous version: %w", o.path, err)
		}
		committed = append(committed, committedOutput{path: o.path, prev: prev})
		if err := o.Commit(); err != nil {
			return fmt.Errorf("write %s: %w", o.path, err)
		}
		out := Output{Path: o.rel}
		if m, ok := o.Staged.(Measured); ok {
			out.Size, out.SHA256 = m.Measure()
		}
		if fi, err := os.Stat(o.path); err == nil {
			out.Size, out.Mode = fi.Size(), fmt.Sprintf("%04o", fi.Mode().Perm())
		}
		outputs = append(outputs, out)
	}
	return nil
}

// committedOutput is a streamed output renamed into place, and where its
// previous version was kept ("" when there was none).
type committedOutput struct{ path, prev string }

// keepPrevious keeps the file at p (if any) under a temporary name beside
// it: a hard link, so that p stays in place until the new output replaces
// it, or, where links are not supported, p itself renamed.
func keepPrevious(p string) (string, error) {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", nil
	}
	// A free, unpredictable name (made, then freed for the link).
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".previous-*")
	if err != nil {
		return "", err
	}
	prev := f.Name()
	f.Close()
	if err := os.Remove(prev); err != nil {
		return "", err
	}
	if os.Link(p, prev) == nil {
		return prev, nil
	}
	if err := os.Rename(p, prev); err != nil {
		return "", err
	}
	return prev, nil
}

// rollbackOutputs puts the committed outputs' previous versions back (or
// removes outputs that had none), newest first.
func rollbackOutputs(cs []committedOutput) error {
	var errs []error
	for i := len(cs) - 1; i >= 0; i-- {
		c := cs[i]
		if c.prev == "" {
			if err := os.Remove(c.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		// The commit may not have happened: then the output is still the
		// previous version (the same file as its link), which rename
		// would leave as it is, link and all.
		a, aerr := os.Stat(c.prev)
		b, berr := os.Stat(c.path)
		if aerr == nil && berr == nil && os.SameFile(a, b) {
			if err := os.Remove(c.prev); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if err := os.Rename(c.prev, c.path); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// outputPath is where the asset-directory path rel is on disk, once its
// directories are checked to resolve inside the asset directory. The
// directory's content and its state file may have been crafted, and a
// directory symlink (link -> ../elsewhere) would otherwise carry a write or
// a removal outside: checking the path as text is not enough. (A directory
// not created yet is checked through its nearest existing ancestor.)
func (s *Store) outputPath(rel string) (string, error) {
	p := filepath.Join(s.dir, filepath.FromSlash(rel))
	root, err := filepath.EvalSymlinks(s.dir)
	if err != nil {
		return "", fmt.Errorf("%s: resolve the asset directory: %w", rel, err)
	}
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		r, err := filepath.EvalSymlinks(d)
		if errors.Is(err, fs.ErrNotExist) && d != s.dir && filepath.Dir(d) != d {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", rel, err)
		}
		if in, err := filepath.Rel(root, r); err != nil || (in != "." && !filepath.IsLocal(in)) {
			shown, _ := filepath.Rel(s.dir, d)
			return "", fmt.Errorf("%s: %s leads outside the asset directory (to %s): agentiso writes and removes files only inside it; "+
				"replace the symbolic link with a directory", rel, filepath.ToSlash(shown), r)
		}
		return p, nil
	}
}

// readRegular reads p if it is a regular file, without following a
// symbolic link in its place.
func readRegular(p string) ([]byte, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", p)
	}
	return os.ReadFile(p)
}

// stagedOutput is a staged output and its place.
type stagedOutput struct {
	Staged
	path string
	rel  string
}

// Output is one file a Persist wrote, or found already holding what it
// would have written: what a create command reports (create -o json).
type Output struct {
	// Path is relative to the asset directory, with forward slashes.
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256,omitempty"`
	// Mode is the file's permission bits in octal ("0600" for a secret).
	Mode string `json:"mode"`
	// Unchanged is true when the file already held exactly this content
	// and was left as it was.
	Unchanged bool `json:"unchanged,omitempty"`
}

// Measured is a Staged output that knows its size and sha256 (hex), which
// Outputs then reports without reading it again.
type Measured interface {
	Measure() (size int64, sha256 string)
}

// Outputs returns what the successful Persist calls of s wrote, in the
// order written.
func (s *Store) Outputs() []Output { return s.outputs }

// undoLog remembers the previous content of files about to be replaced or
// removed, to put them back when a later step fails.
type undoLog []savedFile

type savedFile struct {
	path   string
	exists bool
	data   []byte
	mode   fs.FileMode
}

func (u *undoLog) save(p string) error {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		*u = append(*u, savedFile{path: p})
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		// Nothing agentiso could restore; the write will fail on its own.
		return nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	*u = append(*u, savedFile{path: p, exists: true, data: b, mode: fi.Mode().Perm()})
	return nil
}

// rollback restores the saved files, newest first.
func (u undoLog) rollback() error {
	var errs []error
	for i := len(u) - 1; i >= 0; i-- {
		f := u[i]
		if !f.exists {
			if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		if err := fsutil.WriteFileAtomic(f.path, f.data, f.mode); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// SaveState writes the state file (0600: it holds keys and tokens).
func (s *Store) SaveState() error {
	b, err := json.MarshalIndent(s.state, "", "  ")
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	p, err := s.outputPath(assetdir.State)
	if err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	if old, err := readRegular(p); err == nil && string(old) == string(b) {
		return nil
	}
	if err := fsutil.WriteFileAtomic(p, b, assetdir.Mode(assetdir.State)); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	return nil
}

// LoadFromState decodes the stored data of the named asset into a without
// generating anything (for commands like wait-for that only read).
func (s *Store) LoadFromState(a Asset) (bool, error) {
	st, ok := s.state.Assets[a.Name()]
	if !ok || len(st.Data) == 0 {
		return false, nil
	}
	if err := json.Unmarshal(st.Data, a); err != nil {
		return false, fmt.Errorf("decode %s from %s: %w", a.Name(), assetdir.State, err)
	}
	return true, nil
}

// Provide resolves a to the given value up front, for assets whose value
// comes from the command line rather than from files or generation.
func (s *Store) Provide(a Asset) error {
	data, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("%s: encode state: %w", a.Name(), err)
	}
	sum := sha256.Sum256(data)
	s.done[reflect.TypeOf(a)] = &resolved{asset: a, fp: hex.EncodeToString(sum[:]), source: FromUser}
	if _, ok := a.(Volatile); !ok {
		s.state.Assets[a.Name()] = &assetState{Data: data}
	}
	return nil
}

// Warner is an asset that carries non-fatal findings for the user.
type Warner interface {
	AssetWarnings() []string
}

// Warnings returns the findings of every resolved asset, grouped by asset:
// the assets sorted by name (not in resolution order, so the output is
// stable), each one's findings in the order it made them.
func (s *Store) Warnings() []string {
	var names []string
	by := map[string][]string{}
	for _, r := range s.done {
		if w, ok := r.asset.(Warner); ok && len(w.AssetWarnings()) > 0 {
			names = append(names, r.asset.Name())
			by[r.asset.Name()] = w.AssetWarnings()
		}
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		out = append(out, by[n]...)
	}
	return out
}
