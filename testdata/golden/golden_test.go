package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// recorder is a tb that records failures; FailNow ends the goroutine
// running check, like testing.T's.
type recorder struct {
	errs   []string
	failed bool
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) FailNow() { r.failed = true; runtime.Goexit() }

// run calls check in its own goroutine and returns what it recorded.
func run(update bool, path string, got string) *recorder {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(r, update, path, []byte(got), "TestX/sub")
	}()
	<-done
	return r
}

func TestCheckCompares(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.golden")
	require.NoError(t, os.WriteFile(path, []byte("one\n"), 0o644))

	r := run(false, path, "one\n")
	require.Empty(t, r.errs)
	require.False(t, r.failed)

	r = run(false, path, "two\n")
	require.True(t, r.failed)
	require.Len(t, r.errs, 1)
	require.Contains(t, r.errs[0], "output differs from golden "+path)
	require.Contains(t, r.errs[0], "-run 'TestX/sub' -update")

	r = run(false, filepath.Join(dir, "missing.golden"), "x")
	require.True(t, r.failed)
	require.Contains(t, r.errs[0], "golden file "+filepath.Join(dir, "missing.golden")+" is missing")
	require.NoFileExists(t, filepath.Join(dir, "missing.golden"), "a compare never writes")

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "one\n", string(data), "a failed compare leaves the file alone")
}

// TestCheckUpdate: under -update an unchanged file passes untouched, and a
// rewrite (or a new file) fails naming the file.
func TestCheckUpdate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.golden")
	require.NoError(t, os.WriteFile(path, []byte("one\n"), 0o644))
	old := time.Unix(1_000_000, 0)
	require.NoError(t, os.Chtimes(path, old, old))

	r := run(true, path, "one\n")
	require.Empty(t, r.errs)
	require.False(t, r.failed)
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.True(t, st.ModTime().Equal(old), "an unchanged golden is not rewritten")

	r = run(true, path, "two\n")
	require.False(t, r.failed, "the test goes on after a rewrite, so every golden is refreshed")
	require.Equal(t, []string{"updated golden " + path + "; review the diff and rerun without -update"}, r.errs)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "two\n", string(data))

	fresh := filepath.Join(dir, "new", "b.golden")
	r = run(true, fresh, "b\n")
	require.Equal(t, []string{"updated golden " + fresh + "; review the diff and rerun without -update"}, r.errs)
	data, err = os.ReadFile(fresh)
	require.NoError(t, err)
	require.Equal(t, "b\n", string(data))
}

// TestRerunHint names the package relative to the module root.
func TestRerunHint(t *testing.T) {
	require.Equal(t, "go test ./testdata/golden -run 'TestA/b' -update", rerunHint("TestA/b"))
}

// TestCheckPublic drives the exported entry point with both string and
// []byte content; an unchanged file passes with and without -update.
func TestCheckPublic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.golden")
	require.NoError(t, os.WriteFile(path, []byte("c\n"), 0o644))
	Check(t, filepath.ToSlash(path), "c\n")
	Check(t, filepath.ToSlash(path), []byte("c\n"))
}

// tbRecorder is a testing.TB whose failures are recorded instead of
// failing the test, so Check itself can be driven under UPDATE_GOLDENS.
type tbRecorder struct {
	testing.TB
	errs []string
}

func (r *tbRecorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *tbRecorder) FailNow() { runtime.Goexit() }

// TestUpdateGoldensEnv: UPDATE_GOLDENS=1 makes Check rewrite like -update
// (and fail naming the file); unset, empty, 0 or garbage compare.
func TestUpdateGoldensEnv(t *testing.T) {
	for _, tt := range []struct {
		value  string
		update bool
	}{{"1", true}, {"true", true}, {"0", false}, {"", false}, {"yes please", false}} {
		t.Run("UPDATE_GOLDENS="+tt.value, func(t *testing.T) {
			t.Setenv("UPDATE_GOLDENS", tt.value)
			require.Equal(t, tt.update, Updating())
			path := filepath.Join(t.TempDir(), "a.golden")
			require.NoError(t, os.WriteFile(path, []byte("one\n"), 0o644))
			r := &tbRecorder{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				Check(r, path, "two\n")
			}()
			<-done
			require.Len(t, r.errs, 1)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			if tt.update {
				require.Contains(t, r.errs[0], "updated golden "+path)
				require.Equal(t, "two\n", string(data))
			} else {
				require.Contains(t, r.errs[0], "output differs from golden")
				require.Equal(t, "one\n", string(data))
			}
		})
	}
}
