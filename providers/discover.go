package providers

import (
	"errors"
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
	return "", &BinaryNotFoundError{Provider: spec.Provider, Tried: spec.Binaries, Install: spec.Install}
}

// Discover resolves the spec's binary from a parent environment: the
// SWITCHYARD_<PROVIDER>_BIN override when set (it must be an absolute path
// to an executable regular file; anything else is an error, never a silent
// fall back to PATH), else ResolveBinary on env's PATH. Errors are
// *BinaryNotFoundError.
func Discover(spec *Spec, env map[string]string) (string, error) {
	v := BinEnvVar(spec.Provider)
	override, set := env[v]
	if !set {
		return ResolveBinary(spec, env["PATH"])
	}
	notFound := func(reason string) error {
		return &BinaryNotFoundError{Provider: spec.Provider, Tried: spec.Binaries, Install: spec.Install,
			Override: true, Reason: reason}
	}
	switch info, err := os.Stat(override); {
	case strings.TrimSpace(override) == "":
		return "", notFound("it is empty")
	case !filepath.IsAbs(override):
		return "", notFound("it is not an absolute path")
	case err != nil:
		return "", notFound("it does not exist or cannot be read")
	case !info.Mode().IsRegular():
		return "", notFound("it is not a regular file")
	case info.Mode().Perm()&0o111 == 0:
		return "", notFound("it is not executable")
	}
	return filepath.Clean(override), nil
}

// executableFile reports whether path is a regular file with an execute
// bit set.
func executableFile(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0
}
