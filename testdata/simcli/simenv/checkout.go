package simenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Checkout returns a fresh, empty directory for a test's checkout that
// lies outside every temporary directory (/tmp, /var/tmp, os.TempDir()),
// removed after the test. A read-only Grok lane refuses a working
// directory under a temporary directory (providers/grok_checkout.go: the
// dispatch seed asks for the actual checkout), so tests that run one
// through the runner put their checkout here. It lives under the user's
// cache directory, as the pinned real CLIs do.
func Checkout(t testing.TB) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatalf("simenv: no user cache directory for a non-temporary checkout: %v", err)
	}
	root := filepath.Join(cache, "switchyard", "test-checkouts")
	for _, tmp := range []string{"/tmp", "/var/tmp", os.TempDir()} {
		if r, err := filepath.EvalSymlinks(tmp); err == nil {
			tmp = r
		}
		if c, err := filepath.EvalSymlinks(cache); err == nil && (c == tmp || strings.HasPrefix(c, tmp+string(filepath.Separator))) {
			t.Fatalf("simenv: the user cache directory %s is under the temporary directory %s; a non-temporary checkout needs another HOME or XDG_CACHE_HOME", cache, tmp)
		}
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatalf("simenv: %v", err)
	}
	dir, err := os.MkdirTemp(root, "checkout-")
	if err != nil {
		t.Fatalf("simenv: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
