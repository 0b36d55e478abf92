package providers

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
)

// Modes of the private files and directories a spec asks the runner for.
const (
	privateFileMode = 0o600
	privateDirMode  = 0o700
)

// readFileFunc reads a user file (Cursor's global configuration,
// Antigravity's settings). Specs take one so tests can supply content; the
// registered specs use os.ReadFile.
type readFileFunc func(path string) ([]byte, error)

// privateFile is a 0600 file the runner creates exclusively.
func privateFile(path string, content []byte) File {
	return File{Path: path, Mode: privateFileMode, Content: content}
}

// privateDir is a 0700 directory the runner creates when missing.
func privateDir(path string) File {
	return File{Path: path, Mode: privateDirMode, Dir: true}
}

// inPrivate joins a name under the attempt's private directory.
func inPrivate(req Request, name ...string) string {
	return filepath.Join(append([]string{req.PrivateDir}, name...)...)
}

// receiptDigest is the first n hex digits of sha256(receipt path): a
// stable per-attempt name (agents are named pstack-<digest>).
func receiptDigest(receipt string, n int) string {
	sum := sha256.Sum256([]byte(receipt))
	return hex.EncodeToString(sum[:])[:n]
}

// removeEnv is a provider's RemoveEnv: Claude Code's session markers,
// which RUNNER.md removes from every child, plus the provider's own
// extras. Another provider's host markers (Codex's, Spec.HostMarkers) are
// removed by ChildEnv.
func removeEnv(extra ...string) []string {
	out := []string{"CLAUDECODE", "CLAUDE_CODE_CHILD_SESSION", "CLAUDE_CODE_SESSION_ID", "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS"}
	return append(out, extra...)
}

// requireModel rejects a request without a CLI model: every argv pins one.
func requireModel(req Request) error {
	if strings.TrimSpace(req.CLIModel) == "" || req.CLIModel != strings.TrimSpace(req.CLIModel) {
		return fmt.Errorf("%s: the CLI model must be a non-empty slug, got %q", req.Provider, req.CLIModel)
	}
	return nil
}
