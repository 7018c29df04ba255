package asset

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testStore(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := NewStore(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	return s
}

func TestFetchTyped(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "input.txt"), []byte("abc"), 0o644))
	s := testStore(t, dir)
	u, err := Fetch[*upper](context.Background(), s)
	require.NoError(t, err)
	assert.Equal(t, "ABC", u.Text)
	assert.Equal(t, FromGenerator, s.SourceOf(u))

	// The same resolved instance as Store.Fetch, generated once.
	again, err := Fetch[*upper](context.Background(), s)
	require.NoError(t, err)
	assert.Same(t, u, again)
	a, err := s.Fetch(context.Background(), &upper{})
	require.NoError(t, err)
	assert.Same(t, u, a)
	assert.Equal(t, 1, u.Calls)
}

func TestFetchTypedReturnsErrors(t *testing.T) {
	// input.txt is absent: Input cannot be generated.
	s := testStore(t, t.TempDir())
	u, err := Fetch[*upper](context.Background(), s)
	require.ErrorIs(t, err, ErrMissingInput)
	assert.Nil(t, u)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Fetch[*input](ctx, testStore(t, t.TempDir()))
	require.ErrorIs(t, err, context.Canceled)
}

// valueAsset implements Asset on its value type: the store needs pointer
// types, and Fetch says so instead of panicking.
type valueAsset struct{}

func (valueAsset) Name() string                            { return "Value" }
func (valueAsset) Dependencies() []Asset                   { return nil }
func (valueAsset) Generate(context.Context, Parents) error { return errors.New("never called") }

func TestFetchTypedNeedsAPointerType(t *testing.T) {
	s := testStore(t, t.TempDir())
	_, err := Fetch[valueAsset](context.Background(), s)
	require.EqualError(t, err, "asset: asset.valueAsset is not a pointer type")
	_, err = Fetch[Asset](context.Background(), s)
	require.EqualError(t, err, "asset: asset.Asset is not a pointer type")
}
