package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, size int64) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		require.NoError(t, err)
		require.NoError(t, f.Truncate(size))
		require.NoError(t, f.Close())
		return p
	}

	t.Run("exactly the limit is read", func(t *testing.T) {
		b, err := readInput(write("max", maxInputBytes))
		require.NoError(t, err)
		require.Len(t, b, maxInputBytes)
	})
	t.Run("one byte over is refused naming the limit", func(t *testing.T) {
		_, err := readInput(write("over", maxInputBytes+1))
		require.ErrorIs(t, err, errTooLarge)
		require.Contains(t, err.Error(), "4 MiB")
	})
	t.Run("missing file keeps ErrNotExist", func(t *testing.T) {
		_, err := readInput(filepath.Join(dir, "nope"))
		require.True(t, errors.Is(err, fs.ErrNotExist), "got %v", err)
		require.Equal(t, "no such file or directory", err.Error())
	})
	t.Run("directory is an error", func(t *testing.T) {
		_, err := readInput(dir)
		require.Error(t, err)
		require.False(t, errors.Is(err, fs.ErrNotExist))
	})
}

func TestOSFacts(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(file, link))
	dangling := filepath.Join(dir, "dangling")
	require.NoError(t, os.Symlink(filepath.Join(dir, "gone"), dangling))

	var f osFacts
	resolved, err := f.Realpath(link)
	require.NoError(t, err)
	require.Equal(t, file, resolved)
	_, err = f.Realpath(filepath.Join(dir, "gone"))
	require.Error(t, err)

	require.True(t, f.Exists(file))
	require.True(t, f.Exists(dangling), "a dangling symlink still occupies the path")
	require.False(t, f.Exists(filepath.Join(dir, "gone")))

	require.True(t, f.IsDir(dir))
	require.False(t, f.IsDir(file))
	require.False(t, f.IsDir(filepath.Join(dir, "gone")))
}
