package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/activities/sandbox"
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

// noLandlock simulates a host whose sandbox self-test could not verify
// anything (an older kernel, macOS).
func noLandlock(c *Config) {
	c.Containment = func() sandbox.Report {
		return sandbox.Unverified(0, "simulated host without Landlock", "run the worker on Linux 6.12 or newer")
	}
}

// both applies two config changes.
func both(f, g func(*Config)) func(*Config) {
	return func(c *Config) { f(c); g(c) }
}

// TestRunnerContainmentFailsClosed: without the sandbox, an attempt on a
// provider whose own containment is UNVERIFIED stops with
// unsupported-capability (exit 79) before any probe or CLI runs, naming
// the containment, why and the fix, for writers and read-only alike; the
// flag lets it run unrestricted (recorded in the receipt); codex's own
// verified sandbox needs no flag.
func TestRunnerContainmentFailsClosed(t *testing.T) {
	t.Parallel()
	for _, mode := range []policy.Access{policy.IsolatedWrite, policy.ReadOnly} {
		t.Run(string(mode)+" without the sandbox fails closed", func(t *testing.T) {
			t.Parallel()
			l := newLane(t, "ok")
			l.fake.Preflight = "ok"
			var code int
			if mode == policy.IsolatedWrite {
				code = l.write(both(unverified(l), noLandlock))
			} else {
				code = l.run(both(unverified(l), noLandlock))
			}
			require.Equal(t, 79, code, "stderr: %s", l.stderr)
			rc := printedReceipt(t, l.stderr)
			require.Equal(t, policy.StatusUnsupportedCapability, rc.Status)
			require.Equal(t, policy.PhasePreflight, *rc.FailurePhase)
			require.False(t, *rc.ProcessStarted)
			require.Equal(t, policy.PreflightNotRun, rc.Preflight.Status)
			require.Contains(t, rc.Error.Message, string(mode)+" containment is UNVERIFIED, not the required "+string(providers.RequiredContainment(mode)))
			require.Contains(t, rc.Error.Message, "fix: run the worker on Linux 6.12 or newer")
			require.Contains(t, rc.Error.Message, "--allow-unverified-containment")
			require.Contains(t, rc.Error.Evidence, "simulated host without Landlock")
			require.Equal(t, &policy.ReceiptContainment{Class: "UNVERIFIED"}, rc.Containment)
			_, err := os.Stat(l.fake.counter())
			require.True(t, os.IsNotExist(err), "no preflight ran")
			_, err = os.Stat(l.fake.started())
			require.True(t, os.IsNotExist(err), "no CLI started")
			requireGone(t, l.output)
			requireGone(t, l.receipt+".private")
		})
	}
	t.Run("the flag accepts an unrestricted writer", func(t *testing.T) {
		t.Parallel()
		l := newLane(t, "ok")
		l.fake.Preflight = "ok"
		code := l.write(both(unverified(l), noLandlock), "--allow-unverified-containment")
		require.Equal(t, 0, code, "stderr: %s", l.stderr)
		rc := l.receiptFile()
		require.Equal(t, policy.StatusComplete, rc.Status)
		require.Equal(t, &policy.ReceiptContainment{Class: "UNVERIFIED", Unrestricted: true}, rc.Containment)
		waitFile(t, l.fake.started())
	})
	t.Run("codex's own sandbox verifies without Landlock", func(t *testing.T) {
		t.Parallel()
		l := newLane(t, "ok")
		l.fake.Preflight = "ok"
		require.Equal(t, 0, l.write(noLandlock), "stderr: %s", l.stderr)
		rc := l.receiptFile()
		require.Equal(t, "WORKSPACE_WRITE_NO_NETWORK", rc.Containment.Class)
		require.Contains(t, rc.Containment.By, "the provider's own sandbox")
	})
	t.Run("the kernel contains an unverified provider", func(t *testing.T) {
		t.Parallel()
		abi := needLandlock(t)
		for _, mode := range []policy.Access{policy.ReadOnly, policy.IsolatedWrite} {
			l := newLane(t, "ok")
			l.fake.Preflight = "ok"
			var code int
			if mode == policy.IsolatedWrite {
				code = l.write(unverified(l))
			} else {
				code = l.run(unverified(l))
			}
			require.Equal(t, 0, code, "stderr: %s", l.stderr)
			rc := l.receiptFile()
			require.Equal(t, &policy.ReceiptContainment{Class: string(providers.RequiredContainment(mode)),
				By: fmt.Sprintf("the kernel (Landlock ABI %d)", abi)}, rc.Containment)
		}
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

// needLandlock skips without a usable Landlock and returns its ABI.
func needLandlock(t *testing.T) int {
	t.Helper()
	abi := sandbox.KernelABI()
	if abi < sandbox.MinABI {
		t.Skipf("Landlock ABI %d < %d on this host", abi, sandbox.MinABI)
	}
	return abi
}

func requiredClass(mode policy.Access) string { return string(providers.RequiredContainment(mode)) }
