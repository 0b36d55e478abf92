package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// statusJSON runs status --json over one lane and returns its lane object.
func statusJSON(t *testing.T, progress, receipt string) map[string]any {
	t.Helper()
	var out, errb bytes.Buffer
	r, err := New(Config{Stdout: &out, Stderr: &errb})
	require.NoError(t, err)
	require.Equal(t, 0, r.Status([]string{"--progress", progress, "--receipt", receipt, "--json"}), errb.String())
	var doc struct {
		SchemaVersion int              `json:"schemaVersion"`
		Lanes         []map[string]any `json:"lanes"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc))
	require.Equal(t, 1, doc.SchemaVersion)
	require.Len(t, doc.Lanes, 1)
	return doc.Lanes[0]
}

// TestProgressAndStatusDuringRun proves the snapshot lifecycle on a real
// run: every read of the progress file decodes (atomic replacement), it
// stays 0600 and at most 4096 bytes, status reports the lane active with a
// changeKey that ignores byte counts, and terminal only once the receipt
// lands.
func TestProgressAndStatusDuringRun(t *testing.T) {
	t.Parallel()
	l := newLane(t, "drip")
	ctx, send := signalled()
	r := l.runner(func(c *Config) { c.ActivityFlush = 10 * time.Millisecond })
	done := make(chan int, 1)
	go func() { done <- r.Main(ctx, l.args("--progress", l.prg)) }()
	waitFile(t, l.fake.started())

	var first map[string]any
	require.Eventually(t, func() bool {
		first = statusJSON(t, l.prg, l.receipt)
		act, _ := first["activity"].(map[string]any)
		return first["kind"] == "active" && act != nil && act["stdoutBytes"].(float64) > 0
	}, 10*time.Second, 5*time.Millisecond)
	require.Equal(t, phaseWorkloadRun, first["phase"])
	require.Equal(t, "live", first["launcher"])
	require.Equal(t, "codex", first["provider"])

	var last map[string]any
	for i := 0; i < 200; i++ {
		b, err := os.ReadFile(l.prg)
		require.NoError(t, err)
		require.LessOrEqual(t, len(b), snapshotMaxBytes)
		_, err = decodeSnapshot(b)
		require.NoError(t, err, "read %d saw a torn or invalid snapshot: %s", i, b)
		requireMode(t, l.prg, 0o600)
		if i%50 == 0 {
			last = statusJSON(t, l.prg, l.receipt)
		}
	}
	require.Greater(t, last["seq"].(float64), first["seq"].(float64), "snapshots kept coming")
	require.Greater(t, last["activity"].(map[string]any)["stdoutBytes"].(float64),
		first["activity"].(map[string]any)["stdoutBytes"].(float64))
	require.Equal(t, first["changeKey"], last["changeKey"], "byte counts and elapsed time do not change the key")

	send(syscall.SIGTERM)
	require.Equal(t, 130, <-done)
	end := statusJSON(t, l.prg, l.receipt)
	require.Equal(t, "terminal", end["kind"])
	require.Equal(t, "cancelled", end["status"])
	require.NotEqual(t, first["changeKey"], end["changeKey"])
	require.True(t, strings.HasPrefix(end["changeKey"].(string), first["attemptId"].(string)+"|"))

	var out bytes.Buffer
	r2, err := New(Config{Stdout: &out})
	require.NoError(t, err)
	require.Equal(t, 0, r2.Status([]string{"--progress", l.prg, "--receipt", l.receipt}))
	require.Regexp(t, regexp.MustCompile(`^L1 codex:[0-9a-f]{8} terminal cancelled \(receipt\)`), out.String())
}

// TestProgressSnapshotOnSuccess proves the final snapshot of a complete
// run: terminal, receipt written, bound to the receipt's inode.
func TestProgressSnapshotOnSuccess(t *testing.T) {
	t.Parallel()
	l := newLane(t, "ok")
	require.Equal(t, 0, l.run(nil, "--progress", l.prg))
	s, why := readSnapshot(l.prg)
	require.Empty(t, why)
	require.Equal(t, phaseTerminal, s.Phase)
	require.True(t, s.Terminal.ReceiptWritten)
	require.Nil(t, s.Cancellation.Requested)
	require.Equal(t, roleWorkload, s.Child.Role)
	require.False(t, s.Child.Running)
	require.True(t, s.Child.Drained)
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(l.receipt, &st))
	require.Equal(t, fileRef{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}, *s.ReceiptRef)
	requireMode(t, l.prg, 0o600)
	lane := statusJSON(t, l.prg, l.receipt)
	require.Equal(t, "terminal", lane["kind"])
	require.Equal(t, "complete", lane["status"])
	entries, err := os.ReadDir(l.dir)
	require.NoError(t, err)
	for _, e := range entries {
		require.False(t, strings.HasSuffix(e.Name(), ".tmp"), "no temporary snapshot left: %s", e.Name())
	}
}

// snap is a valid snapshot for status tests.
func snap(pid int, token *string) *snapshot {
	s := &snapshot{SchemaVersion: 1, Kind: progressKind, Seq: 3, UpdatedAt: iso(time.Now()),
		AttemptID: "11111111-2222-4333-8444-555555555555", Provider: policy.Grok,
		Runner: snapRunner{Pid: pid, StartedAt: iso(time.Now().Add(-time.Minute)), StartToken: token}}
	s.Phase = phaseOf(s)
	return s
}

func writeSnap(t *testing.T, path string, s *snapshot) {
	t.Helper()
	s.Phase = phaseOf(s)
	b, err := json.Marshal(s)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o600))
}

// TestStatusLaneKinds proves how status reads each lane situation without
// a running runner.
func TestStatusLaneKinds(t *testing.T) {
	t.Parallel()
	self := os.Getpid()
	selfTok, v := startToken(self)
	require.Equal(t, procLive, v)
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	deadPid := dead.Process.Pid
	const canary = "CANARY-PROMPT-TEXT-7a1"

	rows := []struct {
		name   string
		setup  func(t *testing.T, prg, rcpt string)
		kind   string
		reason string
		extra  map[string]any
	}{
		{"nothing yet", func(*testing.T, string, string) {}, "unknown", "missing", nil},
		{"receipt reserved, no progress", func(t *testing.T, _, rcpt string) {
			require.NoError(t, os.WriteFile(rcpt, nil, 0o600))
		}, "unknown", "not-started", nil},
		{"oversize progress", func(t *testing.T, prg, _ string) {
			require.NoError(t, os.WriteFile(prg, bytes.Repeat([]byte("x"), 9000), 0o600))
		}, "unknown", "oversize", nil},
		{"hostile progress", func(t *testing.T, prg, _ string) {
			require.NoError(t, os.WriteFile(prg, []byte(`{"kind":"pstack-runner-progress","schemaVersion":1,"evil":"`+canary+`"}`), 0o600))
		}, "unknown", "undecodable", nil},
		{"progress is a symlink", func(t *testing.T, prg, _ string) {
			other := prg + "-real"
			writeSnap(t, other, snap(self, &selfTok))
			require.NoError(t, os.Symlink(other, prg))
		}, "unknown", "not-regular-file", nil},
		{"finished without a valid receipt", func(t *testing.T, prg, rcpt string) {
			s := snap(self, &selfTok)
			s.Terminal = &snapTerminal{At: iso(time.Now()), ReceiptWritten: true}
			writeSnap(t, prg, s)
			require.NoError(t, os.WriteFile(rcpt, []byte(`{"schemaVersion":3,"status":"complete"}`), 0o600))
		}, "unknown", "terminal-without-receipt", map[string]any{"receiptWritten": true}},
		{"launcher live", func(t *testing.T, prg, _ string) {
			s := snap(self, &selfTok)
			s.Child = &snapChild{Role: roleWorkload, Pid: self, Running: true}
			writeSnap(t, prg, s)
		}, "active", "", map[string]any{"phase": phaseWorkloadRun, "launcher": "live", "retryWait": false}},
		{"launcher without a start token", func(t *testing.T, prg, _ string) {
			writeSnap(t, prg, snap(self, nil))
		}, "unknown", "launcher-unverified", nil},
		{"launcher gone", func(t *testing.T, prg, _ string) {
			tok := "proc-start:1"
			s := snap(deadPid, &tok)
			s.Child = &snapChild{Role: roleWorkload, Pid: deadPid, StartToken: &tok, Running: true}
			writeSnap(t, prg, s)
		}, "interrupted", "launcher-gone", map[string]any{"child": "gone"}},
		{"launcher pid reused", func(t *testing.T, prg, _ string) {
			tok := "proc-start:0"
			writeSnap(t, prg, snap(self, &tok))
		}, "interrupted", "pid-reused", map[string]any{"child": "none"}},
		{"receipt parses", func(t *testing.T, prg, rcpt string) {
			require.NoError(t, os.WriteFile(rcpt, []byte(`{"schemaVersion":2,"status":"usage-exhausted"}`), 0o600))
			var st syscall.Stat_t
			require.NoError(t, syscall.Stat(rcpt, &st))
			s := snap(self, &selfTok)
			s.ReceiptRef = &fileRef{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}
			writeSnap(t, prg, s)
		}, "terminal", "", map[string]any{"status": "usage-exhausted"}},
		{"receipt replaced after reservation", func(t *testing.T, prg, rcpt string) {
			require.NoError(t, os.WriteFile(rcpt, nil, 0o600))
			var st syscall.Stat_t
			require.NoError(t, syscall.Stat(rcpt, &st))
			s := snap(self, &selfTok)
			s.ReceiptRef = &fileRef{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}
			writeSnap(t, prg, s)
			other := rcpt + ".other"
			require.NoError(t, os.WriteFile(other, []byte(`{"schemaVersion":2,"status":"complete"}`), 0o600))
			require.NoError(t, os.Rename(other, rcpt))
		}, "active", "", nil},
		{"receipt repeats its status", func(t *testing.T, _, rcpt string) {
			require.NoError(t, os.WriteFile(rcpt, []byte(`{"schemaVersion":2,"status":"usage-exhausted","status":"complete"}`), 0o600))
		}, "unknown", "not-started", nil},
		{"receipt spells status in another case", func(t *testing.T, _, rcpt string) {
			require.NoError(t, os.WriteFile(rcpt, []byte(`{"schemaVersion":2,"Status":"complete"}`), 0o600))
		}, "unknown", "not-started", nil},
		{"schema 1 cannot be needs-parent-operation", func(t *testing.T, _, rcpt string) {
			require.NoError(t, os.WriteFile(rcpt, []byte(`{"schemaVersion":1,"status":"needs-parent-operation"}`), 0o600))
		}, "unknown", "not-started", nil},
	}
	for _, rw := range rows {
		t.Run(rw.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			prg, rcpt := filepath.Join(dir, "p.json"), filepath.Join(dir, "r.json")
			rw.setup(t, prg, rcpt)
			lane := statusJSON(t, prg, rcpt)
			require.Equal(t, rw.kind, lane["kind"], "lane: %v", lane)
			if rw.reason != "" {
				require.Equal(t, rw.reason, lane["reason"])
			}
			for k, v := range rw.extra {
				require.Equal(t, v, lane[k], k)
			}
			require.NotContains(t, lane["line"], canary)
			require.NotContains(t, lane["changeKey"], canary)
			require.NotEmpty(t, lane["line"])
			again := statusJSON(t, prg, rcpt)
			require.Equal(t, lane["changeKey"], again["changeKey"], "an unchanged lane keeps its key")
		})
	}
}

// TestStatusText proves the one-line-per-lane text form.
func TestStatusText(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tok, _ := startToken(os.Getpid())
	writeSnap(t, filepath.Join(dir, "a.json"), snap(os.Getpid(), &tok))
	var out bytes.Buffer
	r, err := New(Config{Stdout: &out})
	require.NoError(t, err)
	require.Equal(t, 0, r.Main(context.Background(), []string{"status",
		"--progress", filepath.Join(dir, "a.json"), "--receipt", filepath.Join(dir, "a.receipt"),
		"--progress=" + filepath.Join(dir, "b.json"), "--receipt=" + filepath.Join(dir, "b.receipt")}))
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	require.Len(t, lines, 2)
	require.True(t, strings.HasPrefix(lines[0], "L1 grok:11111111 setup for 1m00s;"), lines[0])
	require.True(t, strings.HasPrefix(lines[1], "L2 unknown: no progress file or receipt yet"), lines[1])
}

// TestStatusUsageErrors proves bad status arguments exit 64.
func TestStatusUsageErrors(t *testing.T) {
	t.Parallel()
	for name, args := range map[string][]string{
		"no pairs":           {"--json"},
		"unpaired progress":  {"--progress", "a"},
		"unknown flag":       {"--progress", "a", "--receipt", "b", "--all"},
		"json twice":         {"--progress", "a", "--receipt", "b", "--json", "--json"},
		"missing value":      {"--progress", "--receipt", "b"},
		"positional":         {"a", "b"},
		"json with a value":  {"--progress", "a", "--receipt", "b", "--json=1"},
		"two receipts first": {"--receipt", "a", "--receipt", "b", "--progress", "c"},
	} {
		var out, errb bytes.Buffer
		r, err := New(Config{Stdout: &out, Stderr: &errb})
		require.NoError(t, err)
		require.Equal(t, ExitUsage, r.Status(args), name)
		require.Empty(t, out.String(), name)
		require.Contains(t, errb.String(), "Usage: switchyard runner status", name)
	}
}

// TestProgressLazySettledFacts: with LazySettledFacts a quick attempt
// writes fewer snapshots (a child's exit and drain wait for the next
// write), and the final one still says everything: terminal, the
// workload exited and drained. Without it every fact is its own write,
// as the runner command's contract reads.
func TestProgressLazySettledFacts(t *testing.T) {
	t.Parallel()
	seq := func(lazy bool) (int64, *snapshot) {
		l := newLane(t, "ok")
		require.Equal(t, 0, l.run(func(c *Config) {
			c.LazySettledFacts = lazy
			// A long flush interval: however slow the machine, lazy facts wait for the terminal write.
			c.ActivityFlush = time.Hour
		}, "--progress", l.prg))
		s, why := readSnapshot(l.prg)
		require.Empty(t, why)
		require.Equal(t, phaseTerminal, s.Phase)
		require.True(t, s.Terminal.ReceiptWritten)
		require.Equal(t, roleWorkload, s.Child.Role)
		require.False(t, s.Child.Running, "the final snapshot has the workload's exit")
		require.True(t, s.Child.Drained, "and its drain")
		require.NotNil(t, s.Child.ExitCode)
		require.Equal(t, 0, *s.Child.ExitCode)
		entries, err := os.ReadDir(l.dir)
		require.NoError(t, err)
		for _, e := range entries {
			require.False(t, strings.HasSuffix(e.Name(), ".tmp"), "no temporary snapshot left: %s", e.Name())
		}
		return s.Seq, s
	}
	eager, _ := seq(false)
	lazy, _ := seq(true)
	// The test lane has no preflight child. Eager: setup, workload
	// started, exited, drained, terminal. Lazy: the exit and the drain
	// ride on the terminal write.
	require.Equal(t, int64(2), eager-lazy, "eager wrote %d snapshots, lazy %d", eager, lazy)
}
