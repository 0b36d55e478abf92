package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// Main executes one `switchyard runner` command line (args without the
// command name) and returns the process exit code. "status" as the first
// argument runs Status. Usage errors print "error: <msg>" and the usage on
// Stderr and return ExitUsage without a receipt; once output, receipt and
// progress are reserved every outcome writes a receipt, printed as one
// line on Stdout for exit 0 and on Stderr otherwise.
//
// The --timeout deadline starts at entry to Main; ctx cancels the attempt
// as in Run.
func (r *Runner) Main(ctx context.Context, args []string) int {
	start := r.cfg.Now()
	if len(args) > 0 && args[0] == "status" {
		return r.Status(args[1:])
	}
	o, err := parseRunnerFlags(args)
	if errors.Is(err, ErrHelp) {
		io.WriteString(r.cfg.Stdout, RunnerUsage)
		return 0
	}
	if err != nil {
		return r.usage(err)
	}
	a, err := r.newAttempt(o, start)
	if err != nil {
		return r.usage(err)
	}
	res := a.run(ctx)
	w := r.cfg.Stderr
	if res.ExitCode == 0 {
		w = r.cfg.Stdout
	}
	w.Write(res.Line)
	return res.ExitCode
}

// usage reports a usage error.
func (r *Runner) usage(err error) int {
	fmt.Fprintf(r.cfg.Stderr, "error: %s\n\n%s", err, RunnerUsage)
	return ExitUsage
}

// attempt is one reserved execution: everything after reservation ends in
// a receipt.
type attempt struct {
	r        *Runner
	o        Options
	paths    attemptPaths
	spec     *providers.Spec
	req      providers.Request
	res      *reservations
	start    time.Time
	progress *progressReporter
	latch    *latch
	exec     *executor
	area     *privateArea
	rc       policy.Receipt
	final    string        // the final response to write on delivery
	stall    *events.Stall // set when the workload ended response_stalled
	// inPreflight is true while probes run or the retry wait lasts: an
	// interruption then marks the preflight cancelled or timed-out.
	inPreflight bool
	// overlay is the spec's environment overlay for the next child.
	overlay []string
	// cont is the attempt's containment, settled before anything starts.
	cont *containment
}

// newAttempt validates the descriptor and paths, reads the prompt and
// reserves output, receipt and progress. Every error is a UsageError.
func (r *Runner) newAttempt(o Options, start time.Time) (*attempt, error) {
	spec, err := r.cfg.Lookup(o.Provider)
	if err != nil {
		return nil, usagef("--provider", "--provider %s: %v", o.Provider, err)
	}
	cliModel, err := r.checkDescriptor(o, spec)
	if err != nil {
		return nil, err
	}
	paths, err := resolvePaths(o, spec.PrivateSuffix)
	if err != nil {
		return nil, err
	}
	task, err := readPrompt(paths.prompt.abs)
	if err != nil {
		return nil, err
	}
	res, err := reserveAll(paths)
	if err != nil {
		return nil, err
	}
	home := r.cfg.Env["HOME"]
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	a := &attempt{r: r, o: o, paths: paths, spec: spec, res: res, start: start}
	a.req = providers.Request{
		Parent:              o.Parent,
		Provider:            o.Provider,
		Model:               o.Model,
		CLIModel:            cliModel,
		Effort:              o.Effort,
		Mode:                o.Mode,
		Cwd:                 paths.cwd.abs,
		Prompt:              workerPrompt(spec.Writer, o.Mode, task),
		Output:              paths.output.abs,
		Receipt:             paths.receipt.abs,
		APISpend:            o.APISpend,
		ChatGPTSubscription: o.OpenCodeChatGPTSubscription,
		Home:                home,
		ParentEnv:           r.cfg.Env,
	}
	return a, nil
}

// checkDescriptor applies the runner-side descriptor rules and returns the
// exact CLI model: sheet syntax, effort rules (default only for Cursor,
// Antigravity, OpenCode and Devin UIDs), no versioned Claude pin, an
// explicit --api-spend for Antigravity, and no same-provider descriptor a
// native lane covers.
func (r *Runner) checkDescriptor(o Options, spec *providers.Spec) (string, error) {
	att := policy.Attempt{Kind: policy.KindDescriptor, Provider: o.Provider, Model: o.Model, Effort: o.Effort}
	if !o.Provider.Valid() { // an optional provider (Gemini): outside the sheet, so policy.ParseAttempt refuses it
		if !validGeminiModel(o.Model) {
			return "", usagef("--model", "--model %q: model must start with a letter or digit and use only letters, digits, '.', '_' and '-'", o.Model)
		}
	} else if _, err := policy.ParseAttempt(fmt.Sprintf("%s:%s@%s", o.Provider, o.Model, o.Effort)); err != nil {
		return "", usagef("--model", "--model %q: %v", o.Model, err)
	}
	if spec.CLIModel == nil {
		return "", usagef("--provider", "--provider %s: its spec has no model rule (Spec.CLIModel)", o.Provider)
	}
	cliModel, err := spec.CLIModel(att.Model, att.Effort)
	if err != nil {
		flag := "--effort"
		if refusal := (*providers.ModelRefusal)(nil); errors.As(err, &refusal) {
			flag = "--model"
		}
		return "", usagef(flag, "%s: %v", flag, err)
	}
	if err := checkChatGPTSubscription(o, spec); err != nil {
		return "", err
	}
	if spec.ExplicitAPISpend && o.APISpend == policy.APISpendLegacy {
		return "", usagef("--api-spend", "--api-spend is required for %s: pass the saved deny or approved value", o.Provider)
	}
	if string(o.Parent) == string(o.Provider) {
		covered := o.Parent == policy.ParentCodex
		model := o.Model
		if alias, ok := policy.VersionedClaudeAlias(model); ok {
			model = alias
		}
		for _, n := range r.cfg.Options.ClaudeNative {
			covered = covered || (o.Parent == policy.ParentClaude && n.Model == model && n.Effort == o.Effort)
		}
		if covered {
			return "", usagef("--provider", "--provider %s: %s:%s@%s is covered by a native %s lane; launch it natively instead of through the runner",
				o.Provider, o.Provider, o.Model, o.Effort, o.Parent)
		}
	}
	return cliModel, nil
}

// checkChatGPTSubscription applies --opencode-chatgpt-subscription's
// rules: only for a provider with a subscription mode (opencode), only
// with --api-spend deny, and only for exactly its Spec.SubscriptionModel
// (providers.OpenCodeChatGPTModel) at default effort.
func checkChatGPTSubscription(o Options, spec *providers.Spec) error {
	if !o.OpenCodeChatGPTSubscription {
		return nil
	}
	const flag = "--opencode-chatgpt-subscription"
	switch {
	case spec.SubscriptionModel == "":
		return usagef(flag, "%s applies only to --provider opencode, got %s", flag, o.Provider)
	case o.APISpend != policy.APISpendDeny:
		return usagef(flag, "%s requires --api-spend deny (the subscription route is the no-API-spend route); got %s", flag, apiSpendName(o.APISpend))
	case o.Model != spec.SubscriptionModel:
		return usagef(flag, "%s requires exactly --model %s, got %q", flag, spec.SubscriptionModel, o.Model)
	case o.Effort != policy.EffortDefault:
		return usagef(flag, "%s requires --effort default, got %s", flag, o.Effort)
	}
	return nil
}

// apiSpendName renders a spending policy for a message ("omitted" for legacy).
func apiSpendName(s policy.APISpend) string {
	if s == policy.APISpendLegacy {
		return "it omitted"
	}
	return string(s)
}

// validGeminiModel matches [A-Za-z0-9][A-Za-z0-9._-]*.
func validGeminiModel(m string) bool {
	if m == "" {
		return false
	}
	for i := 0; i < len(m); i++ {
		c := m[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || (c != '.' && c != '_' && c != '-')) {
			return false
		}
	}
	return true
}

// run executes the reserved attempt and returns its result.
func (a *attempt) run(ctx context.Context) Result {
	cfg := a.r.cfg
	a.initReceipt()
	a.progress = openProgress(a.res.progress, a.o.Provider, a.start, a.res.receipt, cfg.Now, cfg.ActivityFlush)
	a.progress.setLazy(cfg.LazySettledFacts)
	if a.res.progress != nil {
		a.res.progress.close() // the reporter replaces the file by rename
	}
	if a.o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, a.start.Add(a.o.Timeout).Sub(cfg.Now()), ErrDeadline)
		defer cancel()
	}
	a.latch = newLatch(ctx, a.progress.cancelRequested)
	a.exec = &executor{latch: a.latch, limit: cfg.CaptureLimit, killGrace: cfg.KillGrace, progress: a.progress, confine: a.sandboxed}

	a.execute()
	a.closeContainment()

	a.latch.release()
	return a.finish()
}

// execute runs the attempt's stages, recording the outcome in a.rc. A
// panic in a spec function or the runner still ends in a receipt: a
// launcher failure the policy never advances on.
func (a *attempt) execute() {
	defer func() {
		if p := recover(); p != nil {
			err := fmt.Errorf("panic: %v", p)
			if a.rc.ProcessStarted != nil && *a.rc.ProcessStarted {
				a.rc.Status, a.rc.FailurePhase = policy.StatusChildFailed, ptr(policy.PhaseInvocation)
				a.rc.Handoff, a.rc.TerminalSuccess = nil, nil
				a.rc.Error = receiptError("runner internal error after the workload started", "diagnostic: runner_internal_error\n"+err.Error())
				return
			}
			a.launcherFailure("runner internal error", err)
		}
	}()
	a.stages()
}

// stages runs setup, guards, preflight and the invocation, returning at
// the first stage that settles the receipt status.
func (a *attempt) stages() {
	if a.o.Contract == policy.ContractStrict {
		a.failPreflight(policy.StatusUnsupportedCapability, policy.PreflightNotRun,
			"the strict worker contract is unsupported: no "+string(a.o.Provider)+" route has live proof that file edits stay possible while Git metadata, shell descendants and authenticated remote mutation stay blocked",
			"strict contract requested; no CLI was started")
		return
	}
	if a.decideContainment() {
		return
	}
	if a.stopped() {
		return
	}
	// OpenCode's spec guards its native authentication: it runs only
	// with --api-spend approved.
	if names := providers.GuardNames(a.spec, a.r.cfg.Env, a.req); len(names) > 0 {
		a.failPreflight(policy.StatusBillingPolicyBlocked, policy.PreflightNotRun,
			"the billing guard blocked the launch: "+providers.GuardEvidence(a.req, names),
			providers.GuardEvidence(a.req, names))
		return
	}
	exe, err := providers.Discover(a.spec, a.r.cfg.Env)
	if err != nil {
		message := fmt.Sprintf("%s CLI not found on PATH (tried %v)", a.o.Provider, a.spec.Binaries)
		if nf := (*providers.BinaryNotFoundError)(nil); errors.As(err, &nf) && nf.Override {
			message = fmt.Sprintf("%s CLI override %s is unusable: %s", a.o.Provider, providers.BinEnvVar(a.o.Provider), nf.Reason)
		}
		a.failPreflight(policy.StatusUnavailableCLI, policy.PreflightNotRun, message, err.Error())
		return
	}
	a.req.Executable = exe
	a.rc.Executable = &exe
	if a.area, err = newPrivateArea(a.req.Receipt, a.spec.PrivateSuffix); err != nil {
		a.launcherFailure("could not create the attempt's private directory", err)
		return
	}
	a.req.PrivateDir = a.area.dir
	if err := a.prepareSandbox(); err != nil {
		a.launcherFailure("could not prepare the attempt's sandbox", err)
		return
	}
	files, overlay, err := a.spec.Prepare(a.req)
	if pe := (*providers.PreflightError)(nil); errors.As(err, &pe) {
		a.failPreflight(pe.Status, policy.PreflightNotRun, fmt.Sprintf("%s preflight: %s", a.o.Provider, pe.Evidence), pe.Evidence)
		return
	}
	if err != nil {
		a.refusedOr(err, policy.PreflightNotRun, "could not prepare the "+string(a.o.Provider)+" private configuration")
		return
	}
	for _, f := range files {
		if err := a.area.create(f); err != nil {
			a.launcherFailure("could not create a private file", err)
			return
		}
	}
	a.overlay = overlay
	if !a.check(policy.PreflightNotRun) || !a.preflight() {
		return
	}
	if !a.check(policy.PreflightFailed) {
		return
	}
	a.invoke(a.childEnv())
}

// check runs the spec's Check (none for most providers) and records a
// preflight failure with pre as the preflight status when it refuses. It
// reports whether the attempt may go on.
func (a *attempt) check(pre policy.PreflightStatus) bool {
	if a.spec.Check == nil {
		return true
	}
	err := a.spec.Check(a.req)
	if err == nil {
		return true
	}
	status := policy.StatusUnavailableCLI
	if pe := (*providers.PreflightError)(nil); errors.As(err, &pe) {
		status = pe.Status
	}
	a.failPreflight(status, pre, fmt.Sprintf("%s preflight: %s", a.o.Provider, err),
		providers.CapText(joinEvidence([]string{a.rc.Preflight.Evidence, err.Error()}), providers.EvidenceCap))
	return false
}

// childEnv is the environment of the next child: the spec's construction
// from the parent environment plus the current overlay (Prepare's, or a
// preflight continuation's once one replaced it).
func (a *attempt) childEnv() []string {
	return providers.ChildEnv(a.spec, a.r.cfg.Env, a.req, a.overlay)
}

// continueWith applies a passed probe's continuation: the selected
// contract, the contract's private files (created exclusively), its
// overlay and its remaining probes. It reports whether the attempt may
// go on; a file that cannot be created is a launcher failure.
func (a *attempt) continueWith(c *providers.Continuation) ([][]string, bool) {
	a.req.Contract = c.Contract
	for _, f := range c.Files {
		if err := a.area.create(f); err != nil {
			a.launcherFailure("could not create a private file", err)
			return nil, false
		}
	}
	a.overlay = c.Overlay
	return c.Probes, true
}

// stopped records a cancellation or expired deadline noticed between
// stages (before any workload started) and reports whether one fired.
func (a *attempt) stopped() bool {
	cancelled, timedOut := a.rc.Preflight.Status, a.rc.Preflight.Status
	if a.inPreflight {
		cancelled, timedOut = policy.PreflightCancelled, policy.PreflightTimedOut
	}
	switch {
	case a.latch.isCancelled():
		a.failPreflight(policy.StatusCancelled, cancelled,
			"cancelled by "+a.latch.signal+" before the workload started", "no CLI child was running")
	case a.latch.isExpired():
		a.failPreflight(policy.StatusTimedOut, timedOut,
			a.deadline()+" passed before the workload started", "no CLI child was running")
	default:
		return false
	}
	return true
}

// preflight runs the spec's probes in order. A failing probe that asks for
// it is retried once after RetryDelay (within the deadline); evidence from
// both tries is kept. It reports whether the workload may start.
func (a *attempt) preflight() bool {
	probes := a.spec.Preflight(a.req)
	if len(probes) == 0 {
		a.rc.Preflight = policy.Preflight{Argv: []string{}, Status: policy.PreflightNotRun, Evidence: providers.PreflightDeferredEvidence}
		return !a.stopped()
	}
	var evidence []string
	retried := false
	a.inPreflight = true
	defer func() { a.inPreflight = false }()
	for i := 0; i < len(probes); i++ {
		if a.stopped() {
			return false
		}
		argv := probes[i]
		a.rc.Preflight.Argv = append([]string{}, argv...)
		res, err := a.exec.run(childSpec{role: rolePreflight, argv: argv, dir: a.req.Cwd, env: a.childEnv()})
		if err != nil {
			a.failPreflight(policy.StatusUnavailableCLI, policy.PreflightFailed,
				fmt.Sprintf("the %s preflight probe could not start", a.o.Provider), err.Error())
			return false
		}
		if res.interrupted != notInterrupted {
			a.interrupted(res, policy.PhasePreflight)
			return false
		}
		v := a.spec.ReadPreflight(a.req, i, res.capture)
		if v.Evidence != "" {
			evidence = append(evidence, v.Evidence)
		}
		a.rc.Preflight.Evidence = providers.CapText(joinEvidence(evidence), providers.EvidenceCap)
		if v.Status == "" {
			if v.Then != nil {
				rest, ok := a.continueWith(v.Then)
				if !ok {
					return false
				}
				probes = append(probes[:i+1:i+1], rest...)
			}
			continue
		}
		if v.Retry && !retried {
			retried = true
			a.progress.retryWait(true)
			why := a.latch.sleep(a.r.cfg.RetryDelay)
			a.progress.retryWait(false)
			if why != notInterrupted {
				a.stopped()
				return false
			}
			i-- // the same probe, once more
			continue
		}
		a.failPreflight(v.Status, policy.PreflightFailed, fmt.Sprintf("%s preflight: %s", a.o.Provider, v.Evidence), a.rc.Preflight.Evidence)
		return false
	}
	a.rc.Preflight.Status = policy.PreflightPassed
	a.inPreflight = false
	return !a.stopped()
}

// invoke runs the one workload and classifies it.
func (a *attempt) invoke(env []string) {
	cmd, err := a.spec.Invocation(a.req)
	if err != nil {
		a.launcherFailure("could not build the "+string(a.o.Provider)+" invocation", err)
		return
	}
	for _, f := range cmd.Files {
		if err := a.area.create(f); err != nil {
			a.launcherFailure("could not create a private file", err)
			return
		}
	}
	for _, p := range cmd.Capture {
		if err := a.area.claimCapture(p); err != nil {
			a.launcherFailure("could not prepare a capture file", err)
			return
		}
		if err := a.allowCapture(p); err != nil {
			a.launcherFailure("could not prepare a capture file", err)
			return
		}
	}
	var stdin []byte
	switch cmd.Stdin {
	case providers.StdinPrompt:
		stdin = a.req.Prompt
	case providers.StdinBytes:
		stdin = append([]byte{}, cmd.StdinBytes...)
	}
	dir := cmd.Dir
	if dir == "" {
		dir = a.req.Cwd
	}
	a.rc.Argv = append([]string{}, cmd.Argv...)
	if cmd.Check != nil {
		if err := cmd.Check(); err != nil {
			a.refusedOr(err, "", "the "+string(a.o.Provider)+" pre-launch check failed")
			return
		}
	}
	if a.stopped() {
		return
	}
	ws := childSpec{role: roleWorkload, argv: cmd.Argv, dir: dir, env: env, stdin: stdin}
	if a.o.StallTimeout > 0 {
		ws.watch = newWatchdog(a.o.StallTimeout, a.spec.Classify)
		ws.stallID = stallIdentity{adapter: string(a.o.Provider), target: a.req.CLIModel}
		ws.onStall = func() probeOutcome { return a.probeHealth(env) }
	}
	res, err := a.exec.run(ws)
	if err != nil {
		a.failPreflight(policy.StatusUnavailableCLI, a.rc.Preflight.Status,
			fmt.Sprintf("the %s CLI could not be started", a.o.Provider), err.Error())
		return
	}
	a.rc.ProcessStarted = ptr(true)
	a.rc.ExitCode = res.exitStatus
	if res.signalSent != "" {
		a.rc.Signal = ptr(res.signalSent)
	}
	res.capture.Files = readCaptureFiles(cmd.Capture, a.r.cfg.CaptureLimit)
	if res.interrupted == notInterrupted {
		if exported := a.export(env, dir, res); exported != nil {
			res = exported
		}
	}
	parsed := a.spec.Parse(a.req, res.capture)
	a.rc.SessionID, a.rc.Usage, a.rc.CostUSD = parsed.SessionID, parsed.Usage, parsed.CostUSD
	if res.interrupted == byStall {
		ts := parsed.TerminalSuccess
		a.rc.TerminalSuccess = &ts
		a.stalled(res)
		a.noteTruncation(res)
		return
	}
	if res.interrupted != notInterrupted {
		ts := parsed.TerminalSuccess
		a.rc.TerminalSuccess = &ts
		a.interrupted(res, policy.PhaseInvocation)
		a.noteTruncation(res)
		return
	}
	a.classify(parsed, res)
	a.noteTruncation(res)
}

// refusedOr records a provider's refusal (*providers.RefusedError: the
// user's configuration or CLI cannot run this attempt; nothing started)
// with its own status, or else a launcher failure with note.
func (a *attempt) refusedOr(err error, pre policy.PreflightStatus, note string) {
	var refused *providers.RefusedError
	if errors.As(err, &refused) {
		a.failPreflight(refused.Status, pre, string(a.o.Provider)+" refused the attempt: "+refused.Reason, "diagnostic: provider_refused\n"+refused.Reason)
		return
	}
	a.launcherFailure(note, err)
}

// export runs the spec's post-workload command (OpenCode V2's session
// export) after a workload that settled on its own, with the workload's
// environment, cwd, cancellation and deadline. It returns nil when the
// spec has none. Otherwise it returns the workload's result with the
// export's capture attached when the export settled on its own, or, when
// a cancellation or the deadline interrupted the export, the workload's
// capture without it and the export's interruption, so the attempt ends
// cancelled or timed-out with only the proof the workload gave.
func (a *attempt) export(env []string, dir string, res *childResult) *childResult {
	if a.spec.Export == nil {
		return nil
	}
	argv := a.spec.Export(a.req, res.capture)
	if argv == nil {
		return nil
	}
	out, err := a.exec.run(childSpec{role: roleWorkload, argv: argv, dir: dir, env: env})
	if err != nil {
		return nil // no export capture: the parser fails delivery closed
	}
	merged := *res
	if out.interrupted != notInterrupted {
		merged.interrupted, merged.signalSent, merged.settled = out.interrupted, out.signalSent, out.settled
		return &merged
	}
	c := out.capture
	merged.capture.Export = &c
	return &merged
}

// joinEvidence joins evidence sentences of successive probes.
func joinEvidence(parts []string) string {
	out := ""
	for _, p := range parts {
		if p == "" {
			continue
		}
		if out != "" {
			out += "; "
		}
		out += p
	}
	return out
}

func ptr[T any](v T) *T { return &v }
