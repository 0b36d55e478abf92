package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// RunRequest is what Submit needs to start a run.
type RunRequest struct {
	// RunID names the run; default a fresh Config.NewID(). It must pass
	// events.ValidateRunID and not exist yet.
	RunID string
	// Sheet is the model sheet's exact bytes; they are frozen into the
	// run's first event. Required.
	Sheet []byte
	// Role is the role to resolve into lanes (a row header or a leaf role).
	// Required.
	Role string
	// Parent is the parent harness: claude or codex. Required.
	Parent policy.Parent
	// Mode is the run's access mode; default read-only. isolated-write
	// needs Cwd inside a git work tree: every attempt runs in a fresh
	// worktree of its HEAD.
	Mode policy.Access
	// Prompt is the task prompt, at most 16 MiB (the runner's limit too).
	// When nil, the file at PromptPath is read.
	// The bytes are frozen once under the data directory (run-created
	// records that copy's path and digest) and copied into every attempt.
	Prompt     []byte
	PromptPath string
	// Cwd is the checkout the run is for (made absolute). Required.
	Cwd string
	// Timeout is each attempt's runner deadline; 0 means none.
	Timeout time.Duration
	// Contract is the worker ownership contract; default legacy.
	Contract policy.Contract
	// AllowUnknownQuota lists the providers whose UNKNOWN quota or
	// unverified eligibility this run explicitly accepts (run
	// --allow-unknown-quota P): the eligibility gate lets their attempts
	// launch with a warning, recorded in the run, instead of excluding
	// them. It never overrides a policy block, an unavailable allowance, a
	// known exhaustion or a signed-out CLI. Each must be a known provider;
	// recorded once each, in the order given.
	AllowUnknownQuota []policy.Provider
	// StallTimeout is each attempt's response-stall timeout: an attempt
	// whose provider stream shows no progress this long ends
	// response_stalled. 0 means events.DefaultStallTimeoutMs (5m); it is
	// recorded in whole milliseconds, at most events.MaxStallTimeoutMs.
	StallTimeout time.Duration
	// ProviderStallTimeouts overrides StallTimeout for the attempts of a
	// provider (each a known provider; 0 means the default).
	ProviderStallTimeouts map[policy.Provider]time.Duration
	// NoStallWatchdog turns the stall watchdog off for the run (run
	// --stall-timeout off): no attempt is stopped for silence. The
	// run-created records the choice either way (options.stallWatchdog);
	// it excludes StallTimeout and ProviderStallTimeouts.
	NoStallWatchdog bool
	// AllowUnverifiedContainment lists the providers whose attempts may
	// launch although their mode's containment is UNVERIFIED (run
	// --allow-unverified-containment P): an explicit unrestricted contract,
	// recorded in the run and carried on each of their jobs. Without it such
	// a writer fails closed at launch (unsupported-capability). Each must be
	// a known provider (recorded once each, in the order given), and only
	// with the legacy contract.
	AllowUnverifiedContainment []policy.Provider
	// OpenCodeChatGPTSubscription (run --opencode-chatgpt-subscription)
	// runs the run's OpenCode attempts that are exactly
	// opencode:openai/gpt-6.1-sol@default under apiSpend deny on OpenCode's
	// own ChatGPT login (the runner's --opencode-chatgpt-subscription);
	// recorded in the run. Every other attempt is unchanged.
	OpenCodeChatGPTSubscription bool
}

// Submit validates req, freezes its sheet and prompt, and records the run's
// run-created event, returning the run id. The sheet is parsed and the role
// resolved with Config.Policy; policy errors (*policy.PolicyError,
// policy.ErrUnconfigured) are returned as policy returns them. Submit only
// appends: the Engine whose Run is active (in this process or any other
// on the same store) picks the run up from the store and drives it.
func (e *Engine) Submit(ctx context.Context, req RunRequest) (string, error) {
	created, run, err := e.prepareRun(ctx, req)
	if err != nil {
		return "", err
	}
	prompt := req.Prompt
	if prompt == nil {
		if prompt, err = readLimited(req.PromptPath, maxPromptBytes, promptLimit); err != nil {
			return "", invalidf("read prompt: %v", err)
		}
	}
	if len(prompt) > maxPromptBytes {
		// Frozen, it could never be copied into an attempt, nor read by
		// the runner.
		return "", invalidf("the prompt is %d bytes, over the %s limit (%d bytes)", len(prompt), promptLimit, maxPromptBytes)
	}
	if len(prompt) == 0 {
		return "", invalidf("the prompt is empty")
	}
	var froze bool
	if created.PromptPath, froze, err = e.freezePrompt(run, prompt); err != nil {
		if errors.Is(err, fs.ErrExist) {
			// Another prompt is frozen under the id: a run recorded with
			// it, or a Submit that died before recording one.
			if _, lerr := e.cfg.Store.Last(ctx, run, events.RunLane); lerr == nil {
				return "", fmt.Errorf("run %s: %w", run, ErrRunExists)
			}
		}
		return "", fmt.Errorf("%w (run %s)", err, run)
	}
	created.PromptDigest = events.Digest(prompt)
	env := events.NewEnvelope(run, events.RunLane, e.cfg.Now(), created)
	record := e.AcceptSubmission
	if e.cfg.SubmitVia != nil {
		record = e.cfg.SubmitVia
	}
	if err := record(ctx, env); err != nil {
		switch {
		case errors.Is(err, events.ErrRunExists):
			if froze {
				e.unfreezeStray(ctx, run, created.PromptPath, created.PromptDigest)
			}
			return "", fmt.Errorf("run %s: %w", run, ErrRunExists)
		case errors.Is(err, events.ErrInvalid):
			return "", invalidf("%v", err)
		}
		return "", fmt.Errorf("record run-created for %s: %w", run, err)
	}
	e.log.Info("run submitted", "run", run, "role", created.Role, "lanes", len(created.Lanes), "mode", created.Access)
	return run, nil
}

// AcceptSubmission records env, a submitted run-created event (Submit's
// own, or a parent's through events.JetStream.ServeSubmissions): it must
// decode as one, for a run that has no events yet, and resolve its lanes
// again from its own frozen sheet. The same event already recorded (a
// retried submission) is a success; another one is events.ErrRunExists.
func (e *Engine) AcceptSubmission(ctx context.Context, env events.Envelope) error {
	created, ok := env.Payload.(events.RunCreated)
	if env.Type != events.TypeRunCreated || env.Lane != events.RunLane || !ok {
		return fmt.Errorf("%w: a submission must be a run-created event", events.ErrInvalid)
	}
	if err := env.Validate(); err != nil {
		return err
	}
	if err := e.checkSubmitted(env.Run, created); err != nil {
		return fmt.Errorf("%w: run %s: %v", events.ErrInvalid, env.Run, err)
	}
	_, err := e.cfg.Store.Append(ctx, env, 0)
	if err == nil {
		return nil
	}
	if !errors.Is(err, events.ErrConflict) {
		return err
	}
	if first, lerr := e.cfg.Store.Load(ctx, env.Run, events.RunLane); lerr == nil && len(first) > 0 {
		first[0].Seq, env.Seq = 0, 0
		a, aerr := events.Encode(first[0])
		b, berr := events.Encode(env)
		if aerr == nil && berr == nil && bytes.Equal(a, b) {
			return nil // a retry of a submission recorded before
		}
	}
	return fmt.Errorf("run %s: %w", env.Run, events.ErrRunExists)
}

// checkSubmitted checks what a submitter could forge in run-created: the
// lanes must be the frozen sheet's resolution, and the prompt the frozen
// copy under this data directory with the recorded digest (never a file
// elsewhere that attempts would then copy and send to a provider).
func (e *Engine) checkSubmitted(run string, c events.RunCreated) error {
	if d := replayCreated(c, e.cfg.Policy); d != nil {
		return fmt.Errorf("its lanes are not its sheet's resolution (expected %s)", d.Expected)
	}
	if want := filepath.Join(e.runDir(run), frozenPrompt); c.PromptPath != want {
		return fmt.Errorf("prompt path %q is not the run's frozen prompt %s", c.PromptPath, want)
	}
	prompt, err := readLimited(c.PromptPath, maxPromptBytes, promptLimit)
	if err != nil {
		return fmt.Errorf("read the frozen prompt: %v", err)
	}
	if events.Digest(prompt) != c.PromptDigest {
		return errors.New("the frozen prompt does not match the recorded digest")
	}
	return nil
}

// prepareRun checks everything about req that does not touch the data
// directory and returns run-created without its prompt fields.
//
// It does not look the run id up: the frozen prompt is created
// exclusively (an existing run's is never replaced) and the recording
// appends only to an empty run, so an id in use ends as ErrRunExists
// there, and a new run's submission costs no store read.
func (e *Engine) prepareRun(ctx context.Context, req RunRequest) (events.RunCreated, string, error) {
	return e.resolveRun(ctx, req)
}

// resolveRun is prepareRun without the check that the run id is new.
func (e *Engine) resolveRun(ctx context.Context, req RunRequest) (events.RunCreated, string, error) {
	var c events.RunCreated
	if len(req.Sheet) == 0 {
		return c, "", invalidf("the sheet is empty")
	}
	if _, err := policy.ParseParent(string(req.Parent)); err != nil {
		return c, "", err
	}
	mode := req.Mode
	if mode == "" {
		mode = policy.ReadOnly
	}
	if _, err := policy.ParseAccess(string(mode)); err != nil {
		return c, "", err
	}
	contract := req.Contract
	if contract == "" {
		contract = policy.ContractLegacy
	}
	if contract != policy.ContractLegacy && contract != policy.ContractStrict {
		return c, "", invalidf("contract %q: want legacy or strict", contract)
	}
	if req.Timeout < 0 {
		return c, "", invalidf("timeout must not be negative")
	}
	if req.Cwd == "" {
		return c, "", invalidf("cwd is required")
	}
	cwd, err := filepath.Abs(req.Cwd)
	if err != nil {
		return c, "", invalidf("cwd: %v", err)
	}
	if mode == policy.IsolatedWrite {
		if err := checkWorkTree(ctx, cwd); err != nil {
			return c, "", invalidf("isolated-write runs need cwd in a git work tree with a commit: %v", err)
		}
	}
	allow, err := allowUnknownQuota(req.AllowUnknownQuota)
	if err != nil {
		return c, "", err
	}
	stallMs, providerStallMs, err := stallTimeouts(req.StallTimeout, req.ProviderStallTimeouts)
	if err != nil {
		return c, "", err
	}
	watchdog := events.StallWatchdogOn
	if req.NoStallWatchdog {
		if stallMs != 0 || len(providerStallMs) > 0 {
			return c, "", invalidf("stall watchdog off with a stall timeout set: turn it off, or set its timeouts, not both")
		}
		watchdog = events.StallWatchdogOff
	}
	unrestricted, err := allowProviders("allow unverified containment", req.AllowUnverifiedContainment)
	if err != nil {
		return c, "", err
	}
	if len(unrestricted) > 0 && contract != policy.ContractLegacy {
		return c, "", invalidf("allow unverified containment needs the legacy contract, not %s", contract)
	}
	sheet, err := policy.ParseSheet(req.Sheet, e.cfg.Policy)
	if err != nil {
		return c, "", err
	}
	rp, err := policy.Resolve(sheet, req.Role, req.Parent, e.cfg.Policy)
	if err != nil {
		return c, "", err
	}
	if err := LaunchRefusal(rp.Lanes); err != nil {
		return c, "", err
	}
	run := req.RunID
	if run == "" {
		run = e.cfg.NewID()
	}
	if err := events.ValidateRunID(run); err != nil {
		return c, "", invalidf("run id: %v", err)
	}
	sheetBytes := append([]byte(nil), req.Sheet...)
	c = events.RunCreated{
		Sheet: sheetBytes, SheetDigest: events.Digest(sheetBytes), Role: req.Role, Parent: req.Parent,
		Access: mode, Cwd: cwd, Lanes: rp.Lanes,
		Options: events.RunOptions{Contract: contract, TimeoutMs: req.Timeout.Milliseconds(), AllowUnknownQuota: allow,
			StallTimeoutMs: stallMs, ProviderStallTimeoutMs: providerStallMs, StallWatchdog: watchdog,
			AllowUnverifiedContainment: unrestricted, OpenCodeChatGPTSubscription: req.OpenCodeChatGPTSubscription},
	}
	return c, run, nil
}

// stallTimeouts checks a run's stall timeouts and returns them in
// milliseconds as run-created records them: non-negative, whole
// milliseconds (a sub-millisecond remainder would be lost on the wire),
// within events.MaxStallTimeoutMs, overrides for known providers only
// (fail closed: a misspelt name must not silently override nothing); nil
// for no overrides.
func stallTimeouts(run time.Duration, per map[policy.Provider]time.Duration) (int64, map[policy.Provider]int64, error) {
	ms := func(what string, d time.Duration) (int64, error) {
		if d < 0 {
			return 0, invalidf("%s %v must not be negative", what, d)
		}
		if d%time.Millisecond != 0 {
			return 0, invalidf("%s %v is not a whole number of milliseconds", what, d)
		}
		if err := events.ValidateStallTimeoutMs(d.Milliseconds()); err != nil {
			return 0, invalidf("%s %v: over the maximum", what, d)
		}
		return d.Milliseconds(), nil
	}
	runMs, err := ms("stall timeout", run)
	if err != nil {
		return 0, nil, err
	}
	var out map[policy.Provider]int64
	for _, p := range slices.Sorted(maps.Keys(per)) {
		if !p.Valid() {
			return 0, nil, invalidf("stall timeout for %q: not a provider (known: %v)", p, policy.Providers)
		}
		v, err := ms("stall timeout for "+string(p), per[p])
		if err != nil {
			return 0, nil, err
		}
		if out == nil {
			out = map[policy.Provider]int64{}
		}
		out[p] = v
	}
	return runMs, out, nil
}

// allowUnknownQuota checks a run's unknown-quota overrides: providers a
// sheet may name only (fail closed: a misspelt name must not silently
// override nothing), each once (a repeat is dropped), in the order given;
// nil for none.
func allowUnknownQuota(ps []policy.Provider) ([]policy.Provider, error) {
	var out []policy.Provider
	for _, p := range ps {
		if !p.Valid() {
			return nil, invalidf("allow unknown quota: %q is not a provider (known: %v)", p, policy.Providers)
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// allowProviders checks a run's per-provider override list like
// allowUnknownQuota: known providers only, each once, in the order given;
// nil for none. what names the option in errors.
func allowProviders(what string, ps []policy.Provider) ([]policy.Provider, error) {
	var out []policy.Provider
	for _, p := range ps {
		if !p.Valid() {
			return nil, invalidf("%s: %q is not a provider (known: %v)", what, p, policy.Providers)
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}
