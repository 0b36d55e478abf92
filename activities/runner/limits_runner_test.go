package runner

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// sparseFile makes path a file of n bytes without writing them.
func sparseFile(t *testing.T, path string, n int64) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(n))
	require.NoError(t, f.Close())
}

// TestLimitsRunnerPrompt proves the runner reads a prompt of exactly
// maxPromptBytes and refuses one byte more, before reserving anything,
// with a usage error (exit 64) that names the prompt limit.
func TestLimitsRunnerPrompt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		size int64
		ok   bool
	}{
		{"exactly the limit is read", maxPromptBytes, true},
		{"one byte over the limit is refused", maxPromptBytes + 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "prompt.md")
			sparseFile(t, path, tc.size)
			b, err := readPrompt(path)
			if tc.ok {
				require.NoError(t, err)
				require.Len(t, b, maxPromptBytes)
				return
			}
			require.Nil(t, b)
			var ue *UsageError
			require.ErrorAs(t, err, &ue)
			require.Equal(t, "--prompt", ue.Flag)
			require.Contains(t, err.Error(), strconv.Itoa(maxPromptBytes)+"-byte (16 MiB) prompt limit")
		})
	}
	t.Run("the runner exits 64 and reserves nothing", func(t *testing.T) {
		t.Parallel()
		l := newLane(t, "ok")
		sparseFile(t, l.prompt, maxPromptBytes+1)
		require.Equal(t, ExitUsage, l.run(nil))
		require.Contains(t, l.stderr.String(), "prompt limit")
		requireGone(t, l.receipt)
		requireGone(t, l.output)
	})
}

// TestLimitsRunnerCapture proves a child's output beyond CaptureLimit is
// not kept, and that the failure's evidence records the truncation naming
// the limit (raw output is never stored).
func TestLimitsRunnerCapture(t *testing.T) {
	t.Parallel()
	l := newLane(t, "flood:300000")
	code := l.run(func(c *Config) { c.CaptureLimit = 4096 })
	require.Equal(t, 70, code, "stderr: %s", l.stderr)
	rc := l.receiptFile()
	require.NotNil(t, rc.Error)
	require.Contains(t, rc.Error.Evidence, "capture kept 4096 of 300000 stdout and 0 of 0 stderr bytes (CaptureLimit 4096 bytes per stream)")
}

// TestLimitsRunnerProgressSnapshot proves the 4096-byte snapshot limit on
// both sides: status reads a snapshot of exactly snapshotMaxBytes and
// reports one byte more as "oversize" (RUNNER.md's reason vocabulary); the
// writer never writes a snapshot over the limit, it stops writing instead
// (progress is telemetry and never changes the attempt's outcome).
func TestLimitsRunnerProgressSnapshot(t *testing.T) {
	t.Parallel()
	valid, err := json.Marshal(snap(os.Getpid(), nil))
	require.NoError(t, err)
	pad := func(n int) []byte {
		return append(append([]byte{}, valid...), bytes.Repeat([]byte(" "), n-len(valid))...)
	}
	for _, tc := range []struct {
		name string
		file []byte
		why  string
	}{
		{"exactly the limit is read", pad(snapshotMaxBytes), ""},
		{"one byte over the limit is oversize", pad(snapshotMaxBytes + 1), "oversize"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "progress.json")
			require.NoError(t, os.WriteFile(path, tc.file, 0o600))
			s, why := readSnapshot(path)
			require.Equal(t, tc.why, why)
			require.Equal(t, tc.why == "", s != nil)
			if tc.why != "" {
				lane := statusJSON(t, path, filepath.Join(t.TempDir(), "receipt.json"))
				require.Equal(t, "unknown", lane["kind"])
				require.Equal(t, tc.why, lane["reason"])
			}
		})
	}
	t.Run("the writer refuses an oversize snapshot", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "progress.json")
		require.NoError(t, os.WriteFile(path, nil, 0o600))
		var st syscall.Stat_t
		require.NoError(t, syscall.Stat(path, &st))
		r := &progressReporter{path: path, owned: fileRef{Dev: uint64(st.Dev), Ino: uint64(st.Ino)},
			now: time.Now, state: *snap(os.Getpid(), nil)}
		r.mu.Lock()
		r.flush()
		r.mu.Unlock()
		written, err := os.ReadFile(path)
		require.NoError(t, err)
		_, err = decodeSnapshot(written)
		require.NoError(t, err, "a normal snapshot is written")

		huge := string(bytes.Repeat([]byte("t"), snapshotMaxBytes))
		r.spawned(roleWorkload, os.Getpid())
		r.mu.Lock()
		r.state.Child.StartToken = &huge
		r.flush()
		require.True(t, r.disabled, "an oversize snapshot disables the reporter")
		r.mu.Unlock()
		after, err := os.ReadFile(path)
		require.NoError(t, err)
		require.LessOrEqual(t, len(after), snapshotMaxBytes)
		_, err = decodeSnapshot(after)
		require.NoError(t, err, "the last snapshot written stays whole")
	})
}
