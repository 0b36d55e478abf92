package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// set replaces (or appends) a flag's value in args.
func set(args []string, flag, value string) []string {
	out := slices.Clone(args)
	for i := 0; i+1 < len(out); i++ {
		if out[i] == flag {
			out[i+1] = value
			return out
		}
	}
	return append(out, flag, value)
}

// drop removes a flag and its value from args.
func drop(args []string, flag string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == flag {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// TestRunnerUsageErrors proves that every malformed command line, unusable
// path and rejected descriptor exits 64 before anything is reserved, with
// a message naming the flag at fault, and leaves the paths as they were.
func TestRunnerUsageErrors(t *testing.T) {
	t.Parallel()
	type row struct {
		name  string
		setup func(l *lane) []string // returns the args
		flag  string                 // must appear in the message
	}
	rows := []row{
		{"unknown flag", func(l *lane) []string { return l.args("--bogus", "x") }, "--bogus"},
		{"positional argument", func(l *lane) []string { return append(l.args(), "extra") }, "unexpected argument"},
		{"repeated flag", func(l *lane) []string { return l.args("--model", "gpt-5.4") }, "--model given more than once"},
		{"value that starts with dashes", func(l *lane) []string { return set(l.args(), "--model", "--effort") }, "--model requires a value"},
		{"flag without value at the end", func(l *lane) []string { return append(l.args(), "--timeout") }, "--timeout requires a value"},
		{"empty model", func(l *lane) []string { return set(l.args(), "--model", " ") }, "--model"},
		{"bad parent", func(l *lane) []string { return set(l.args(), "--parent", "gemini") }, "--parent"},
		{"bad provider", func(l *lane) []string { return set(l.args(), "--provider", "gpt") }, "--provider"},
		{"bad effort", func(l *lane) []string { return set(l.args(), "--effort", "ultra") }, "--effort"},
		{"bad mode", func(l *lane) []string { return set(l.args(), "--mode", "full-access") }, "--mode"},
		{"zero timeout", func(l *lane) []string { return l.args("--timeout", "0") }, "--timeout"},
		{"negative timeout", func(l *lane) []string { return l.args("--timeout=-5") }, "--timeout"},
		{"non-numeric timeout", func(l *lane) []string { return l.args("--timeout", "soon") }, "--timeout"},
		{"infinite timeout", func(l *lane) []string { return l.args("--timeout", "1e999") }, "--timeout"},
		{"hex timeout", func(l *lane) []string { return l.args("--timeout", "0x10") }, "--timeout"},
		{"sub-millisecond timeout", func(l *lane) []string { return l.args("--timeout", "0.0001") }, "--timeout"},
		{"bad api-spend", func(l *lane) []string { return l.args("--api-spend", "maybe") }, "--api-spend"},
		{"bad contract", func(l *lane) []string { return l.args("--contract", "loose") }, "--contract"},
		{"blank execution id", func(l *lane) []string { return l.args("--execution-id", " ") }, "--execution-id"},
		{"default effort on codex", func(l *lane) []string { return set(l.args(), "--effort", "default") }, "--effort"},
		{"swe-2 at low effort", func(l *lane) []string {
			return set(set(set(l.args(), "--provider", "devin"), "--model", "swe-2"), "--effort", "low")
		}, "--effort"},
		{"versioned claude pin", func(l *lane) []string {
			return set(set(set(l.args(), "--parent", "codex"), "--provider", "claude"), "--model", "claude-opus-4-5")
		}, "--model"},
		{"auto is not a model", func(l *lane) []string { return set(l.args(), "--model", "auto") }, "--model"},
		{"antigravity without api-spend", func(l *lane) []string {
			return set(set(set(l.args(), "--provider", "antigravity"), "--model", "gemini-3-pro"), "--effort", "default")
		}, "--api-spend"},
		{"claude descriptor a native claude agent covers", func(l *lane) []string {
			return set(set(set(l.args(), "--provider", "claude"), "--model", "opus"), "--effort", "xhigh")
		}, "--provider"},
		{"codex descriptor on a codex parent", func(l *lane) []string { return set(l.args(), "--parent", "codex") }, "--provider"},
		{"missing prompt file", func(l *lane) []string { return set(l.args(), "--prompt", filepath.Join(l.dir, "nope.md")) }, "--prompt"},
		{"prompt is a directory", func(l *lane) []string { return set(l.args(), "--prompt", l.cwd) }, "--prompt"},
		{"cwd is a file", func(l *lane) []string { return set(l.args(), "--cwd", l.prompt) }, "--cwd"},
		{"output is the prompt", func(l *lane) []string { return set(l.args(), "--output", l.prompt) }, "--output"},
		{"receipt is the output", func(l *lane) []string { return set(l.args(), "--receipt", l.output) }, "--receipt"},
		{"receipt aliases the output through a symlinked directory", func(l *lane) []string {
			require.NoError(l.t, os.Symlink(l.dir, filepath.Join(l.dir, "alias")))
			return set(l.args(), "--receipt", filepath.Join(l.dir, "alias", "out.md"))
		}, "--receipt"},
		{"output already exists", func(l *lane) []string {
			require.NoError(l.t, os.WriteFile(l.output, []byte("earlier work"), 0o600))
			return l.args()
		}, "--output"},
		{"receipt is a dangling symlink", func(l *lane) []string {
			require.NoError(l.t, os.Symlink(filepath.Join(l.dir, "elsewhere"), l.receipt))
			return l.args()
		}, "--receipt"},
		{"output directory missing", func(l *lane) []string { return set(l.args(), "--output", filepath.Join(l.dir, "no", "out.md")) }, "--output"},
		{"private directory already exists", func(l *lane) []string {
			require.NoError(l.t, os.Mkdir(l.receipt+".private", 0o700))
			return l.args()
		}, "--receipt"},
		{"progress is the receipt", func(l *lane) []string { return l.args("--progress", l.receipt) }, "--progress"},
		{"progress is the prompt", func(l *lane) []string { return l.args("--progress", l.prompt) }, "--progress"},
		{"progress is the cwd", func(l *lane) []string { return l.args("--progress", l.cwd) }, "--progress"},
		{"progress is an output sidecar", func(l *lane) []string { return l.args("--progress", l.output+".progress") }, "--progress"},
		{"progress is a receipt sidecar", func(l *lane) []string { return l.args("--progress", l.receipt+".cursor-config") }, "--progress"},
		{"progress already exists", func(l *lane) []string {
			require.NoError(l.t, os.WriteFile(l.prg, nil, 0o600))
			return l.args("--progress", l.prg)
		}, "--progress"},
	}
	for _, p := range requiredRunnerFlags {
		rows = append(rows, row{"missing --" + p, func(l *lane) []string { return drop(l.args(), "--"+p) }, "--" + p + " is required"})
	}
	for _, rw := range rows {
		t.Run(rw.name, func(t *testing.T) {
			t.Parallel()
			l := newLane(t, "ok")
			args := rw.setup(l)
			before := existing(l)
			code := l.runner(nil).Main(context.Background(), args)
			require.Equal(t, ExitUsage, code, "stderr: %s", l.stderr)
			require.Empty(t, l.stdout.String())
			require.True(t, strings.HasPrefix(l.stderr.String(), "error: "), l.stderr.String())
			first := strings.SplitN(l.stderr.String(), "\n", 2)[0]
			require.Contains(t, first, rw.flag)
			require.Contains(t, l.stderr.String(), "Usage: switchyard runner")
			require.Equal(t, before, existing(l), "a usage error must not create or remove any path")
			_, err := os.Stat(l.fake.started())
			require.True(t, os.IsNotExist(err), "no CLI may start on a usage error")
		})
	}
}

// existing lists which of the lane's reserved paths exist.
func existing(l *lane) []string {
	var out []string
	for _, p := range []string{l.output, l.receipt, l.prg, l.receipt + ".private"} {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// TestRunnerHelp proves --help wins over other arguments and exits 0.
func TestRunnerHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--help"}, {"-h"}, {"--bogus", "--help"}} {
		l := newLane(t, "ok")
		require.Equal(t, 0, l.runner(nil).Main(context.Background(), args))
		require.Contains(t, l.stdout.String(), "Usage: switchyard runner")
		require.Contains(t, l.stdout.String(), "Examples:")
		require.Empty(t, l.stderr.String())
	}
}

// TestParseTimeout proves the accepted --timeout forms.
func TestParseTimeout(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"1": 1000, "0.5": 500, "90": 90000, "0.001": 1, "2.0004": 2000} {
		d, err := parseTimeout(in)
		require.NoError(t, err, in)
		require.Equal(t, want, d.Milliseconds(), in)
	}
}
