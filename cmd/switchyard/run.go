package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/internal/engineconn"
	"github.com/switchyard-dev/switchyard/policy"
)

// exitInterrupted is run's exit code when SIGINT or SIGTERM stopped it
// before the run was final (the shell convention for SIGINT).
const exitInterrupted = 130

// runFlags are `switchyard run`'s own options.
type runFlags struct {
	sheet, role, parent, prompt, cwd string
	mode, contract, runID            string
	timeout                          time.Duration
	json                             bool
	failIfUndelivered                bool
	// detach: --detach, submit and print the run id without waiting.
	detach bool
	log    logFlags
	// allowUnknownQuota: --allow-unknown-quota, as given (repeatable,
	// comma lists allowed).
	allowUnknownQuota []string
	quotaRefresh      time.Duration
	// fsyncSet, quotaRefreshSet: --fsync and --quota-refresh were given
	// (both apply only to a self-contained run).
	fsyncSet, quotaRefreshSet bool
	// caps: --cap, as given (a self-contained run's provider caps).
	caps []string
	// stallTimeout: --stall-timeout (0: the default); stallTimeoutFor:
	// --stall-timeout-for P=D, as given (repeatable, comma lists allowed).
	stallTimeout    time.Duration
	stallTimeoutSet bool
	noStallWatchdog bool // --stall-timeout off
	stallTimeoutFor []string
	// allowUnverifiedContainment: --allow-unverified-containment, as given
	// (repeatable, comma lists allowed).
	allowUnverifiedContainment []string
	// openCodeChatGPT: --opencode-chatgpt-subscription.
	openCodeChatGPT bool
}

// runInput is a run request checked before anything connects: the sheet
// parsed and the role resolved, so sheet problems exit 65 at once.
type runInput struct {
	req   engine.RunRequest
	lanes []policy.LanePolicy
	// staleSheet is the stale-sheet notice of a sheet with versioned
	// Claude pins ("" when none).
	staleSheet string
	providers  []policy.Provider // external providers the lanes may launch, in first-use order
	// allowUnknown are the providers whose UNKNOWN quota the run accepts
	// (--allow-unknown-quota), recorded in the run.
	allowUnknown []policy.Provider
	// caps are every provider's concurrency cap (parseCaps), applied by a
	// self-contained run.
	caps map[policy.Provider]int
	// unrestricted are the providers whose attempts may launch with
	// UNVERIFIED containment (--allow-unverified-containment), recorded in
	// the run.
	unrestricted []policy.Provider
	// runIDOnConn is set when --run-id is checked on the run's own
	// connection (checkRunIDFree), not before it.
	runIDOnConn bool
}

// newRunCmd builds `switchyard run`.
func newRunCmd(stdout, stderr io.Writer) *cobra.Command {
	var f engineFlags
	var rf runFlags
	c := &cobra.Command{
		Use:   "run --sheet F --role R --parent P --prompt F --cwd D [--mode M] [--timeout D] [--stall-timeout D] [--stall-timeout-for P=D] [--allow-unknown-quota P] [--allow-unverified-containment P] [--opencode-chatgpt-subscription] [--json]",
		Short: "Run one role of a model sheet to its final report",
		Long: `Start a run: freeze the sheet, resolve the role into lanes (one per seat) and
drive every lane through its attempt chain until all of them are final, then
print the run report.

With no server for the data directory, run is self-contained: it starts the
embedded engine and in-process workers for the providers the role's
external attempts need, serves the data directory to other commands while it
lasts (so the parent can answer it from another shell), and exits when the
run is final. With a "switchyard serve" running for the data directory, or
with --nats, it submits the run there and waits; workers must be running.

While it waits it prints one line per lane change. When a lane needs the
parent it prints the exact command to run:
  a native attempt:       switchyard native next --parent P
  a started writer:       switchyard inspect --run R --lane N --state clear|unsafe --evidence REF [--from COMMIT|REF]
  a handoff operation:    switchyard operation validate --run R --lane N --expected-head SHA --file PATH, then begin and done
  a continuation:         switchyard recover --run R --lane N --evidence REF --clear ... | --decline

Before every launch the engine checks the provider's eligibility (its
current capacity report, measured by the workers): an attempt whose
provider is policy-blocked, out of allowance, exhausted, signed out or of
UNKNOWN quota is excluded, recorded with its reason code, and the lane
moves to its next attempt. --allow-unknown-quota P (repeatable, or a comma
list) lets P's attempts proceed when its quota or eligibility is only
UNKNOWN (never when blocked, exhausted or signed out); run prints a
warning and the run records the override. "switchyard usage" shows what
the gate sees.

A self-contained run applies the same deployment-wide provider caps as
"switchyard serve --cap" (default 2 concurrent attempts per provider;
--cap P=N changes one). A run submitted to a serve uses the serve's caps,
so --cap is refused there, and so are --fsync (the serve's own) and
--quota-refresh (its workers' own).

Every attempt is watched for a stall: when its provider's stream shows no
progress for --stall-timeout (default 5m; --stall-timeout-for P=D sets one
provider's, repeatable), the worker stops it as response_stalled (a
timed-out receipt), probes the provider's health and records the outcome.
A provider the probe finds unhealthy is excluded for the rest of the run
(provider_unhealthy). Both values are recorded in the run.

Every attempt runs contained, and the containment is required: a
read-only attempt needs READ_ONLY_NO_NETWORK and a writer
WORKSPACE_WRITE_NO_NETWORK, verified by the kernel (Landlock, proved by
the worker's self-test at start) or by the provider's own sandbox (codex).
An attempt whose class is UNVERIFIED (a host without Landlock, or
SWITCHYARD_SANDBOX=off) is excluded before launch (containment_unverified,
recorded and replayed) and the lane moves on to the next attempt its
sheet's fallback allows; a lane with no attempt left ends as its sheet
says. switchyard doctor shows each provider's classes and the fix.
--allow-unverified-containment P (repeatable, or a comma list) accepts an
unrestricted contract for P's attempts: they launch without verified
containment; run prints a warning and the run records the override
(legacy contract only).

--opencode-chatgpt-subscription runs the role's
opencode:openai/gpt-6.1-sol@default attempts on OpenCode's own ChatGPT
login: the sheet's opencode access must say apiSpend deny, and the runner
proves the login (exactly one OpenAI OAuth connection) before inference or
ends the attempt billing-policy-blocked. Without the flag an OpenCode
attempt under deny is always billing-policy-blocked. Recorded in the run.

A run waiting on a serve rides out a serve restart: it re-reads serve.json
on every reconnect, so it finds a serve that came back on another port.

Interrupted (Ctrl-C) after its run is final, run prints the report. Before,
it says what it leaves: waiting on a serve, the run goes on there; a
self-contained run stops its workers first, whose running attempts get
SIGTERM, then lets its own engine record how they ended (up to 10s; a
second Ctrl-C stops at once) before it stops too: each stopped attempt is
recorded with a cancelled receipt, an outcome of failed, so its lane is
stopped, never run again and without fallback. Launched-but-unstarted
attempts stay queued and lanes waiting for the parent keep waiting until a
serve resumes the run.

Exit codes: 0 when the run is final, whatever each lane's outcome (the report
says); 3 with --fail-if-undelivered when the run is final and no lane
delivered (none complete); 64 usage error or unreadable input; 65 invalid
sheet or role; 130 interrupted before the run was final (the run stays
stored; a serve resumes it); 1 anything else.

With --detach, run submits the run to the serve (or --nats), prints its id
on stdout (as {"schemaVersion": 2, "run": ID} with --json) and exits 0
at once, without waiting: for a CI system that starts many runs and
should not hold a process per run. Follow it with "switchyard status
--run ID --watch" and print its report with "switchyard report --run ID"
once it is final.
--detach needs a serve: a self-contained run ends with its process.

With --json, a submitted run prints one JSON document on stdout: the
report once the run is final; interrupted before that (exit 130), an
object saying so: {"schemaVersion": 2, "run": ID, "final": false,
"interrupted": true, "driver": "serve" (it goes on there) or "none" (a
self-contained run; a serve resumes it) or "unknown", "lanes": [each lane
as status --run --json shows it: after a self-contained run's stop, else
at the interrupt], "resume": the command that resumes a self-contained
run, "follow": the command that follows it}. When the stop made a
self-contained run final, "final" is true, "resume" is left out and
"follow" prints its report.

"switchyard report --run R" prints the report again at any time.`,
		Example: `  # Run the sample sheet's bug-fix role read-only (codex, then Claude natively):
  switchyard run --sheet testdata/sheets/panel.sheet --role bug-fix \
    --parent claude --prompt task.md --cwd .

  # A writer run with a 20 minute deadline per attempt, report as JSON:
  switchyard run --sheet my.sheet --role bug-fix --parent codex --prompt fix.md \
    --cwd ~/src/app --mode isolated-write --timeout 20m --json

  # Give slow thinkers 15 minutes of silence, codex 30, before a stall:
  switchyard run --sheet my.sheet --role bug-fix --parent claude --prompt fix.md \
    --cwd . --stall-timeout 15m --stall-timeout-for codex=30m

  # Launch codex even while its quota cannot be read (recorded in the run):
  switchyard run --sheet my.sheet --role bug-fix --parent claude --prompt fix.md \
    --cwd . --allow-unknown-quota codex

  # Submit to a running serve and return at once (CI); follow, then report:
  id=$(switchyard run --sheet my.sheet --role bug-fix --parent claude \
    --prompt fix.md --cwd . --detach)
  switchyard status --run "$id" --watch
  switchyard report --run "$id"

  # Let grok writers run although their sandbox is unverified (recorded):
  switchyard run --sheet my.sheet --role bug-fix --parent claude --prompt fix.md \
    --cwd . --mode isolated-write --allow-unverified-containment grok

  # Run opencode:openai/gpt-6.1-sol@default on the ChatGPT login (sheet: apiSpend deny):
  switchyard run --sheet my.sheet --role bug-fix --parent claude --prompt fix.md \
    --cwd . --opencode-chatgpt-subscription`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlags(cmd, "sheet", "role", "parent", "prompt", "cwd"); err != nil {
				return err
			}
			if err := f.validate(cmd); err != nil {
				return err
			}
			if err := rf.log.validate(); err != nil {
				return err
			}
			if err := checkQuotaRefresh(rf.quotaRefresh); err != nil {
				return err
			}
			rf.stallTimeoutSet = cmd.Flags().Changed("stall-timeout")
			rf.fsyncSet, rf.quotaRefreshSet = cmd.Flags().Changed("fsync"), cmd.Flags().Changed("quota-refresh")
			if rf.detach && rf.failIfUndelivered {
				return usagef("--detach and --fail-if-undelivered: a detached run exits before the run is final; drop one (check delivery later with `switchyard report --run ID --json`)")
			}
			in, err := prepareRun(rf)
			if err != nil {
				return err
			}
			if in.caps, err = parseCaps(rf.caps); err != nil {
				return err
			}
			if in.runIDOnConn, err = checkRunIDFree(cmd.Context(), f, rf.runID); err != nil {
				return err
			}
			return runRun(cmd.Context(), stdout, stderr, f, rf, in)
		},
	}
	fl := c.Flags()
	fl.StringVar(&rf.sheet, "sheet", "", "the model sheet to freeze into the run")
	fl.StringVar(&rf.role, "role", "", `a row header or a unique leaf role, e.g. "swarm workers"`)
	fl.StringVar(&rf.parent, "parent", "", "the top-level harness that owns the run: claude or codex")
	fl.StringVar(&rf.prompt, "prompt", "", "the task prompt file every attempt receives")
	fl.StringVar(&rf.cwd, "cwd", "", "the checkout the lanes work on")
	fl.StringVar(&rf.mode, "mode", string(policy.ReadOnly), "access mode: read-only or isolated-write (each writer attempt gets a fresh git worktree)")
	fl.DurationVar(&rf.timeout, "timeout", 0, "per-attempt deadline, e.g. 20m (default none)")
	fl.StringVar(&rf.contract, "contract", string(policy.ContractLegacy), "worker ownership contract: legacy or strict")
	fl.StringVar(&rf.runID, "run-id", "", "the run id (letters, digits, - and _); default a fresh one")
	fl.BoolVar(&rf.json, "json", false, "print the report as JSON on stdout (lane lines go to stderr)")
	fl.BoolVar(&rf.failIfUndelivered, "fail-if-undelivered", false, "exit 3 when the run ends final with no lane delivered (no complete lane)")
	fl.BoolVar(&rf.detach, "detach", false, "submit the run to the serve, print its id and exit without waiting (follow with status --run ID --watch, then report --run ID)")
	fl.StringSliceVar(&rf.allowUnknownQuota, "allow-unknown-quota", nil,
		"let this provider's attempts launch while its quota or eligibility is UNKNOWN (repeatable or a comma list; recorded in the run, with a warning)")
	addCapFlag(c, &rf.caps)
	fl.Var(stallTimeoutValue{&rf.stallTimeout, &rf.noStallWatchdog}, "stall-timeout",
		"end an attempt as response_stalled after this long without provider progress, e.g. 10m (default 5m; recorded in the run); off turns the stall watchdog off for the run")
	fl.StringArrayVar(&rf.stallTimeoutFor, "stall-timeout-for", nil,
		"one provider's stall timeout, P=D such as codex=15m (repeatable or a comma list; overrides --stall-timeout for P)")
	fl.BoolVar(&rf.openCodeChatGPT, "opencode-chatgpt-subscription", false,
		"run the role's opencode:openai/gpt-6.1-sol@default attempts (apiSpend deny) on OpenCode's own ChatGPT login (recorded in the run)")
	fl.StringSliceVar(&rf.allowUnverifiedContainment, "allow-unverified-containment", nil,
		"let this provider's attempts launch although their containment is UNVERIFIED, an unrestricted contract (repeatable or a comma list; recorded in the run, with a warning)")
	addQuotaRefreshFlag(c, &rf.quotaRefresh)
	addLogFlags(c, &rf.log, "warn")
	addEngineFlags(c, &f, true)
	return wireCommand(c, stderr)
}

// prepareRun checks run's inputs and builds the request.
func prepareRun(rf runFlags) (runInput, error) {
	var in runInput
	parent, err := policy.ParseParent(rf.parent)
	if err != nil {
		return in, usagef("--parent %q: want claude or codex", rf.parent)
	}
	mode, err := policy.ParseAccess(rf.mode)
	if err != nil {
		return in, usagef("--mode %q: want read-only or isolated-write", rf.mode)
	}
	contract := policy.Contract(rf.contract)
	if contract != policy.ContractLegacy && contract != policy.ContractStrict {
		return in, usagef("--contract %q: want legacy or strict", rf.contract)
	}
	if rf.timeout < 0 {
		return in, usagef("--timeout %s: want a positive duration such as 20m, or none", rf.timeout)
	}
	stallFor, err := parseStallTimeouts(rf.stallTimeout, rf.stallTimeoutSet && !rf.noStallWatchdog, rf.stallTimeoutFor)
	if err != nil {
		return in, err
	}
	if rf.noStallWatchdog && len(stallFor) > 0 {
		return in, usagef("--stall-timeout off and --stall-timeout-for: a run without the stall watchdog has no stall timeouts; drop one")
	}
	if rf.runID != "" {
		if err := events.ValidateRunID(rf.runID); err != nil {
			return in, usagef("--run-id %q: want 1 to %d letters, digits, - or _, starting with a letter or digit", rf.runID, events.MaxIDLen)
		}
	}
	src, err := readInput(rf.sheet)
	if err != nil {
		return in, usagef("cannot read --sheet %s: %v", rf.sheet, err)
	}
	src, sheet, err := policy.ParseRunSheet(src, policy.DefaultOptions())
	if err != nil {
		return in, err
	}
	if !sheet.HasRole(rf.role, policy.DefaultOptions()) {
		return in, &policy.PolicyError{Issues: []string{unknownRoleIssue(sheet, rf.role, rf.sheet)}}
	}
	rp, err := policy.Resolve(sheet, rf.role, parent, policy.DefaultOptions())
	if err != nil {
		return in, err
	}
	prompt, err := readInput(rf.prompt)
	if err != nil {
		return in, usagef("cannot read --prompt %s: %v", rf.prompt, err)
	}
	if len(bytes.TrimSpace(prompt)) == 0 {
		return in, usagef("--prompt %s is empty; write the task every attempt receives into it", rf.prompt)
	}
	promptPath, err := filepath.Abs(rf.prompt)
	if err != nil {
		return in, usagef("--prompt %s: %v", rf.prompt, err)
	}
	cwd, err := filepath.Abs(rf.cwd)
	if err != nil {
		return in, usagef("--cwd %s: %v", rf.cwd, err)
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return in, usagef("--cwd %s is not a directory; pass the checkout the lanes work on", rf.cwd)
	}
	if mode == policy.IsolatedWrite {
		if err := checkGitWorkTree(rf.cwd, cwd); err != nil {
			return in, err
		}
	}
	if in.allowUnknown, err = parseAllowUnknownQuota(rf.allowUnknownQuota); err != nil {
		return in, err
	}
	if in.unrestricted, err = parseSheetProviders("--allow-unverified-containment", rf.allowUnverifiedContainment); err != nil {
		return in, err
	}
	if len(in.unrestricted) > 0 && contract != policy.ContractLegacy {
		return in, usagef("--allow-unverified-containment needs --contract legacy: an unrestricted contract contradicts --contract %s", contract)
	}
	in.req = engine.RunRequest{
		RunID: rf.runID, Sheet: src, Role: rf.role, Parent: parent, Mode: mode,
		Prompt: prompt, PromptPath: promptPath, Cwd: cwd, Timeout: rf.timeout, Contract: contract,
	}
	in.req.AllowUnknownQuota = in.allowUnknown
	in.req.StallTimeout, in.req.ProviderStallTimeouts, in.req.NoStallWatchdog = rf.stallTimeout, stallFor, rf.noStallWatchdog
	in.req.AllowUnverifiedContainment = in.unrestricted
	if rf.openCodeChatGPT {
		if err := checkChatGPTSubscriptionLanes(rp.Lanes); err != nil {
			return in, err
		}
		in.req.OpenCodeChatGPTSubscription = true
	}
	// What the runner would refuse at launch is refused here, before
	// anything is submitted (the engine checks it again).
	if err := engine.LaunchRefusal(rp.Lanes); err != nil {
		return in, err
	}
	in.lanes = rp.Lanes
	in.staleSheet = policy.StaleSheetNotice(sheet.VersionedClaudePins())
	for _, l := range rp.Lanes {
		for _, a := range l.Attempts {
			if a.Route == policy.RouteExternal && a.Attempt.Provider != "" && !containsProvider(in.providers, a.Attempt.Provider) {
				in.providers = append(in.providers, a.Attempt.Provider)
			}
		}
	}
	return in, nil
}

// unknownRoleIssue says that role has no row in the sheet, naming the
// configured roles closest to it (or all of them when none is close).
func unknownRoleIssue(sheet *policy.Sheet, role, path string) string {
	msg := fmt.Sprintf("role %q has no row in %s", role, path)
	fix := "add a row for the role, or name a configured one; `switchyard policy resolve` shows what a sheet resolves"
	if sheet.PolicyEnabled() {
		msg = fmt.Sprintf("policy-enabled sheet %s has no role %q", path, role)
		fix = "name a configured role, or repair the sheet through setup before dispatch"
	}
	quote := func(names []string) string {
		q := make([]string, len(names))
		for i, n := range names {
			q[i] = fmt.Sprintf("%q", n)
		}
		return strings.Join(q, ", ")
	}
	switch near, all := sheet.SuggestRoles(role, policy.DefaultOptions()), sheet.Roles(policy.DefaultOptions()); {
	case len(near) > 0:
		msg += "; did you mean " + quote(near) + "?"
	case len(all) > 0:
		msg += "; it configures " + quote(all)
	default:
		msg += "; it configures no role"
	}
	return msg + " (" + fix + ")"
}

// parseStallTimeouts checks --stall-timeout (when set) and parses
// --stall-timeout-for values (each P=D, or a comma list of them): positive
// whole milliseconds within the contract's maximum, known providers, each
// once. nil for none.
func parseStallTimeouts(run time.Duration, runSet bool, vals []string) (map[policy.Provider]time.Duration, error) {
	check := func(what string, d time.Duration) error {
		switch {
		case d <= 0:
			return usagef("%s: want a positive duration such as 10m (omit the flag for the default %s)", what, time.Duration(events.DefaultStallTimeoutMs)*time.Millisecond)
		case d%time.Millisecond != 0:
			return usagef("%s: want whole milliseconds, such as 1500ms", what)
		case events.ValidateStallTimeoutMs(d.Milliseconds()) != nil:
			return usagef("%s: over the maximum of %s; pass a shorter duration such as 1h", what, time.Duration(events.MaxStallTimeoutMs)*time.Millisecond)
		}
		return nil
	}
	if runSet {
		if err := check("--stall-timeout "+run.String(), run); err != nil {
			return nil, err
		}
	}
	known := make([]string, len(policy.Providers))
	for i, p := range policy.Providers {
		known[i] = string(p)
	}
	var out map[policy.Provider]time.Duration
	for _, v := range vals {
		for _, item := range strings.Split(v, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			name, dur, ok := strings.Cut(item, "=")
			name = strings.TrimSpace(name)
			if !ok || name == "" {
				return nil, usagef("--stall-timeout-for %q: want PROVIDER=DURATION, such as codex=15m", item)
			}
			if !slices.Contains(known, name) {
				return nil, usagef("--stall-timeout-for %q: unknown provider %q; want one of %s", item, name, strings.Join(known, ", "))
			}
			d, err := time.ParseDuration(strings.TrimSpace(dur))
			if err != nil {
				return nil, usagef("--stall-timeout-for %q: %q is not a duration; want PROVIDER=DURATION, such as %s=15m", item, dur, name)
			}
			if err := check(fmt.Sprintf("--stall-timeout-for %s", item), d); err != nil {
				return nil, err
			}
			p := policy.Provider(name)
			if _, dup := out[p]; dup {
				return nil, usagef("--stall-timeout-for names %s twice; give each provider one timeout", name)
			}
			if out == nil {
				out = map[policy.Provider]time.Duration{}
			}
			out[p] = d
		}
	}
	return out, nil
}

// parseAllowUnknownQuota parses --allow-unknown-quota (parseSheetProviders).
func parseAllowUnknownQuota(vals []string) ([]policy.Provider, error) {
	return parseSheetProviders("--allow-unknown-quota", vals)
}

func containsProvider(ps []policy.Provider, p policy.Provider) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// runRun connects, submits, waits and reports.
func runRun(ctx context.Context, stdout, stderr io.Writer, f engineFlags, rf runFlags, in runInput) error {
	// A run waiting on a serve (or --nats) says when its connection drops
	// and when it is back; every reconnect finds the serve again through
	// serve.json, wherever it listens now.
	link := linkEvents{
		Lost: func(err error) {
			fmt.Fprintf(stderr, "switchyard run: lost the connection to the server (%v); the run goes on there, reconnecting\n", err)
		},
		Back: func() { fmt.Fprintln(stderr, "switchyard run: reconnected; following the run again") },
	}
	// A detached run needs a server that outlives it: it never starts the
	// embedded one, so a refused --detach creates nothing (no data
	// directory, no store).
	conn, err := openEngineConn(ctx, f, connectOptions{serveKind: "run", link: link, noEmbed: rf.detach, onWait: func(msg string) {
		fmt.Fprintf(stderr, "switchyard run: %s\n", msg)
	}})
	if err != nil {
		if rf.detach && f.nats == "" && (errors.Is(err, engineconn.ErrUnavailable) || errors.Is(err, engineconn.ErrNoData)) {
			return usagef("--detach needs a running `switchyard serve%s` (or --nats): without one the run would stop with this process; start serve, then run again",
				detachDataDirFlag(f))
		}
		return err
	}
	defer conn.Close()
	if in.runIDOnConn {
		if err := runIDFree(ctx, conn, f, rf.runID); err != nil {
			return err
		}
	}
	logger := rf.log.logger(stderr)
	eng, err := conn.newEngine(f, logger)
	if err != nil {
		return err
	}
	lines := stdout
	if rf.json || rf.detach {
		// stdout carries only the report (or, detached, the run id).
		lines = stderr
	}

	// A self-contained run drives its own engine and workers; they stop
	// when the run is final (or run is interrupted).
	waitCtx, stopWait := context.WithCancel(ctx)
	defer stopWait()
	var bgErr error
	var bgOnce sync.Once
	bgFail := func(what string, err error) {
		if err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
			bgOnce.Do(func() { bgErr = failf("%s stopped: %v", what, err) })
			stopWait()
		}
	}
	drive := newSelfDrive(ctx)
	defer drive.stop()
	if len(rf.caps) > 0 && conn.mode != connEmbedded {
		return usagef("--cap applies to a self-contained run; this run goes to %s, whose caps `switchyard serve --cap` sets: drop --cap", conn.describe())
	}
	if rf.fsyncSet && conn.mode != connEmbedded {
		return usagef("--fsync applies to a self-contained run; this run goes to %s, whose durability its own `switchyard serve --fsync` sets: drop --fsync", conn.describe())
	}
	if rf.quotaRefreshSet && conn.mode != connEmbedded {
		return usagef("--quota-refresh applies to a self-contained run's own workers; this run goes to %s, whose workers measure quota as their `switchyard worker --quota-refresh` says: drop --quota-refresh", conn.describe())
	}
	if rf.detach && conn.mode == connEmbedded {
		return usagef("--detach needs a running `switchyard serve%s` (or --nats): without one the run would stop with this process; start serve, then run again", conn.connFlags(f))
	}
	if conn.mode == connEmbedded {
		// Set before the engine publishes a job, like serve's.
		if err := applyCaps(ctx, conn, in.caps); err != nil {
			return err
		}
		drive.engines.Go(func() { bgFail("the engine", eng.Run(drive.engineCtx)) })
		if len(in.providers) > 0 {
			w, err := newWorker(conn, in.providers, workerOptions{concurrency: maxCap(in.caps, in.providers), quotaRefresh: rf.quotaRefresh, dataDir: conn.dataDir}, logger)
			if err != nil {
				return err
			}
			drive.workers.Go(func() { bgFail("the worker", w.Run(drive.workerCtx)) })
		}
	}

	runPrecheck(ctx, lines, conn, f, rf, in)
	runID, err := eng.Submit(ctx, in.req)
	if err != nil {
		switch {
		case policy.IsPolicy(err) || policy.IsUsage(err):
			return err
		case errors.Is(err, engine.ErrRunExists):
			return usagef("--run-id %s: run %s already exists in %s; pass a new id, or leave --run-id out for a fresh one", in.req.RunID, in.req.RunID, conn.describe())
		case errors.Is(err, engine.ErrInvalidRequest):
			return usagef("%s", invalidReason(err))
		case errors.Is(err, events.ErrNoEngine):
			return failf("no engine answered the submission on %s within %v; start `switchyard serve%s` (it records and drives runs), then run again", conn.describe(), engineconn.SubmitWait, conn.connFlags(f))
		}
		return failf("submit the run to %s: %v", conn.describe(), err)
	}
	fmt.Fprintf(lines, "run %s: role %q, %s, parent %s, %s, on %s\n",
		runID, in.req.Role, plural(len(in.lanes), "lane"), in.req.Parent, in.req.Mode, conn.describe())
	if in.staleSheet != "" {
		// Once per run, as the seed's read-time normalization asks; the
		// engine records the same notice as the run's stale-sheet audit.
		fmt.Fprintf(lines, "  notice: %s: %s (recorded in run %s as a stale-sheet audit)\n", rf.sheet, in.staleSheet, runID)
	}
	if len(in.allowUnknown) > 0 {
		fmt.Fprintf(lines, "  warning: --allow-unknown-quota %s: attempts of %s launch even when their quota or eligibility is UNKNOWN (never when blocked, exhausted or signed out); run %s records the override\n",
			joinProviders(in.allowUnknown), joinProviders(in.allowUnknown), runID)
	}
	if len(in.unrestricted) > 0 {
		fmt.Fprintf(lines, "  warning: --allow-unverified-containment %s: attempts of %s launch without verified containment (an unrestricted contract: no verified sandbox confines their writes or network); run %s records the override\n",
			joinProviders(in.unrestricted), joinProviders(in.unrestricted), runID)
	}
	if rf.detach {
		// The serve drives the run; nothing here waits for it.
		if rf.json {
			return writeDoc(stdout, struct {
				Run string `json:"run"`
			}{runID})
		}
		fmt.Fprintln(stdout, runID)
		return nil
	}
	p := &laneChangePrinter{w: lines, run: runID, parent: in.req.Parent, conn: conn.connFlags(f)}
	if conn.mode != connEmbedded {
		p.workerHint = func(provider string) string { return workerHint(ctx, conn, provider, conn.connFlags(f)) }
	}
	report, err := eng.Wait(waitCtx, runID, p.print)
	if err != nil {
		if bgErr != nil {
			return bgErr
		}
		if ctx.Err() == nil {
			return failf("wait for run %s: %v", runID, err)
		}
		// Interrupted. The run may be final already (it may have become
		// final just now, or while the connection was down): then say so
		// and print its report rather than call it unfinished.
		var final bool
		report, final, err = interruptedRun(ctx, stderr, conn, f, eng, runID, drive)
		if !final {
			// run --json still prints a document: the run is not final.
			var ie *interruptedError
			if rf.json && errors.As(err, &ie) {
				// A failed write does not hide the exit code 130.
				_ = writeDoc(stdout, interruptedDoc(ie, conn, conn.connFlags(f)))
			}
			return err
		}
	}
	if !rf.json {
		fmt.Fprintln(stdout)
	}
	if err := printReport(stdout, report, rf.json); err != nil {
		return err
	}
	if rf.failIfUndelivered && undelivered(report) {
		fmt.Fprintf(stderr, "switchyard run: no lane of run %s delivered (--fail-if-undelivered)\n", runID)
		return &exitError{code: exitUndelivered}
	}
	return nil
}

// interruptedRun tells what an interrupt left: the report when the run is
// final after all (final true), else what happened to its attempts and how
// to follow or resume it (an exit 130 error). drive is a self-contained
// run's own engine and workers, which it stops (interruptSelfContained).
func interruptedRun(ctx context.Context, stderr io.Writer, conn *engineConn, f engineFlags, eng *engine.Engine,
	runID string, drive *selfDrive) (engine.RunReport, bool, error) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	flags := conn.connFlags(f)
	st, err := eng.Status(cctx, runID)
	if err == nil && st.Final {
		report, err := eng.Wait(cctx, runID, nil)
		if err == nil {
			fmt.Fprintf(stderr, "switchyard run: interrupted, but run %s is final; its report follows\n", runID)
			return report, true, nil
		}
	}
	interrupted := &interruptedError{exit: &exitError{code: exitInterrupted}, run: runID, status: st, statusErr: err}
	if err != nil {
		fmt.Fprintf(stderr, "switchyard run: interrupted; cannot tell whether run %s is final (%s: %v); it stays stored: check it with `switchyard status --run %s%s`\n",
			runID, conn.describe(), err, runID, flags)
		return engine.RunReport{}, false, interrupted
	}
	if conn.mode != connEmbedded {
		fmt.Fprintf(stderr, "switchyard run: interrupted; run %s is not final and goes on in %s; follow it with `switchyard status --run %s --watch%s`\n",
			runID, conn.describe(), runID, flags)
		return engine.RunReport{}, false, interrupted
	}
	if after, ok := interruptSelfContained(ctx, stderr, conn, flags, eng, runID, st, drive); ok {
		// run --json shows the lanes as the stopped drive left them (the
		// run may even be final now: its last running lanes stopped).
		interrupted.status = after
	}
	return engine.RunReport{}, false, interrupted
}

// joinProviders renders providers comma-separated.
func joinProviders(ps []policy.Provider) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = string(p)
	}
	return strings.Join(s, ",")
}

func ensureNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

// checkChatGPTSubscriptionLanes refuses --opencode-chatgpt-subscription
// for a role it would not apply to: some attempt must be exactly
// opencode:openai/gpt-6.1-sol@default with the sheet's apiSpend deny.
func checkChatGPTSubscriptionLanes(lanes []policy.LanePolicy) error {
	want := "opencode:" + events.OpenCodeChatGPTModel + "@default"
	found := false
	for _, l := range lanes {
		for _, a := range l.Attempts {
			if !events.ChatGPTSubscriptionAttempt(a.Attempt.Provider, a.Attempt.Model, a.Attempt.Effort, policy.APISpendDeny) {
				continue
			}
			if a.APISpend != policy.APISpendDeny {
				return usagef("--opencode-chatgpt-subscription needs the sheet's opencode access to say apiSpend deny; %s has %s", want, apiSpendWord(a.APISpend))
			}
			found = true
		}
	}
	if !found {
		return usagef("--opencode-chatgpt-subscription applies to %s attempts, and this role has none", want)
	}
	return nil
}

// apiSpendWord names a saved spending policy ("none" when unset).
func apiSpendWord(s policy.APISpend) string {
	if s == "" || s == policy.APISpendLegacy {
		return "none"
	}
	return string(s)
}

// detachDataDirFlag is the --data-dir the refusal of --detach repeats
// ("" for the default data directory), without creating anything.
func detachDataDirFlag(f engineFlags) string {
	dir, err := engineconn.LocateDataDir(f.dataDir)
	if err != nil {
		return ""
	}
	return engineconn.DataDirFlag(dir)
}
