package providers

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrBinaryNotFound is wrapped when no binary candidate of a spec is an
// executable regular file on PATH (the runner's unavailable-cli).
var ErrBinaryNotFound = errors.New("provider CLI not found on PATH")

// ResolveBinary searches pathEnv (a PATH value) for the spec's binary
// candidates in order of preference: the first candidate found in any PATH
// directory wins over later candidates. Only absolute PATH entries are
// searched (an empty or relative entry would resolve against the cwd), and
// only executable regular files count (symlinks are followed). The result
// is the PATH directory joined with the candidate name.
func ResolveBinary(spec *Spec, pathEnv string) (string, error) {
	for _, name := range spec.Binaries {
		for _, dir := range filepath.SplitList(pathEnv) {
			if dir == "" || !filepath.IsAbs(dir) {
				continue
			}
			candidate := filepath.Join(dir, name)
			if executableFile(candidate) {
				return candidate, nil
			}
		}
	}
	return "", fmt.Errorf("%w: %s tried %s", ErrBinaryNotFound, spec.Provider, strings.Join(spec.Binaries, ", "))
}

// executableFile reports whether path is a regular file with an execute
// bit set.
func executableFile(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0
}
