// Package asset is the build graph engine: assets that name their parents
// and are generated from them or supplied by the user, remembered in a
// state file so a re-run regenerates only what changed, and persisted
// atomically.
//
// Every artifact is an asset. A file the user puts in the asset directory
// overrides the generated one. Store.Fetch (or Fetch[T]) resolves an asset
// and its ancestors; Store.Persist writes the outputs of a command's
// targets: files first, then the state, then streamed outputs such as the
// ISO renamed into place last.
package asset

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
)

// Asset is one node of the graph.
type Asset interface {
	// Name is the human name used in logs and errors ("Install Config").
	Name() string
	// Dependencies lists the parents, as zero values of their types.
	Dependencies() []Asset
	// Generate builds the asset from its resolved parents.
	Generate(ctx context.Context, parents Parents) error
}

// Described is an asset that says, for its errors, what generating it
// does ("read the release payload") instead of its graph name, which
// means nothing to a user ("failed to generate Release Payload").
type Described interface {
	// Doing completes "cannot ...".
	Doing() string
}

// Loader is an asset the user may supply as files in the asset directory.
// A user-supplied asset wins over a generated one.
type Loader interface {
	Asset
	// Load reads the asset from dir. found is false when its files are
	// absent; an error means they are present but unusable.
	Load(dir Dir) (found bool, err error)
}

// Viewer is a Loader of the files another asset writes, read without that
// asset's parents: what a part of the graph needs of a user's copy before,
// or without, the asset itself can be made. As for that asset, a copy
// agentiso wrote for it that nobody changed since is not the user's: Load's
// result is then dropped, and the viewer generated.
type Viewer interface {
	Loader
	// Views names the asset whose files Load reads (a zero value of it),
	// and ViewedPaths those files, relative to the asset directory.
	Views() Asset
	ViewedPaths() []string
}

// Writable is an asset that writes files into the asset directory.
type Writable interface {
	Asset
	// Files renders the asset's files. An error (a value that cannot be
	// encoded) fails the run: an empty list would mean the asset no longer
	// writes them, and Persist would remove them as stale.
	Files() ([]File, error)
}

// Streamed is an asset whose outputs are too large to hold in memory (an
// ISO): Persist has each one staged (written in full under a temporary
// name next to its place), then writes the other files and the state, and
// renames the staged outputs into place last, in order. Should a rename
// fail, the files and the state are put back, and the outputs renamed
// before it stay in place (with one output, as for the agent ISO, nothing
// changes).
type Streamed interface {
	Asset
	Streams() []Stream
}

// Stream is one streamed output.
type Stream struct {
	// Path is the output's place, relative to the asset directory.
	Path string
	// Stage writes the output next to dst (its absolute path), leaving dst
	// itself untouched until Commit.
	Stage func(ctx context.Context, dst string) (Staged, error)
}

// Staged is an output written in full but not yet in place.
type Staged interface {
	// Commit moves the output into place.
	Commit() error
	// Discard removes it; a no-op after Commit.
	Discard()
}

// Volatile is an asset generated on every run, never reused from the state
// nor recorded in it: its value stands for something outside the asset
// directory (a file in a cache, an output written by Persist) or for one
// run's options.
type Volatile interface {
	Asset
	Volatile()
}

// File is one file an asset writes, relative to the asset directory.
type File struct {
	Path string
	Data []byte
	Mode fs.FileMode // 0600 for anything holding a secret
}

// Dir gives loaders read access to the asset directory.
type Dir interface {
	// ReadFile returns the content of a file relative to the asset dir;
	// errors.Is(err, fs.ErrNotExist) when it does not exist.
	ReadFile(name string) ([]byte, error)
	// Glob lists files matching a pattern relative to the asset dir.
	Glob(pattern string) ([]string, error)
}

// ErrMissingInput is returned by Generate when an asset can neither be
// generated (its inputs are absent) nor was it supplied by the user.
var ErrMissingInput = errors.New("missing configuration or manifest file")

// Parents holds the resolved dependencies handed to Generate.
type Parents map[reflect.Type]Asset

// Get returns the resolved parent of type T. It panics if T was not
// declared in Dependencies, which is a programming error caught by tests.
func Get[T Asset](p Parents) T {
	a, ok := p[reflect.TypeFor[T]()]
	if !ok {
		panic(fmt.Sprintf("asset: %v is not a declared dependency", reflect.TypeFor[T]()))
	}
	return a.(T)
}

// fresh returns a new zero value of the same concrete type as a.
func fresh(a Asset) Asset {
	t := reflect.TypeOf(a)
	if t.Kind() != reflect.Pointer {
		panic(fmt.Sprintf("asset: %v must be a pointer type", t))
	}
	return reflect.New(t.Elem()).Interface().(Asset)
}
