package runner

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// options is the lane's attempt as typed Options (what l.args says).
func (l *lane) options() Options {
	return Options{Parent: policy.ParentClaude, Provider: policy.Codex, Model: "gpt-5.5", Effort: policy.EffortHigh,
		Mode: policy.ReadOnly, Prompt: l.prompt, Cwd: l.cwd, Output: l.output, Receipt: l.receipt}
}

// runAsync runs the lane's attempt through Run on ctx.
func (l *lane) runAsync(ctx context.Context, o Options) chan Result {
	done := make(chan Result, 1)
	r := l.runner(nil)
	go func() {
		res, err := r.Run(ctx, o)
		if err != nil {
			l.t.Errorf("Run refused the attempt: %v", err)
		}
		done <- res
	}()
	return done
}

// TestRunReturnsTheReceiptItWrote proves the typed API's result: the
// receipt value, the exact bytes of the receipt file, the printed line's
// receipt and the exit code, and nothing printed (printing is Main's).
func TestRunReturnsTheReceiptItWrote(t *testing.T) {
	t.Parallel()
	l := newLane(t, "ok")
	o := l.options()
	o.ExecutionID, o.APISpend, o.Progress = "exec-typed", policy.APISpendApproved, l.prg
	res, err := l.runner(nil).Run(context.Background(), o)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode)
	require.True(t, res.Written)
	file, err := os.ReadFile(l.receipt)
	require.NoError(t, err)
	require.Equal(t, file, res.Bytes, "the returned bytes are the file's")
	fromFile := l.receiptFile()
	require.Equal(t, *fromFile, res.Receipt, "the returned receipt is the file's")
	line, err := policy.DecodeReceipt(res.Line)
	require.NoError(t, err)
	require.Equal(t, *fromFile, *line)
	require.Equal(t, policy.StatusComplete, res.Receipt.Status)
	require.Equal(t, "exec-typed", res.Receipt.ExecutionID)
	require.Equal(t, policy.APISpendApproved, res.Receipt.APISpend)
	require.Equal(t, policy.ContractLegacy, res.Receipt.Contract, "an unset contract is legacy")
	require.Empty(t, l.stdout.String())
	require.Empty(t, l.stderr.String())
	s, why := readSnapshot(l.prg)
	require.Empty(t, why)
	require.Equal(t, phaseTerminal, s.Phase)
}

// TestRunCancelCause proves a cancellation cause decides the forwarded
// signal: Signalled(SIGINT) signals the live child with SIGINT, any other
// cause with SIGTERM; both end cancelled (exit 130) with signal recorded.
func TestRunCancelCause(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		cause  error
		signal string
	}{
		{"Signalled SIGINT", Signalled{Signal: syscall.SIGINT}, "SIGINT"},
		{"Signalled SIGTERM", Signalled{Signal: syscall.SIGTERM}, "SIGTERM"},
		{"a worker's own cause", errors.New("worker stopping"), "SIGTERM"},
		{"plain cancel", nil, "SIGTERM"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := newLane(t, "hang")
			ctx, cancel := context.WithCancelCause(context.Background())
			done := l.runAsync(ctx, l.options())
			waitFile(t, l.fake.started())
			cancel(tc.cause)
			res := <-done
			require.Equal(t, 130, res.ExitCode)
			require.Equal(t, policy.StatusCancelled, res.Receipt.Status)
			require.Equal(t, policy.PhaseInvocation, *res.Receipt.FailurePhase)
			require.NotNil(t, res.Receipt.Signal, "a live child was signalled")
			require.Equal(t, tc.signal, *res.Receipt.Signal)
			require.Contains(t, res.Receipt.Error.Message, "cancelled by "+tc.signal)
			require.Equal(t, *l.receiptFile(), res.Receipt)
		})
	}
	t.Run("before anything started", func(t *testing.T) {
		t.Parallel()
		l := newLane(t, "ok")
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(Signalled{Signal: syscall.SIGINT})
		res := <-l.runAsync(ctx, l.options())
		require.Equal(t, 130, res.ExitCode)
		require.Equal(t, policy.StatusCancelled, res.Receipt.Status)
		require.False(t, *res.Receipt.ProcessStarted)
		require.Nil(t, res.Receipt.Signal, "no live child was signalled")
		require.Equal(t, "cancelled by SIGINT before the workload started", res.Receipt.Error.Message)
	})
}

// TestRunDeadlineCause proves a context deadline whose cause is
// ErrDeadline times the attempt out (exit 124, SIGTERM to the live child),
// and so does Options.Timeout.
func TestRunDeadlineCause(t *testing.T) {
	t.Parallel()
	t.Run("caller's deadline", func(t *testing.T) {
		t.Parallel()
		l := newLane(t, "hang")
		// 5 s leaves a loaded machine time to start the child first.
		ctx, cancel := context.WithDeadlineCause(context.Background(), time.Now().Add(5*time.Second), ErrDeadline)
		defer cancel()
		res := <-l.runAsync(ctx, l.options())
		require.Equal(t, 124, res.ExitCode)
		require.Equal(t, policy.StatusTimedOut, res.Receipt.Status)
		require.Equal(t, policy.PhaseInvocation, *res.Receipt.FailurePhase)
		require.Equal(t, "SIGTERM", *res.Receipt.Signal)
		require.Nil(t, res.Receipt.TimeoutMs, "no --timeout was given")
		require.Contains(t, res.Receipt.Error.Message, "the deadline passed; the runner sent SIGTERM")
		require.Equal(t, *l.receiptFile(), res.Receipt)
	})
	t.Run("Options.Timeout", func(t *testing.T) {
		t.Parallel()
		l := newLane(t, "hang")
		o := l.options()
		o.Timeout = 2 * time.Second
		res := <-l.runAsync(context.Background(), o)
		require.Equal(t, 124, res.ExitCode)
		require.Equal(t, policy.StatusTimedOut, res.Receipt.Status)
		require.Equal(t, int64(2000), *res.Receipt.TimeoutMs)
		require.Contains(t, res.Receipt.Error.Message, "the --timeout deadline of 2s passed")
	})
}

// TestRunRefusesBadOptions proves typed options get the command line's
// checks and messages, as a *UsageError with nothing reserved.
func TestRunRefusesBadOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		mod  func(*Options)
		want string
	}{
		{"missing receipt", func(o *Options) { o.Receipt = "" }, "--receipt is required"},
		{"bad parent", func(o *Options) { o.Parent = "gemini" }, `--parent must be claude or codex, got "gemini"`},
		{"bad mode", func(o *Options) { o.Mode = "write" }, `--mode must be read-only or isolated-write, got "write"`},
		{"bad spend", func(o *Options) { o.APISpend = "maybe" }, `--api-spend must be deny or approved, got "maybe"`},
		{"bad contract", func(o *Options) { o.Contract = "loose" }, `--contract must be legacy or strict, got "loose"`},
		{"negative timeout", func(o *Options) { o.Timeout = -time.Second }, "--timeout must be between 0.001 and"},
		{"blank execution id", func(o *Options) { o.ExecutionID = " " }, "--execution-id must not be blank"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := newLane(t, "ok")
			o := l.options()
			tc.mod(&o)
			_, err := l.runner(nil).Run(context.Background(), o)
			var ue *UsageError
			require.ErrorAs(t, err, &ue)
			require.Contains(t, err.Error(), tc.want)
			requireGone(t, l.output)
			requireGone(t, l.receipt)
		})
	}
}
