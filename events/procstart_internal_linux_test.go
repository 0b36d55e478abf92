package events

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// procStatReference is the stat parser this file's replaced: every
// whitespace-separated field after the last ')', state first, starttime
// the 20th. The kernel separates fields with single spaces and ends the
// line with a newline.
func procStatReference(b []byte) (string, ProcState) {
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return "", ProcUnverified
	}
	f := strings.FieldsFunc(string(b[i+1:]), func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' })
	if len(f) < 20 {
		return "", ProcUnverified
	}
	if f[0] == "Z" || f[0] == "X" {
		return "", ProcAbsent
	}
	return "proc-start:" + f[19], ProcLive
}

// TestProcessStartOfRealProcesses: a running child's token is the
// starttime field of its stat line, stays the same while it runs, and is
// Absent once it has been waited for; a command name with spaces and a
// ')' does not shift the fields; this process's SelfStart is its own
// token; a pid no process holds is Absent.
func TestProcessStartOfRealProcesses(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	require.NoError(t, err)
	b, err := os.ReadFile(sleep)
	require.NoError(t, err)
	odd := filepath.Join(t.TempDir(), "a) b (c")
	require.NoError(t, os.WriteFile(odd, b, 0o755))

	for _, bin := range []string{sleep, odd} {
		cmd := exec.Command(bin, "60")
		require.NoError(t, cmd.Start(), bin)
		pid := cmd.Process.Pid
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		require.NoError(t, err)
		want, wantState := procStatReference(stat)
		require.Equal(t, ProcLive, wantState, "%s: %q", bin, stat)

		tok, st := ProcessStart(pid)
		require.Equal(t, ProcLive, st, bin)
		require.Equal(t, want, tok, bin)
		require.Regexp(t, `^proc-start:[0-9]+$`, tok)
		again, _ := ProcessStart(pid)
		require.Equal(t, tok, again, "a running process keeps its token")

		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()
		_, st = ProcessStart(pid)
		require.Equal(t, ProcAbsent, st, "%s: waited for, the pid is no process", bin)
	}

	self, st := ProcessStart(os.Getpid())
	require.Equal(t, ProcLive, st)
	require.Equal(t, self, SelfStart())
	require.Equal(t, self, SelfStart(), "the remembered answer is the same")

	maxPid, err := os.ReadFile("/proc/sys/kernel/pid_max")
	require.NoError(t, err)
	n, err := strconv.Atoi(strings.TrimSpace(string(maxPid)))
	require.NoError(t, err)
	_, st = ProcessStart(n + 1)
	require.Equal(t, ProcAbsent, st, "a pid above pid_max")
}

// TestParseProcStatRefusesWhatItDoesNotKnow: a line without the
// command's ')', with too few fields, or of a zombie is not a live token.
func TestParseProcStatRefusesWhatItDoesNotKnow(t *testing.T) {
	full := "12 (x) S" + strings.Repeat(" 7", 18) + " 4242 9 9\n"
	tok, st := parseProcStat([]byte(full))
	require.Equal(t, ProcLive, st)
	require.Equal(t, "proc-start:4242", tok)

	for name, line := range map[string]string{
		"no command": "12 x S" + strings.Repeat(" 7", 22),
		"short":      "12 (x) S" + strings.Repeat(" 7", 18) + "\n",
		"empty":      "",
		"zombie":     "12 (x) Z" + strings.Repeat(" 7", 22),
		"dead":       "12 (x) X" + strings.Repeat(" 7", 22),
	} {
		_, st := parseProcStat([]byte(line))
		require.NotEqual(t, ProcLive, st, name)
	}
}

// FuzzParseProcStat: the parser never panics and gives the reference's
// answer on every input.
func FuzzParseProcStat(f *testing.F) {
	if b, err := os.ReadFile("/proc/self/stat"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("1 (a) b) S 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 99\n"))
	f.Add([]byte(")"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tok, st := parseProcStat(b)
		wantTok, wantSt := procStatReference(b)
		if st != wantSt || tok != wantTok {
			t.Fatalf("%q: got %q %v, the reference %q %v", b, tok, st, wantTok, wantSt)
		}
	})
}

// BenchmarkProcessStart reads a live child's token, as the runner does at
// every child's start.
func BenchmarkProcessStart(b *testing.B) {
	cmd := exec.Command("sleep", "60")
	require.NoError(b, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	b.ReportAllocs()
	for b.Loop() {
		if _, st := ProcessStart(cmd.Process.Pid); st != ProcLive {
			b.Fatal(st)
		}
	}
}
