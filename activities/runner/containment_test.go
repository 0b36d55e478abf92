package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// unverified makes the lane's fake spec declare both modes UNVERIFIED (as
// gemini's does), keeping everything else.
func unverified(l *lane) func(*Config) {
	return func(c *Config) {
		c.Lookup = func(policy.Provider) (*providers.Spec, error) {
			s, err := l.fake.spec()
			if err != nil {
				return nil, err
			}
			s.Containment = map[policy.Access]providers.Containment{
				policy.IsolatedWrite: {Class: providers.ContainmentUnverified, Reason: "fake --approval-mode auto_edit without --sandbox"},
				policy.ReadOnly:      {Class: providers.ContainmentUnverified, Reason: "fake plan mode without --sandbox"},
			}
			return s, nil
		}
	}
}

// write runs the lane as an isolated-write attempt.
func (l *lane) write(mod func(*Config), extra ...string) int {
	args := l.args(extra...)
	i := slices.Index(args, "read-only")
	args[i] = string(policy.IsolatedWrite)
	return l.runner(mod).Main(context.Background(), args)
}

// TestRunnerContainmentFailsClosed: a writer on an UNVERIFIED provider
// stops with unsupported-capability (exit 79) before any probe or CLI
// runs, naming the containment and the fix flag; the flag lets it run; a
// verified writer (the real codex containment) needs no flag.
func TestRunnerContainmentFailsClosed(t *testing.T) {
	t.Parallel()
	t.Run("unverified writer fails closed", func(t *testing.T) {
		t.Parallel()
		l := newLane(t, "ok")
		l.fake.Preflight = "ok"
		code := l.write(unverified(l))
		require.Equal(t, 79, code, "stderr: %s", l.stderr)
		rc := printedReceipt(t, l.stderr)
		require.Equal(t, policy.StatusUnsupportedCapability, rc.Status)
		require.Equal(t, policy.PhasePreflight, *rc.FailurePhase)
		require.False(t, *rc.ProcessStarted)
		require.Equal(t, policy.PreflightNotRun, rc.Preflight.Status)
		require.Contains(t, rc.Error.Message, "isolated-write containment is UNVERIFIED, not the required WORKSPACE_WRITE_NO_NETWORK")
		require.Contains(t, rc.Error.Message, "fix: pass --allow-unverified-containment")
		require.Contains(t, rc.Error.Evidence, "fake --approval-mode auto_edit without --sandbox")
		_, err := os.Stat(l.fake.counter())
		require.True(t, os.IsNotExist(err), "no preflight ran")
		_, err = os.Stat(l.fake.started())
		require.True(t, os.IsNotExist(err), "no CLI started")
		requireGone(t, l.output)
		requireGone(t, l.receipt+".private")
	})
	t.Run("the flag accepts an unrestricted writer", func(t *testing.T) {
		t.Parallel()
		l := newLane(t, "ok")
		l.fake.Preflight = "ok"
		code := l.write(unverified(l), "--allow-unverified-containment")
		require.Equal(t, 0, code, "stderr: %s", l.stderr)
		require.Equal(t, policy.StatusComplete, l.receiptFile().Status)
		waitFile(t, l.fake.started())
	})
	t.Run("a verified writer needs no flag", func(t *testing.T) {
		t.Parallel()
		l := newLane(t, "ok")
		l.fake.Preflight = "ok"
		require.Equal(t, 0, l.write(nil), "stderr: %s", l.stderr)
	})
	t.Run("read-only is not enforced by default", func(t *testing.T) {
		t.Parallel()
		l := newLane(t, "ok")
		l.fake.Preflight = "ok"
		require.Equal(t, 0, l.run(unverified(l)), "stderr: %s", l.stderr)
	})
	t.Run("read-only enforced needs READ_ONLY_NO_NETWORK", func(t *testing.T) {
		t.Parallel()
		l := newLane(t, "ok")
		l.fake.Preflight = "ok"
		strict := func(c *Config) { unverified(l)(c); c.RequireReadOnlyContainment = true }
		require.Equal(t, 79, l.run(strict), "stderr: %s", l.stderr)
		rc := printedReceipt(t, l.stderr)
		require.Contains(t, rc.Error.Message, "read-only containment is UNVERIFIED, not the required READ_ONLY_NO_NETWORK")
		_, err := os.Stat(l.fake.started())
		require.True(t, os.IsNotExist(err), "no CLI started")

		l2 := newLane(t, "ok")
		l2.fake.Preflight = "ok"
		strict2 := func(c *Config) { unverified(l2)(c); c.RequireReadOnlyContainment = true }
		require.Equal(t, 0, l2.run(strict2, "--allow-unverified-containment"), "stderr: %s", l2.stderr)

		l3 := newLane(t, "ok")
		l3.fake.Preflight = "ok"
		require.Equal(t, 0, l3.run(func(c *Config) { c.RequireReadOnlyContainment = true }), "codex read-only is verified: %s", l3.stderr)
	})
	t.Run("the flag is a strict boolean", func(t *testing.T) {
		t.Parallel()
		for _, extra := range [][]string{{"--allow-unverified-containment=true"},
			{"--allow-unverified-containment", "--allow-unverified-containment"}} {
			l := newLane(t, "ok")
			require.Equal(t, ExitUsage, l.run(nil, extra...), "%v", extra)
			requireGone(t, l.receipt)
		}
	})
}

// TestRunnerBinaryOverride: SWITCHYARD_<PROVIDER>_BIN is used instead of
// PATH; an unusable override is unavailable-cli naming the variable and
// the fix, never its value, and never falls back to PATH.
func TestRunnerBinaryOverride(t *testing.T) {
	t.Parallel()
	pinned := filepath.Join(binDir, fakeBinary)
	l := newLane(t, "ok")
	l.fake.Preflight = "ok"
	code := l.run(func(c *Config) { c.Env["PATH"] = ""; c.Env["SWITCHYARD_CODEX_BIN"] = pinned })
	require.Equal(t, 0, code, "stderr: %s", l.stderr)
	require.Equal(t, pinned, *l.receiptFile().Executable)

	l = newLane(t, "ok")
	bad := filepath.Join(l.dir, "no-such-cli")
	code = l.run(func(c *Config) { c.Env["SWITCHYARD_CODEX_BIN"] = bad })
	require.Equal(t, 69, code, "stderr: %s", l.stderr)
	rc := l.receiptFile()
	require.Equal(t, policy.StatusUnavailableCLI, rc.Status)
	require.Equal(t, "codex CLI override SWITCHYARD_CODEX_BIN is unusable: it does not exist or cannot be read", rc.Error.Message)
	require.Contains(t, rc.Error.Evidence, "fix: set SWITCHYARD_CODEX_BIN to the absolute path")
	require.NotContains(t, l.stderr.String(), bad)
}
