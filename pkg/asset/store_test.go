package asset

import (
	"github.com/seed-a052040e/agentiso/pkg/assetdir"

	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// input is a user-only asset read from input.txt.
type input struct{ Text string }

func (*input) Name() string                            { return "Input" }
func (*input) Dependencies() []Asset                   { return nil }
func (*input) Generate(context.Context, Parents) error { return ErrMissingInput }
func (a *input) Load(d Dir) (bool, error) {
	b, err := d.ReadFile("input.txt")
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	a.Text = string(b)
	return err == nil, err
}

// upper is generated from input, written to out/upper.txt, and may be
// overridden by the user.
type upper struct {
	Text  string
	Calls int `json:"-"`
}

func (*upper) Name() string          { return "Upper" }
func (*upper) Dependencies() []Asset { return []Asset{&input{}} }
func (u *upper) Generate(_ context.Context, p Parents) error {
	u.Text = strings.ToUpper(Get[*input](p).Text)
	u.Calls++
	return nil
}
func (u *upper) Files() ([]File, error) {
	return []File{{Path: "out/upper.txt", Data: []byte(u.Text), Mode: 0o600}}, nil
}
func (u *upper) Load(d Dir) (bool, error) {
	b, err := d.ReadFile("out/upper.txt")
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	u.Text = string(b)
	return err == nil, err
}

func runOnce(t *testing.T, dir string) (*upper, Source) {
	t.Helper()
	s, err := NewStore(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	a, err := s.Fetch(context.Background(), &upper{})
	require.NoError(t, err)
	require.NoError(t, s.Persist(context.Background(), a))
	return a.(*upper), s.SourceOf(a)
}

func TestStoreGeneratesThenReusesAndRewritesNothing(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "input.txt"), []byte("hello"), 0o644))
	u, src := runOnce(t, dir)
	assert.Equal(t, "HELLO", u.Text)
	assert.Equal(t, FromGenerator, src)
	out := filepath.Join(dir, "out/upper.txt")
	fi, err := os.Stat(out)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	old := time.Unix(1000, 0)
	require.NoError(t, os.Chtimes(out, old, old))
	state := filepath.Join(dir, assetdir.State)
	require.NoError(t, os.Chtimes(state, old, old))

	u, src = runOnce(t, dir)
	assert.Equal(t, FromState, src)
	assert.Equal(t, 0, u.Calls, "unchanged inputs must not regenerate")
	for _, p := range []string{out, state} {
		fi, err = os.Stat(p)
		require.NoError(t, err)
		assert.True(t, fi.ModTime().Equal(old), "%s was rewritten", p)
	}
	b, err := os.ReadFile(filepath.Join(dir, "input.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello", string(b), "inputs are never deleted or changed")
}

func TestStoreRegeneratesWhenParentChanges(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "input.txt")
	require.NoError(t, os.WriteFile(in, []byte("a"), 0o644))
	runOnce(t, dir)
	require.NoError(t, os.WriteFile(in, []byte("b"), 0o644))
	u, src := runOnce(t, dir)
	assert.Equal(t, FromGenerator, src)
	assert.Equal(t, "B", u.Text)
	b, _ := os.ReadFile(filepath.Join(dir, "out/upper.txt"))
	assert.Equal(t, "B", string(b))
}

func TestStoreUserEditWinsAndStaysWinning(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "input.txt")
	require.NoError(t, os.WriteFile(in, []byte("a"), 0o644))
	runOnce(t, dir)
	out := filepath.Join(dir, "out/upper.txt")
	require.NoError(t, os.WriteFile(out, []byte("edited"), 0o644))
	u, src := runOnce(t, dir)
	assert.Equal(t, FromUser, src)
	assert.Equal(t, "edited", u.Text)
	// Even when the parent changes later, the user's file keeps winning.
	require.NoError(t, os.WriteFile(in, []byte("zzz"), 0o644))
	u, src = runOnce(t, dir)
	assert.Equal(t, FromUser, src)
	assert.Equal(t, "edited", u.Text)
	b, _ := os.ReadFile(out)
	assert.Equal(t, "edited", string(b), "user files are never rewritten")
	// Deleting the user's file hands the asset back to the generator.
	require.NoError(t, os.Remove(out))
	u, src = runOnce(t, dir)
	assert.Equal(t, FromGenerator, src)
	assert.Equal(t, "ZZZ", u.Text)
}

func TestStoreMissingInputErrorNamesAsset(t *testing.T) {
	s, err := NewStore(t.TempDir(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	_, err = s.Fetch(context.Background(), &upper{})
	require.ErrorIs(t, err, ErrMissingInput)
	assert.EqualError(t, err, "failed to generate Input: missing configuration or manifest file")
}

type cycA struct{}
type cycB struct{}

func (*cycA) Name() string                            { return "A" }
func (*cycA) Dependencies() []Asset                   { return []Asset{&cycB{}} }
func (*cycA) Generate(context.Context, Parents) error { return nil }
func (*cycB) Name() string                            { return "B" }
func (*cycB) Dependencies() []Asset                   { return []Asset{&cycA{}} }
func (*cycB) Generate(context.Context, Parents) error { return nil }

func TestStoreDetectsCycles(t *testing.T) {
	s, err := NewStore(t.TempDir(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	_, err = s.Fetch(context.Background(), &cycA{})
	assert.EqualError(t, err, "asset graph cycle: A -> B -> A")
}

func TestWriteDOT(t *testing.T) {
	var b strings.Builder
	require.NoError(t, WriteDOT(&b, &upper{}))
	assert.Contains(t, b.String(), `"Input" -> "Upper";`)
	assert.True(t, strings.HasPrefix(b.String(), "digraph agentiso {"))
}

// optional writes out/opt.txt only when input.txt says "yes"; when it
// says "unencodable", it cannot render the file.
type optional struct {
	On          bool
	Unencodable bool
}

func (*optional) Name() string          { return "Optional" }
func (*optional) Dependencies() []Asset { return []Asset{&input{}} }
func (o *optional) Generate(_ context.Context, p Parents) error {
	o.Unencodable = Get[*input](p).Text == "unencodable"
	o.On = Get[*input](p).Text == "yes" || o.Unencodable
	return nil
}
func (o *optional) Files() ([]File, error) {
	if !o.On {
		return nil, nil
	}
	if o.Unencodable {
		return nil, errors.New("cannot encode")
	}
	return []File{{Path: "out/opt.txt", Data: []byte("on"), Mode: 0o644}}, nil
}
func (o *optional) Load(d Dir) (bool, error) {
	_, err := d.ReadFile("out/opt.txt")
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	o.On = err == nil
	return err == nil, err
}

func runOptional(t *testing.T, dir string) (*optional, Source) {
	t.Helper()
	s, err := NewStore(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	a, err := s.Fetch(context.Background(), &optional{})
	require.NoError(t, err)
	require.NoError(t, s.Persist(context.Background(), a))
	return a.(*optional), s.SourceOf(a)
}

func TestStoreRemovesOwnStaleOutputButNeverUserFiles(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "input.txt")
	out := filepath.Join(dir, "out/opt.txt")
	require.NoError(t, os.WriteFile(in, []byte("yes"), 0o644))
	runOptional(t, dir)
	require.FileExists(t, out)

	// The asset stops producing the file: agentiso's own copy goes away,
	// so a later run cannot mistake it for a user file.
	require.NoError(t, os.WriteFile(in, []byte("no"), 0o644))
	o, src := runOptional(t, dir)
	assert.False(t, o.On)
	assert.Equal(t, FromGenerator, src)
	assert.NoFileExists(t, out)
	o, src = runOptional(t, dir)
	assert.False(t, o.On)
	assert.NotEqual(t, FromUser, src)

	// A file the user wrote is never removed, and wins.
	require.NoError(t, os.MkdirAll(filepath.Dir(out), 0o755))
	require.NoError(t, os.WriteFile(out, []byte("mine"), 0o644))
	o, src = runOptional(t, dir)
	assert.Equal(t, FromUser, src)
	assert.True(t, o.On)
	assert.FileExists(t, out)
}

// An asset that cannot render its files fails the run and changes
// nothing: its earlier output is not taken for stale and removed, and the
// state still records it (with the files missing from the list, the
// earlier output would be removed and then read as gone).
func TestStorePersistFailsWhenFilesCannotBeRendered(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "input.txt")
	out := filepath.Join(dir, "out/opt.txt")
	require.NoError(t, os.WriteFile(in, []byte("yes"), 0o644))
	runOptional(t, dir)
	state, err := os.ReadFile(filepath.Join(dir, assetdir.State))
	require.NoError(t, err)

	require.NoError(t, os.WriteFile(in, []byte("unencodable"), 0o644))
	s, err := NewStore(dir, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	a, err := s.Fetch(context.Background(), &optional{})
	require.NoError(t, err)
	err = s.Persist(context.Background(), a)
	require.Error(t, err)
	assert.Equal(t, "persist Optional: render files: cannot encode", err.Error())
	b, err := os.ReadFile(out)
	require.NoError(t, err, "the earlier output must stay")
	assert.Equal(t, "on", string(b))
	after, err := os.ReadFile(filepath.Join(dir, assetdir.State))
	require.NoError(t, err)
	assert.Equal(t, string(state), string(after), "the state must not change")

}

// A crafted state file must never make agentiso touch anything outside the
// asset directory: every path recorded in state is checked to be a clean
// relative path inside it before it is used.
func TestStoreNeverRemovesOutsideTheAssetDirectory(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "cluster")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	victim := filepath.Join(parent, "victim.txt")
	require.NoError(t, os.WriteFile(victim, []byte("precious"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "input.txt"), []byte("no"), 0o644))
	sum := hashBytes([]byte("precious"))
	for _, p := range []string{"../victim.txt", "out/../../victim.txt", victim, "./../victim.txt"} {
		state := `{"version":1,"assets":{"Optional":{"hash":"","data":null,"files":{` +
			`"` + strings.ReplaceAll(p, `\`, `\\`) + `":{"sha256":"` + sum + `"}}}}}`
		require.NoError(t, os.MkdirAll(filepath.Join(dir, assetdir.StateDir), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, assetdir.State), []byte(state), 0o600))
		s, err := NewStore(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
		require.NoError(t, err, p)
		a, err := s.Fetch(context.Background(), &optional{})
		require.NoError(t, err, p)
		require.NoError(t, s.Persist(context.Background(), a), p)
		require.FileExists(t, victim, "state path %q", p)
	}
}

// A directory symlink inside the asset directory must not carry a removal
// (or a write) outside it: paths are resolved, not only checked as text.
func TestStoreNeverRemovesThroughASymlinkedDirectory(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "cluster")
	victimDir := filepath.Join(parent, "victim")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.MkdirAll(victimDir, 0o755))
	victim := filepath.Join(victimDir, "authorized_keys")
	require.NoError(t, os.WriteFile(victim, []byte("precious"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "input.txt"), []byte("no"), 0o644))
	require.NoError(t, os.Symlink("../victim", filepath.Join(dir, "link")))
	// A symlinked file is not followed either.
	require.NoError(t, os.Symlink("../victim/authorized_keys", filepath.Join(dir, "keys")))
	sum := hashBytes([]byte("precious"))
	for _, p := range []string{"link/authorized_keys", "keys"} {
		state := `{"version":1,"assets":{"Optional":{"hash":"","data":null,"files":{"` + p + `":{"sha256":"` + sum + `"}}}}}`
		require.NoError(t, os.MkdirAll(filepath.Join(dir, assetdir.StateDir), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, assetdir.State), []byte(state), 0o600))
		var logs strings.Builder
		s, err := NewStore(dir, slog.New(slog.NewTextHandler(&logs, nil)))
		require.NoError(t, err, p)
		a, err := s.Fetch(context.Background(), &optional{})
		require.NoError(t, err, p)
		require.NoError(t, s.Persist(context.Background(), a), p)
		require.FileExists(t, victim, "state path %q", p)
		assert.Contains(t, logs.String(), "level=WARN", "the refusal is said out loud, not at debug level")
		assert.Contains(t, logs.String(), p)
	}

	// A write through the same link is refused with the reason.
	require.NoError(t, os.Remove(filepath.Join(dir, "link")))
	require.NoError(t, os.Symlink("../victim", filepath.Join(dir, "out")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "input.txt"), []byte("yes"), 0o644))
	s, err := NewStore(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	a, err := s.Fetch(context.Background(), &optional{})
	require.NoError(t, err)
	err = s.Persist(context.Background(), a)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "outside the asset directory")
	assert.NoFileExists(t, filepath.Join(victimDir, "opt.txt"))
}

// The state file is not written through a symlinked state directory.
func TestStoreNeverSavesStateThroughASymlink(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "cluster")
	require.NoError(t, os.MkdirAll(filepath.Join(parent, "elsewhere"), 0o755))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.Symlink("../elsewhere", filepath.Join(dir, assetdir.StateDir)))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "input.txt"), []byte("hello"), 0o644))
	s, err := NewStore(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	a, err := s.Fetch(context.Background(), &upper{})
	require.NoError(t, err)
	err = s.Persist(context.Background(), a)
	require.ErrorContains(t, err, "outside the asset directory")
	assert.NoFileExists(t, filepath.Join(parent, "elsewhere", filepath.Base(assetdir.State)))
}

// big is a streamed output beside upper: big.bin holds upper's text. Its
// stage and commit can be made to fail, and record what they saw.
type big struct {
	Text string
	// seen is what out/upper.txt and the state file held when the output
	// was committed.
	seen       *[2]string
	failStage  error
	failCommit error
}

func (*big) Name() string          { return "Big" }
func (*big) Dependencies() []Asset { return []Asset{&upper{}} }
func (b *big) Generate(_ context.Context, p Parents) error {
	b.Text = Get[*upper](p).Text
	return nil
}
func (*big) Volatile() {}
func (b *big) Streams() []Stream {
	return []Stream{{Path: "big.bin", Stage: func(ctx context.Context, dst string) (Staged, error) {
		if b.failStage != nil {
			return nil, b.failStage
		}
		tmp := dst + ".staged"
		if err := os.WriteFile(tmp, []byte(b.Text), 0o600); err != nil {
			return nil, err
		}
		return &stagedFile{tmp: tmp, dst: dst, b: b}, nil
	}}}
}

type stagedFile struct {
	tmp, dst string
	b        *big
	done     bool
}

func (f *stagedFile) Commit() error {
	if f.b.seen != nil {
		data, _ := os.ReadFile(filepath.Join(filepath.Dir(f.dst), "out/upper.txt"))
		state, _ := os.ReadFile(filepath.Join(filepath.Dir(f.dst), assetdir.State))
		*f.b.seen = [2]string{string(data), string(state)}
	}
	if f.b.failCommit != nil {
		return f.b.failCommit
	}
	f.done = true
	return os.Rename(f.tmp, f.dst)
}

func (f *stagedFile) Discard() {
	if !f.done {
		f.done = true
		os.Remove(f.tmp)
	}
}

// persistBig fetches upper and big in dir and persists both, with big
// changed by set first.
func persistBig(t *testing.T, dir string, set func(*big)) error {
	t.Helper()
	s := testStore(t, dir)
	b, err := Fetch[*big](context.Background(), s)
	require.NoError(t, err)
	set(b)
	return s.Persist(context.Background(), &upper{}, b)
}

func TestStorePersistCommitsStreamedOutputsLast(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "input.txt"), []byte("one"), 0o644))
	var seen [2]string
	require.NoError(t, persistBig(t, dir, func(b *big) { b.seen = &seen }))
	assert.Equal(t, "ONE", seen[0], "the streamed output is committed after the files are written")
	st, err := os.ReadFile(filepath.Join(dir, assetdir.State))
	require.NoError(t, err)
	assert.Equal(t, string(st), seen[1], "... and after the state is saved")
	got, err := os.ReadFile(filepath.Join(dir, "big.bin"))
	require.NoError(t, err)
	assert.Equal(t, "ONE", string(got))
	assert.NoFileExists(t, filepath.Join(dir, "big.bin.staged"))
	assert.Contains(t, string(st), `"Upper"`)
	assert.NotContains(t, string(st), `"Big"`, "a volatile asset is not recorded in the state")

	// A volatile asset is generated again on the next run, not reused.
	require.NoError(t, os.Remove(filepath.Join(dir, "big.bin")))
	require.NoError(t, persistBig(t, dir, func(*big) {}))
	assert.FileExists(t, filepath.Join(dir, "big.bin"))
}

// When a step of Persist fails (for create image: writing the new ISO,
// saving the state, or renaming the ISO into place), every file Persist
// wrote and the state are put back as they were and the staged output is
// removed, so outputs and state stay consistent with each other.
func TestStorePersistRollsBackWhenAStepFails(t *testing.T) {
	for name, set := range map[string]func(*big){
		"commit": func(b *big) { b.failCommit = errors.New("rename failed") },
		"stage":  func(b *big) { b.failStage = errors.New("rename failed") },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "input.txt"), []byte("one"), 0o644))
			require.NoError(t, persistBig(t, dir, func(*big) {}))
			oldState, err := os.ReadFile(filepath.Join(dir, assetdir.State))
			require.NoError(t, err)

			require.NoError(t, os.WriteFile(filepath.Join(dir, "input.txt"), []byte("two"), 0o644))
			require.ErrorContains(t, persistBig(t, dir, set), "rename failed")
			for f, want := range map[string]string{"out/upper.txt": "ONE", "big.bin": "ONE", assetdir.State: string(oldState)} {
				b, err := os.ReadFile(filepath.Join(dir, f))
				require.NoError(t, err)
				assert.Equal(t, want, string(b), f)
			}
			assert.NoFileExists(t, filepath.Join(dir, "big.bin.staged"))

			// Files that did not exist before are removed again.
			dir2 := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir2, "input.txt"), []byte("x"), 0o644))
			require.Error(t, persistBig(t, dir2, set))
			for _, f := range []string{"out/upper.txt", "big.bin", "big.bin.staged", assetdir.State} {
				assert.NoFileExists(t, filepath.Join(dir2, f))
			}
		})
	}
}

func TestStorePersistNeedsFetchedOutputs(t *testing.T) {
	s := testStore(t, t.TempDir())
	require.EqualError(t, s.Persist(context.Background(), &upper{}), "persist Upper: asset was not fetched")
	require.NoError(t, os.WriteFile(filepath.Join(s.Dir(), "input.txt"), []byte("x"), 0o644))
	_, err := Fetch[*input](context.Background(), s)
	require.NoError(t, err)
	require.EqualError(t, s.Persist(context.Background(), &input{}), "persist Input: the asset writes no files")
}

type describedAsset struct{}

func (*describedAsset) Name() string                            { return "Thing Asset" }
func (*describedAsset) Dependencies() []Asset                   { return nil }
func (*describedAsset) Generate(context.Context, Parents) error { return errors.New("no route") }
func (*describedAsset) Doing() string                           { return "read the thing" }

// An asset that says what it does is named by that in errors, not by its
// graph name.
func TestDescribedAssetError(t *testing.T) {
	s, err := NewStore(t.TempDir(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	_, err = s.Fetch(context.Background(), &describedAsset{})
	require.Error(t, err)
	assert.EqualError(t, err, "cannot read the thing: no route")
}

// pair is two streamed outputs (a.bin, b.bin) holding upper's text; the
// commit of b.bin can be made to fail.
type pair struct {
	Text       string
	failSecond bool
}

func (*pair) Name() string          { return "Pair" }
func (*pair) Dependencies() []Asset { return []Asset{&upper{}} }
func (p *pair) Generate(_ context.Context, ps Parents) error {
	p.Text = Get[*upper](ps).Text
	return nil
}
func (*pair) Volatile() {}
func (p *pair) Streams() []Stream {
	var out []Stream
	for i, name := range []string{"a.bin", "b.bin"} {
		fail := i == 1 && p.failSecond
		out = append(out, Stream{Path: name, Stage: func(_ context.Context, dst string) (Staged, error) {
			tmp := dst + ".staged"
			if err := os.WriteFile(tmp, []byte(p.Text), 0o600); err != nil {
				return nil, err
			}
			return &plainStaged{tmp: tmp, dst: dst, fail: fail}, nil
		}})
	}
	return out
}

type plainStaged struct {
	tmp, dst string
	fail     bool
}

func (f *plainStaged) Commit() error {
	if f.fail {
		return errors.New("rename " + filepath.Base(f.dst) + " failed")
	}
	return os.Rename(f.tmp, f.dst)
}
func (f *plainStaged) Discard() { os.Remove(f.tmp) }

// A commit that fails after an earlier output was renamed into place puts
// that output back too: the user never finds a new output (say, an initrd
// with new credentials) beside old ones and the old state.
func TestStorePersistCommitIsAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "input.txt")
	persist := func(failSecond bool) error {
		s := testStore(t, dir)
		p, err := Fetch[*pair](context.Background(), s)
		require.NoError(t, err)
		p.failSecond = failSecond
		return s.Persist(context.Background(), &upper{}, p)
	}
	require.NoError(t, os.WriteFile(in, []byte("one"), 0o644))
	require.NoError(t, persist(false))
	oldState, err := os.ReadFile(filepath.Join(dir, assetdir.State))
	require.NoError(t, err)

	require.NoError(t, os.WriteFile(in, []byte("two"), 0o644))
	require.ErrorContains(t, persist(true), "rename b.bin failed")
	for f, want := range map[string]string{"a.bin": "ONE", "b.bin": "ONE", "out/upper.txt": "ONE", assetdir.State: string(oldState)} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.Equal(t, want, string(b), f)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{".agentiso", "a.bin", "b.bin", "input.txt", "out"}, names, "nothing is left beside the outputs")

	// A first run that fails leaves no output at all.
	dir = t.TempDir()
	in = filepath.Join(dir, "input.txt")
	require.NoError(t, os.WriteFile(in, []byte("one"), 0o644))
	require.Error(t, persist(true))
	assert.NoFileExists(t, filepath.Join(dir, "a.bin"))

	// And a later successful run leaves nothing beside the outputs either.
	require.NoError(t, persist(false))
	entries, err = os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 5)
}

func (f *stagedFile) Measure() (int64, string) { return int64(len(f.b.Text)), "sum-of-" + f.b.Text }

// Outputs lists what Persist wrote, in order, with size, sha256 and mode; a
// file left as it was is marked unchanged; a failed Persist adds nothing.
func TestStoreOutputsListWhatPersistWrote(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "input.txt"), []byte("one"), 0o644))
	s := testStore(t, dir)
	b, err := Fetch[*big](context.Background(), s)
	require.NoError(t, err)
	require.NoError(t, s.Persist(context.Background(), &upper{}, b))
	assert.Equal(t, []Output{
		{Path: "out/upper.txt", Size: 3, SHA256: hashBytes([]byte("ONE")), Mode: "0600"},
		{Path: "big.bin", Size: 3, SHA256: "sum-of-ONE", Mode: "0600"},
	}, s.Outputs())

	s = testStore(t, dir)
	b, err = Fetch[*big](context.Background(), s)
	require.NoError(t, err)
	require.NoError(t, s.Persist(context.Background(), &upper{}, b))
	require.Len(t, s.Outputs(), 2)
	assert.True(t, s.Outputs()[0].Unchanged, "the same content is left as it was")

	s = testStore(t, dir)
	b, err = Fetch[*big](context.Background(), s)
	require.NoError(t, err)
	b.failCommit = errors.New("rename failed")
	require.Error(t, s.Persist(context.Background(), &upper{}, b))
	assert.Empty(t, s.Outputs())
}

// upperView reads out/upper.txt, upper's file, without upper's parents.
type upperView struct{ Text string }

func (*upperView) Name() string                            { return "Upper View" }
func (*upperView) Dependencies() []Asset                   { return nil }
func (*upperView) Volatile()                               {}
func (*upperView) Views() Asset                            { return &upper{} }
func (*upperView) ViewedPaths() []string                   { return []string{"out/upper.txt"} }
func (*upperView) Generate(context.Context, Parents) error { return nil }
func (v *upperView) Load(d Dir) (bool, error) {
	var u upper
	found, err := u.Load(d)
	v.Text = u.Text
	return found, err
}

func TestStoreViewerSeesOnlyTheUsersCopy(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "input.txt")
	out := filepath.Join(dir, "out/upper.txt")
	view := func() (string, Source) {
		t.Helper()
		s, err := NewStore(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
		require.NoError(t, err)
		v, err := Fetch[*upperView](context.Background(), s)
		require.NoError(t, err)
		return v.Text, s.SourceOf(v)
	}
	require.NoError(t, os.WriteFile(in, []byte("a"), 0o644))
	text, src := view()
	assert.Equal(t, "", text, "no file: nothing to view")
	assert.Equal(t, FromGenerator, src)

	// agentiso's own output, unchanged: not the user's, even after the
	// input changed (it is stale, and upper regenerates it)
	runOnce(t, dir)
	require.NoError(t, os.WriteFile(in, []byte("b"), 0o644))
	text, src = view()
	assert.Equal(t, "", text, "agentiso's own unchanged output is no user's copy")
	assert.Equal(t, FromGenerator, src)

	// edited: the user's
	require.NoError(t, os.WriteFile(out, []byte("edited"), 0o644))
	text, src = view()
	assert.Equal(t, "edited", text)
	assert.Equal(t, FromUser, src)

	// a file the user supplied from the start
	dir = t.TempDir()
	in, out = filepath.Join(dir, "input.txt"), filepath.Join(dir, "out/upper.txt")
	require.NoError(t, os.WriteFile(in, []byte("a"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Dir(out), 0o755))
	require.NoError(t, os.WriteFile(out, []byte("mine"), 0o644))
	text, src = view()
	assert.Equal(t, "mine", text)
	assert.Equal(t, FromUser, src)
}
