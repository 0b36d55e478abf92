package policy

import "errors"

// ErrUnconfigured reports that a role has no row in a legacy sheet (or the
// sheet is missing): the caller uses its documented default with no
// fallback permission. It is not an error of the sheet.
var ErrUnconfigured = errors.New("role not configured")

// FileFacts supplies the filesystem facts the continuation readiness check
// needs, so that policy itself performs no I/O. A nil FileFacts skips the
// live checks (paths must still be absolute and normalized).
type FileFacts interface {
	// Realpath returns the canonical path of an existing path.
	Realpath(path string) (string, error)
	// Exists reports whether anything exists at path (without following a
	// final symlink).
	Exists(path string) bool
	// IsDir reports whether path is an existing directory.
	IsDir(path string) bool
}
