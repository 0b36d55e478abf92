package runner

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// argSep separates the arguments of one fuzzed command line: a NUL can
// never be inside a real argv element.
const argSep = "\x00"

// validRunnerArgs is a complete runner command line.
var validRunnerArgs = []string{"--parent", "claude", "--provider", "codex", "--model", "gpt-5.5",
	"--effort", "high", "--mode", "read-only", "--prompt", "/w/prompt.md", "--cwd", "/w/repo",
	"--output", "/w/output.md", "--receipt", "/w/receipt.json"}

// FuzzParseRunnerFlags feeds arbitrary command lines to parseRunnerFlags,
// which reads the runner's argv (built by a worker from a job, or typed by
// a person). It proves: parsing never panics; a refusal is ErrHelp or a
// *UsageError naming the flag at fault; an accepted command line holds
// only closed-vocabulary values, non-blank required paths and a timeout
// within (0, maxTimeout].
func FuzzParseRunnerFlags(f *testing.F) {
	join := func(args ...string) string { return strings.Join(args, argSep) }
	valid := join(validRunnerArgs...)
	for _, extra := range [][]string{nil, {"--timeout", "90"}, {"--timeout=0.001"}, {"--timeout", "1e9"},
		{"--api-spend", "deny", "--contract", "strict", "--progress", "/w/p.json", "--execution-id", "x1"},
		{"--execution-id", " "}, {"--bogus", "x"}, {"extra"}, {"--model", "again"}, {"--timeout"}, {"-h"},
		{"--timeout", "0x10"}, {"--timeout", "NaN"}, {"--timeout", "1_0"}, {"--mode=isolated-write"}} {
		f.Add(valid + argSep + join(extra...))
	}
	f.Add("")
	f.Add("--parent=codex" + argSep + "--help")
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, argSep)
		o, err := parseRunnerFlags(args)
		if err != nil {
			if errors.Is(err, ErrHelp) {
				return
			}
			var ue *UsageError
			require.True(t, errors.As(err, &ue), "error %T %v", err, err)
			require.NotEmpty(t, ue.Msg)
			require.True(t, ue.Flag == "" || strings.Contains(ue.Msg, ue.Flag), "message %q names %q", ue.Msg, ue.Flag)
			return
		}
		require.Contains(t, []policy.Parent{policy.ParentClaude, policy.ParentCodex}, o.Parent)
		require.True(t, o.Provider.Valid() || o.Provider == policy.Gemini, "provider %q", o.Provider)
		require.True(t, o.Effort.Valid(), "effort %q", o.Effort)
		require.Contains(t, []policy.Access{policy.ReadOnly, policy.IsolatedWrite}, o.Mode)
		require.Contains(t, []policy.APISpend{policy.APISpendLegacy, policy.APISpendDeny, policy.APISpendApproved}, o.APISpend)
		require.Contains(t, []policy.Contract{policy.ContractLegacy, policy.ContractStrict}, o.Contract)
		for _, v := range []string{o.Model, o.Prompt, o.Cwd, o.Output, o.Receipt} {
			require.NotEmpty(t, strings.TrimSpace(v))
		}
		require.True(t, o.Timeout == 0 || (o.Timeout >= time.Millisecond && o.Timeout <= maxTimeout+time.Millisecond), "timeout %v", o.Timeout)
	})
}

// FuzzParseTimeout feeds arbitrary text to parseTimeout. It proves: it
// never panics; a refusal is a *UsageError for --timeout; an accepted value
// is a whole number of milliseconds from 1ms to maxTimeout (rounding may
// add at most half a millisecond).
func FuzzParseTimeout(f *testing.F) {
	for _, s := range []string{"90", "0.5", "0.001", "0.0004", "0.0005", "0", "-1", "1e3", "3153600000", "3153600001",
		"1e400", "NaN", "Inf", "-Inf", "0x1p3", "1_000", " 1", "1 ", "+1", ".5", "5.", "9223372036.854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d, err := parseTimeout(v)
		if err != nil {
			var ue *UsageError
			require.True(t, errors.As(err, &ue), "error %T %v", err, err)
			require.Equal(t, "--timeout", ue.Flag)
			require.Zero(t, d)
			return
		}
		require.GreaterOrEqual(t, d, time.Millisecond)
		require.LessOrEqual(t, d, maxTimeout+time.Millisecond)
		require.Zero(t, d%time.Millisecond)
	})
}

// FuzzStatusFlags feeds arbitrary command lines to the `runner status`
// flag set. It proves: parsing never panics; a refusal is ErrHelp or a
// *UsageError; an accepted command line has only --progress, --receipt and
// --json, values exactly as given.
func FuzzStatusFlags(f *testing.F) {
	for _, s := range []string{"--progress\x00a\x00--receipt\x00b", "--progress=a\x00--receipt=b\x00--json",
		"--json=1", "--json\x00--json", "--progress\x00--receipt", "x", "--", "-h", "--progress\x00a\x00--progress\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, argSep)
		p, err := statusFlags.parse(args)
		if err != nil {
			if errors.Is(err, ErrHelp) {
				return
			}
			var ue *UsageError
			require.True(t, errors.As(err, &ue), "error %T %v", err, err)
			return
		}
		n := 0
		for name, vals := range p.values {
			require.Contains(t, []string{"progress", "receipt"}, name)
			n += 2 * len(vals)
		}
		for name := range p.booleans {
			require.Equal(t, "json", name)
			n++
		}
		inline := 0
		for _, a := range args {
			if strings.HasPrefix(a, "--progress=") || strings.HasPrefix(a, "--receipt=") {
				inline++
			}
		}
		require.Equal(t, len(args), n-inline, "every argument is a flag or its value")
	})
}
