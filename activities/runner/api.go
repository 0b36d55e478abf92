package runner

import (
	"cmp"
	"context"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// Options are one attempt, as the runner command line gives it. Paths are
// as given; the runner makes them absolute.
type Options struct {
	Parent      policy.Parent
	Provider    policy.Provider
	Model       string
	Effort      policy.Effort
	Mode        policy.Access
	Prompt      string
	Cwd         string
	Output      string
	Receipt     string
	ExecutionID string          // "" means the receipt path
	Timeout     time.Duration   // 0 means no deadline
	APISpend    policy.APISpend // deny, approved or legacy ("" means legacy)
	Contract    policy.Contract // "" means legacy
	Progress    string          // "" means no progress snapshots
	// StallTimeout arms the stall watchdog: a workload whose stdout shows
	// no progress (the spec's Classify) for this long is stopped and ends
	// timed-out with a response_stalled error and Result.Stall. 0 means no
	// watchdog; engine jobs pass the resolved timeout (DefaultStallTimeout
	// when the job says 0).
	StallTimeout time.Duration
	// AllowUnverifiedContainment accepts an unrestricted contract: an
	// attempt whose mode lacks the provider's verified containment runs
	// anyway instead of failing closed with unsupported-capability.
	AllowUnverifiedContainment bool
	// OpenCodeChatGPTSubscription is --opencode-chatgpt-subscription: this
	// one OpenCode attempt runs on the native ChatGPT login under
	// --api-spend deny, with exactly the seed's model at default effort.
	OpenCodeChatGPTSubscription bool
}

// validate applies the command line's rules to typed options, in the
// command line's order and with its messages, and fills the legacy
// defaults.
func (o Options) validate() (Options, error) {
	required := []struct{ flag, v string }{
		{"parent", string(o.Parent)}, {"provider", string(o.Provider)}, {"model", o.Model},
		{"effort", string(o.Effort)}, {"mode", string(o.Mode)}, {"prompt", o.Prompt},
		{"cwd", o.Cwd}, {"output", o.Output}, {"receipt", o.Receipt},
	}
	for _, r := range required {
		if strings.TrimSpace(r.v) == "" {
			return o, usagef("--"+r.flag, "--%s is required", r.flag)
		}
	}
	o.APISpend = cmp.Or(o.APISpend, policy.APISpendLegacy)
	o.Contract = cmp.Or(o.Contract, policy.ContractLegacy)
	for _, err := range []error{checkParent(o.Parent), checkProvider(o.Provider), checkEffort(o.Effort), checkMode(o.Mode)} {
		if err != nil {
			return o, err
		}
	}
	if o.ExecutionID != "" && strings.TrimSpace(o.ExecutionID) == "" {
		return o, usagef("--execution-id", "--execution-id must not be blank")
	}
	if o.Timeout < 0 || o.Timeout > maxTimeout || (o.Timeout > 0 && o.Timeout < time.Millisecond) {
		return o, usagef("--timeout", "--timeout must be between 0.001 and %d seconds, got %s", int64(maxTimeout.Seconds()), o.Timeout)
	}
	if o.StallTimeout < 0 || o.StallTimeout > time.Duration(MaxStallTimeoutMS)*time.Millisecond || (o.StallTimeout > 0 && o.StallTimeout < time.Millisecond) {
		return o, usagef("--stall-timeout", "--stall-timeout must be between 0.001 and %d seconds, got %s", MaxStallTimeoutMS/1000, o.StallTimeout)
	}
	if o.APISpend != policy.APISpendLegacy {
		if err := checkAPISpend(o.APISpend); err != nil {
			return o, err
		}
	}
	if err := checkContract(o.Contract); err != nil {
		return o, err
	}
	if o.Progress != "" && strings.TrimSpace(o.Progress) == "" {
		return o, usagef("--progress", "--progress must not be empty")
	}
	return o, nil
}

// Result is a settled attempt: its receipt as a value and as the exact
// bytes written to the receipt file.
type Result struct {
	// Receipt is the schema 2 receipt.
	Receipt policy.Receipt
	// Bytes are the receipt file's contents (indented JSON and a newline),
	// whether or not the write succeeded; Line is the one-line form the
	// command line prints.
	Bytes, Line []byte
	// Written reports whether Bytes reached the receipt file.
	Written bool
	// ExitCode is the command line's exit code for the receipt's status.
	ExitCode int
	// Stall is the allowlisted stall metadata when the workload ended
	// response_stalled (Receipt.Status timed-out); nil otherwise.
	Stall *events.Stall
}

// ErrDeadline is the cause of the Options.Timeout deadline. A context
// whose cause matches it ends the attempt timed-out (exit 124); any other
// cause cancels it (exit 130).
var ErrDeadline = errors.New("runner: the deadline passed")

// Signalled is a cancellation cause naming the signal the runner received:
// SIGINT is forwarded to a live child as SIGINT, anything else as SIGTERM.
// A cause that is not a Signalled (context.Canceled, a worker's own cause)
// cancels as SIGTERM.
type Signalled struct{ Signal os.Signal }

func (s Signalled) Error() string { return "runner: cancelled by " + signalName(s.Signal) }

// causeSignal is the signal a cancellation cause stands for.
func causeSignal(cause error) string {
	var s Signalled
	if errors.As(cause, &s) && signalName(s.Signal) == "SIGINT" {
		return "SIGINT"
	}
	return "SIGTERM"
}

// Run executes one attempt. The error is non-nil only when the options are
// refused before anything is reserved (a *UsageError: no receipt); from
// then on every outcome is a Result whose receipt was also written to
// Options.Receipt.
//
// Cancelling ctx cancels the attempt: with a Signalled cause the runner
// forwards that signal to a live child, and a cause matching ErrDeadline
// times the attempt out instead. Options.Timeout is such a deadline,
// counted from entry to Run.
func (r *Runner) Run(ctx context.Context, o Options) (Result, error) {
	start := r.cfg.Now()
	o, err := o.validate()
	if err != nil {
		return Result{}, err
	}
	a, err := r.newAttempt(o, start)
	if err != nil {
		return Result{}, err
	}
	return a.run(ctx), nil
}
