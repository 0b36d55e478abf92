package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/switchyard-dev/switchyard/policy"
)

// maxInputBytes bounds every file the CLI reads (sheet, lane state,
// receipt): policy inputs are small, and a runaway file must not exhaust
// memory.
const maxInputBytes = 4 << 20

// errTooLarge reports an input over maxInputBytes.
var errTooLarge = fmt.Errorf("file is larger than the 4 MiB limit (%d bytes)", maxInputBytes)

// readInput reads a whole input file of at most maxInputBytes. Errors keep
// fs.ErrNotExist matchable and drop the *PathError wrapper, whose path the
// caller names itself.
func readInput(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, unwrapPath(err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > maxInputBytes {
		return nil, errTooLarge
	}
	b, err := io.ReadAll(io.LimitReader(f, maxInputBytes+1))
	if err != nil {
		return nil, unwrapPath(err)
	}
	if len(b) > maxInputBytes {
		return nil, errTooLarge
	}
	return b, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// readUsage reads an input file, turning any failure into a usage error
// (exit 64) that names what the file is.
func readUsage(what, path string) ([]byte, error) {
	b, err := readInput(path)
	if err != nil {
		return nil, policy.Usagef("cannot read %s %s: %v", what, path, err)
	}
	return b, nil
}

// osFacts answers policy.FileFacts from the real filesystem.
type osFacts struct{}

var _ policy.FileFacts = osFacts{}

// Realpath returns the absolute, symlink-free path of an existing path.
func (osFacts) Realpath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// Exists reports whether anything, even a dangling symlink, is at path. When
// the answer is unknown (permission denied, say) it says true, so readiness
// checks fail closed.
func (osFacts) Exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// IsDir reports whether path is an existing directory (following symlinks).
func (osFacts) IsDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
