package providers

import (
	"os"
	"path/filepath"

	"github.com/switchyard-dev/switchyard/policy"
)

// grokTempReason is the dispatch seed's reason, as the refusal's evidence.
const grokTempReason = "grok's built-in read-only profile keeps its own state and the system temporary directories writable, " +
	"so a read-only Grok lane must see the actual checkout, not a worktree under /tmp, /var/tmp or the host's temporary directory"

// grokReadOnlyCheckout refuses a read-only Grok attempt whose working
// directory lies under a temporary directory (provider-dispatch.md,
// "Read-only mode"): there the read-only sandbox would leave the checkout
// itself writable. Paths compare after resolving symbolic links (macOS's
// /tmp is /private/tmp), and an unresolvable path compares as written.
// Writers are not refused: a writer gets a dedicated worktree wherever it
// lives.
func grokReadOnlyCheckout(req Request) error {
	if req.Mode != policy.ReadOnly {
		return nil
	}
	cwd := resolvedPath(req.Cwd)
	roots := []string{"/tmp", "/var/tmp", os.TempDir()}
	if dir := req.ParentEnv["TMPDIR"]; filepath.IsAbs(dir) {
		roots = append(roots, dir)
	}
	for _, root := range roots {
		if within(resolvedPath(root), cwd) {
			return &PreflightError{Status: policy.StatusUnsupportedCapability,
				Evidence: grokTempReason + "; the working directory is under " + root}
		}
	}
	return nil
}

// resolvedPath is p with symbolic links resolved, or p cleaned when it
// cannot be resolved.
func resolvedPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
