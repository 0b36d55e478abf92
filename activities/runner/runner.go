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
	paths, err := resolvePaths(o)
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
		Parent:    o.Parent,
		Provider:  o.Provider,
		Model:     o.Model,
		CLIModel:  cliModel,
		Effort:    o.Effort,
		Mode:      o.Mode,
		Cwd:       paths.cwd.abs,
		Prompt:    workerPrompt(spec.Writer, o.Mode, task),
		Output:    paths.output.abs,
		Receipt:   paths.receipt.abs,
		APISpend:  o.APISpend,
		Home:      home,
		ParentEnv: r.cfg.Env,
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
	if o.Provider == policy.Gemini {
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
		if _, pinned := policy.VersionedClaudeAlias(o.Model); pinned && o.Provider == policy.Claude {
			flag = "--model"
		}
		return "", usagef(flag, "%s: %v", flag, err)
	}
	if o.Provider == policy.Antigravity && o.APISpend == policy.APISpendLegacy {
		return "", usagef("--api-spend", "--api-spend is required for antigravity: pass the saved deny or approved value")
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
	if a.res.progress != nil {
		a.res.progress.close() // the reporter replaces the file by rename
	}
	if a.o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, a.start.Add(a.o.Timeout).Sub(cfg.Now()), ErrDeadline)
		defer cancel()
	}
	a.latch = newLatch(ctx, a.progress.cancelRequested)
	a.exec = &executor{latch: a.latch, limit: cfg.CaptureLimit, killGrace: cfg.KillGrace, progress: a.progress}

	a.execute()

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
	if a.containmentRefused() {
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
	if a.area, err = newPrivateArea(a.req.Receipt); err != nil {
		a.launcherFailure("could not create the attempt's private directory", err)
		return
	}
	a.req.PrivateDir = a.area.dir
	files, overlay, err := a.spec.Prepare(a.req)
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
	env := providers.ChildEnv(a.spec, a.r.cfg.Env, a.req, overlay)
	if !a.preflight(env) {
		return
	}
	a.invoke(env)
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
func (a *attempt) preflight(env []string) bool {
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
		res, err := a.exec.run(childSpec{role: rolePreflight, argv: argv, dir: a.req.Cwd, env: env})
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
		ws.onStall = func() string { return a.probeHealth(env) }
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

// joinEvidence joins evidence sentences of successive probes.
func joinEvidence(parts []string) string {
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += "; "
		}
		out += p
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// containmentRefused fails the attempt closed, before any CLI starts, when
// its mode needs a verified containment class the provider's spec does not
// declare: always for isolated-write (WORKSPACE_WRITE_NO_NETWORK), for
// read-only (READ_ONLY_NO_NETWORK) when Config.RequireReadOnlyContainment
// is on. Options.AllowUnverifiedContainment (an unrestricted contract)
// lets the attempt run. It reports whether the attempt was refused.
func (a *attempt) containmentRefused() bool {
	if a.o.AllowUnverifiedContainment || (a.o.Mode == policy.ReadOnly && !a.r.cfg.RequireReadOnlyContainment) {
		return false
	}
	var cu *providers.ContainmentUnverifiedError
	if !errors.As(providers.CheckContainment(a.spec, a.o.Mode), &cu) {
		return false
	}
	a.failPreflight(policy.StatusUnsupportedCapability, policy.PreflightNotRun,
		fmt.Sprintf("%s %s containment is %s, not the required %s; fix: pass --allow-unverified-containment to accept an unrestricted contract (run --allow-unverified-containment %s), or route the lane to a provider with %s containment",
			a.o.Provider, a.o.Mode, cu.Containment.Class, cu.Required, a.o.Provider, cu.Required),
		"containment "+string(cu.Containment.Class)+": "+cu.Containment.Reason+"; no CLI was started")
	return true
}
