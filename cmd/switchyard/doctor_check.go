package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/switchyard-dev/switchyard/activities"
	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
	"github.com/switchyard-dev/switchyard/providers/quota"
)

// doctorProbeTimeout bounds each probe doctor runs (--version, every
// preflight probe). The real CLIs take 4 to 15 s for a signed-out
// `--version` or `opencode --pure debug config` on a busy two-core host
// (measured with claude 2.1.332, gemini 0.61.0 and opencode 1.18.33), so
// 10 s timed out healthy CLIs.
const doctorProbeTimeout = 30 * time.Second

// Problem codes. A blocking problem keeps every attempt of the provider (in
// the checked mode) from running; the others are warnings.
const (
	problemUnknownProvider      = "unknown_provider"
	problemBinaryNotFound       = "binary_not_found"
	problemSignedOut            = "signed_out"
	problemPreflightFailed      = "preflight_failed"
	problemProbeInconclusive    = "probe_inconclusive"
	problemBillingGuard         = "billing_guard"
	problemContainment          = "containment_unverified"
	problemQuota                = "quota_ineligible"
	problemNoWorker             = "no_live_worker"
	problemWorkerBinaryNotFound = "worker_binary_not_found"
	problemWorkerNoReply        = "worker_no_reply"
)

// doctorProblem is one thing that will not work, with its fix.
type doctorProblem struct {
	Code     string `json:"code"`
	Blocking bool   `json:"blocking"`
	Message  string `json:"message"`
	Fix      string `json:"fix"`
}

// doctorBinary is what was found of a provider's CLI in doctor's PATH.
type doctorBinary struct {
	Names   []string `json:"names"`
	Path    string   `json:"path,omitempty"`
	Version string   `json:"version,omitempty"` // with --probe only
	// Known: the version is one of the spec's known (verified) versions
	// (evidence, not an allowlist); absent when no version was read.
	Known         *bool    `json:"known,omitempty"`
	KnownVersions []string `json:"knownVersions"`
	// Verification reads Version against KnownVersions (the verified
	// ones): "verified" (one of them), "newer" (newer than every one:
	// it still runs, and is not verified), "other" (older, between them,
	// or not comparable); absent when no version was read.
	Verification string `json:"verification,omitempty"`
}

// Version verification states (doctorBinary.Verification).
const (
	versionVerified = "verified"
	versionNewer    = "newer"
	versionOther    = "other"
)

// verifyVersion places a probed version against the verified ones.
func verifyVersion(v string, known []string) string {
	if slices.Contains(known, v) {
		return versionVerified
	}
	if len(known) == 0 {
		return versionOther
	}
	for _, k := range known {
		c, ok := compareDotted(v, k)
		if !ok || c <= 0 {
			return versionOther
		}
	}
	return versionNewer
}

// compareDotted compares two dotted numeric versions (1.18.33,
// 2026.10.01) field by field; ok is false when either is not dotted
// digits or their lengths differ.
func compareDotted(a, b string) (int, bool) {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	if len(as) != len(bs) {
		return 0, false
	}
	for i := range as {
		x, errX := strconv.ParseUint(as[i], 10, 32)
		y, errY := strconv.ParseUint(bs[i], 10, 32)
		if errX != nil || errY != nil {
			return 0, false
		}
		if x != y {
			if x < y {
				return -1, true
			}
			return 1, true
		}
	}
	return 0, true
}

// doctorSignIn is the sign-in state: not_probed (no --probe), no_probe
// (the spec runs none in this mode), passed, signed_in (the login is
// shown, but no model was asked: --provider without --sheet/--role),
// signed_out, failed,
// timeout, error or skipped (no binary).
type doctorSignIn struct {
	State    string `json:"state"`
	Evidence string `json:"evidence,omitempty"`
	status   policy.ReceiptStatus
}

// doctorGuard is what the billing guard would block under api-spend deny:
// variable names only, never values.
type doctorGuard struct {
	APISpend policy.APISpend `json:"apiSpend"`
	Blocked  []string        `json:"blocked"`
}

// doctorQuota is the provider's quota source and state, as `switchyard
// usage` shows it (Where: "server", "measured_here" or "not_measured").
type doctorQuota struct {
	Source  policy.QuotaSource         `json:"source"`
	Where   string                     `json:"where"`
	State   policy.CapacityState       `json:"state,omitempty"`
	Reason  policy.CapacityReason      `json:"reason,omitempty"`
	Verdict *policy.EligibilityVerdict `json:"verdict,omitempty"`
	// Credential says when the quota source reads the CLI's credential
	// file (quota.CredentialNote); empty for a source that reads none.
	Credential string `json:"credential,omitempty"`
}

// doctorConcurrency is the provider's concurrency cap.
type doctorConcurrency struct {
	Cap      int    `json:"cap"`
	InFlight int    `json:"inFlight"`
	Source   string `json:"source"`
}

// doctorWorker is one live worker of the provider and its answers.
type doctorWorker struct {
	WorkerID     string                  `json:"workerId"`
	Host         string                  `json:"host,omitempty"`
	Concurrency  int                     `json:"concurrency,omitempty"`
	Capabilities *events.Capabilities    `json:"capabilities,omitempty"`
	Transport    *events.TransportStatus `json:"transport,omitempty"`
	Error        string                  `json:"error,omitempty"`
}

// doctorProvider is everything doctor found about one provider.
type doctorProvider struct {
	Provider    policy.Provider           `json:"provider"`
	Binary      doctorBinary              `json:"binary"`
	SignIn      doctorSignIn              `json:"signIn"`
	Guard       doctorGuard               `json:"guard"`
	Containment []events.ContainmentEntry `json:"containment"`
	Quota       doctorQuota               `json:"quota"`
	Concurrency doctorConcurrency         `json:"concurrency"`
	// Workers is nil without a server (JSON: null), else the live workers.
	Workers  []doctorWorker  `json:"workers"`
	Problems []doctorProblem `json:"problems"`
	// RoundTrip is set with --round-trip only.
	RoundTrip *doctorRoundTrip `json:"roundTrip,omitempty"`
}

// blocking reports whether p has a blocking problem for an attempt with
// api-spend spend (a billing-guard block counts under deny only).
func (p *doctorProvider) blockingFor(spend policy.APISpend) []doctorProblem {
	var out []doctorProblem
	for _, pr := range p.Problems {
		if !pr.Blocking || (pr.Code == problemBillingGuard && spend != policy.APISpendDeny && spend != "") {
			continue
		}
		out = append(out, pr)
	}
	return out
}

// doctorCheck is what one check looks at.
type doctorCheck struct {
	mode     policy.Access
	probe    bool // run --version and the preflight probes
	quota    bool // read (served) or measure (local) the quota
	commands bool // ask live workers their capabilities
	// allowUnverified are the providers whose unverified containment the
	// user accepts (--allow-unverified-containment).
	allowUnverified []policy.Provider
	env             map[string]string
	conn            *engineConn // nil without a store
	served          bool        // conn reaches a serve or --nats
	connFlags       string      // how to point a worker at the same server
	// attempts, with --sheet/--role, is each provider's first attempt in
	// the role: its model and spending policy are what the probes check.
	attempts map[policy.Provider]policy.AttemptPolicy
}

// containmentOf is spec's containment in each access mode, and whether it
// is the serve's: a data directory's serve publishes its sandbox self-test
// in serve.json (engineconn.ServeInfo.Containment), the evidence its
// eligibility gate decides with, so a check it serves reads that instead of
// running a self-test of its own (a sandboxed child process). Otherwise,
// and before the serve has published it, this process's self-test.
func (c doctorCheck) containmentOf(spec *providers.Spec) ([]events.ContainmentEntry, bool) {
	if c.conn != nil && c.conn.mode == connServe && c.conn.holder.Containment != nil {
		return activities.ContainmentFrom(*c.conn.holder.Containment, spec), true
	}
	return activities.ContainmentOf(spec), false
}

// checkProviders checks provs concurrently, in order.
func checkProviders(ctx context.Context, c doctorCheck, provs []policy.Provider) []doctorProvider {
	out := make([]doctorProvider, len(provs))
	var live []events.WorkerPresence
	var liveErr error
	if c.served {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		live, liveErr = c.conn.js.Presence().Live(pctx)
		cancel()
	}
	var reports map[policy.Provider]*policy.CapacityReport
	if c.quota && !c.served {
		// The usage command's local path; bounded so doctor stays quick.
		mctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		reports, _ = measureHere(mctx, nil, provs)
		cancel()
	}
	var wg sync.WaitGroup
	for i, p := range provs {
		wg.Go(func() {
			out[i] = checkProvider(ctx, c, p, live, liveErr, reports[p])
		})
	}
	wg.Wait()
	return out
}

// checkProvider checks one provider.
func checkProvider(ctx context.Context, c doctorCheck, p policy.Provider, live []events.WorkerPresence, liveErr error, local *policy.CapacityReport) doctorProvider {
	d := doctorProvider{Provider: p, SignIn: doctorSignIn{State: "not_probed"},
		Guard: doctorGuard{APISpend: policy.APISpendDeny, Blocked: []string{}}, Problems: []doctorProblem{}}
	add := func(code string, blocking bool, msg, fix string) {
		d.Problems = append(d.Problems, doctorProblem{Code: code, Blocking: blocking, Message: msg, Fix: fix})
	}
	spec, err := providers.Lookup(p)
	if err != nil {
		add(problemUnknownProvider, true, fmt.Sprintf("no provider spec for %q", p),
			"use one of: "+strings.Join(providerNames(), ", "))
		return d
	}
	d.Binary = doctorBinary{Names: slices.Clone(spec.Binaries), KnownVersions: slices.Clone(spec.KnownVersions)}
	if d.Binary.KnownVersions == nil {
		d.Binary.KnownVersions = []string{}
	}
	var fromServe bool
	d.Containment, fromServe = c.containmentOf(spec)
	d.Concurrency = deploymentCap(ctx, c.conn, p)

	exe, binErr := providers.ResolveBinary(spec, c.env["PATH"])
	if binErr == nil {
		d.Binary.Path = exe
	} else {
		where := "on this host's PATH"
		fix := fmt.Sprintf("install the %s CLI so that %s is on PATH", p, strings.Join(spec.Binaries, " or "))
		if c.served {
			where += " (doctor's own; the workers' hosts are checked below)"
			fix += " where its workers run"
		}
		// In a served deployment the workers' PATH decides; their
		// answers carry the blocking problem.
		add(problemBinaryNotFound, !c.served, fmt.Sprintf("no %s CLI %s: tried %s", p, where, strings.Join(spec.Binaries, ", ")), fix)
	}

	req := providers.Request{Provider: p, Mode: c.mode, APISpend: policy.APISpendDeny, Home: c.env["HOME"],
		Executable: exe, ParentEnv: c.env}
	d.Guard.Blocked = append(d.Guard.Blocked, providers.GuardNames(spec, c.env, req)...)
	a, fromSheet := c.attempts[p]
	if fromSheet {
		// The probes check the role's own model and spending policy.
		req.Model, req.Effort, req.APISpend = a.Attempt.Model, a.Attempt.Effort, a.APISpend
		req.CLIModel, _ = spec.CLIModel(a.Attempt.Model, a.Attempt.Effort)
	}
	if len(d.Guard.Blocked) > 0 {
		msg := fmt.Sprintf("under api-spend deny the billing guard blocks %s: set here: %s", p, strings.Join(d.Guard.Blocked, ", "))
		// The guard applies under deny only: a role whose sheet approves
		// API spend for p runs its attempts with these set (and they may
		// bill that key), so nothing of the role is blocked by it.
		approved := fromSheet && a.APISpend == policy.APISpendApproved
		if approved {
			msg += fmt.Sprintf("; the sheet approves API spend for %s, so the role's %s attempts run with them and may bill them", p, p)
		}
		fix := guardFix(p, d.Guard.Blocked)
		if approved {
			fix = fmt.Sprintf("none for this role, which approves API spend for %s; for a role that denies it: %s", p, fix)
		}
		add(problemBillingGuard, !approved, msg, fix)
	}

	for _, ce := range d.Containment {
		if ce.Mode != c.mode || containmentOK(c.mode, ce.Class) {
			continue
		}
		allowed := slices.Contains(c.allowUnverified, p)
		msg := fmt.Sprintf("%s %s containment is %s", p, c.mode, ce.Class)
		if allowed {
			msg += " (accepted by --allow-unverified-containment)"
		}
		// Every mode requires its verified class (issue 24): an UNVERIFIED
		// attempt is excluded before launch unless the run accepts it.
		// ce.Reason says why and how to fix it (the sandbox self-test).
		host := "this host"
		if fromServe {
			msg += " (the serve's sandbox self-test, which its eligibility gate uses)"
			host = "the serve's host"
		}
		add(problemContainment, !allowed, msg+": "+ce.Reason,
			fmt.Sprintf("make the sandbox verifiable on %s (the reason above names the fix), or pass --allow-unverified-containment %s to run to accept an unrestricted %s attempt (recorded in the run), or route %s work to a provider with verified containment", host, p, c.mode, c.mode))
	}

	if c.probe && binErr == nil {
		d.Binary.Version = probeVersion(ctx, exe, c.env)
		if d.Binary.Version != "" {
			known := slices.Contains(spec.KnownVersions, d.Binary.Version)
			d.Binary.Known = &known
			d.Binary.Verification = verifyVersion(d.Binary.Version, spec.KnownVersions)
		}
		d.SignIn = probeSignIn(ctx, spec, req, c.env)
		switch d.SignIn.State {
		case "signed_out":
			add(problemSignedOut, true, fmt.Sprintf("%s is not signed in: %s", p, d.SignIn.Evidence), signInFix(p))
		case "failed":
			fix := fmt.Sprintf("fix what the probe says, then check again: switchyard doctor --provider %s --probe", p)
			if d.SignIn.status == policy.StatusBillingPolicyBlocked {
				fix = fmt.Sprintf("approve API spend for %s in the sheet's access line (\"apiSpend\":\"approved\") if that route may bill, or route the lane elsewhere", p)
			}
			add(problemPreflightFailed, true, fmt.Sprintf("%s preflight failed: %s", p, d.SignIn.Evidence), fix)
		case "timeout", "error":
			add(problemProbeInconclusive, false, fmt.Sprintf("%s sign-in is unknown: %s", p, d.SignIn.Evidence),
				fmt.Sprintf("run the probe by hand (%s) and check the CLI works", strings.Join(spec.Preflight(req)[0], " ")))
		}
	} else if c.probe {
		d.SignIn.State = "skipped"
	}

	d.Quota = doctorQuota{Source: spec.QuotaSource, Where: "not_measured"}
	if spec.QuotaSource != policy.QuotaUnsupported {
		d.Quota.Credential = quota.CredentialNote(p, nil)
	}
	var rep *policy.CapacityReport
	switch {
	case c.quota && c.served:
		gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		r, err := c.conn.capacity().Get(gctx, p)
		cancel()
		d.Quota.Where = "server"
		if err == nil {
			rep = &r
		}
	case c.quota && local != nil:
		d.Quota.Where, rep = "measured_here", local
	}
	if d.Quota.Where != "not_measured" {
		u := providerUsageOf(p, rep, time.Now())
		d.Quota.State, d.Quota.Reason, d.Quota.Verdict = u.QuotaView.State, u.QuotaView.Reason, &u.Verdict
		d.Quota.Credential = u.Credential
		// A provider whose CLI is missing here measures nothing, and a
		// signed-out one is already told: those problems say what to do.
		signedOut := u.Verdict.Code == policy.ExcludeNotSignedIn && d.SignIn.State == "signed_out"
		if rep != nil && !u.Verdict.Eligible && (c.served || binErr == nil) && !signedOut {
			add(problemQuota, true, fmt.Sprintf("%s: %s", p, verdictText(u.Verdict)), quotaFix(p, u.Verdict.Code))
		}
	}

	if c.served {
		d.Workers = []doctorWorker{}
		if liveErr != nil {
			add(problemWorkerNoReply, false, fmt.Sprintf("cannot read the live workers: %v", liveErr), "check the server with switchyard status")
			return d
		}
		for _, w := range live {
			if slices.Contains(w.Providers, p) {
				d.Workers = append(d.Workers, doctorWorker{WorkerID: w.WorkerID, Host: w.Host, Concurrency: w.Concurrency})
			}
		}
		if len(d.Workers) == 0 {
			add(problemNoWorker, false, fmt.Sprintf("no live %s worker: its attempts wait until one starts", p),
				fmt.Sprintf("start one where the %s CLI is signed in: switchyard worker --provider %s%s", p, p, c.connFlags))
		}
		if c.commands {
			askWorkers(ctx, c.conn, p, d.Workers)
			withBinary := 0
			for _, w := range d.Workers {
				switch {
				case w.Error != "":
					add(problemWorkerNoReply, false, fmt.Sprintf("worker %s did not answer capabilities: %s", w.WorkerID, w.Error),
						"upgrade or restart that worker: switchyard worker --provider "+string(p)+c.connFlags)
				case w.Capabilities.BinaryPath == "":
					add(problemWorkerBinaryNotFound, false, fmt.Sprintf("worker %s has no %s CLI on its PATH", w.WorkerID, p),
						fmt.Sprintf("install the %s CLI on %s, or stop that worker", p, cmpOr(w.Host, "its host")))
				default:
					withBinary++
				}
			}
			if len(d.Workers) > 0 && withBinary == 0 && !hasAnswerless(d.Workers) {
				// Every live worker answered without the CLI: nothing
				// can run until one with it starts.
				for i := range d.Problems {
					if d.Problems[i].Code == problemWorkerBinaryNotFound {
						d.Problems[i].Blocking = true
					}
				}
			}
		}
	}
	return d
}

func hasAnswerless(ws []doctorWorker) bool {
	return slices.ContainsFunc(ws, func(w doctorWorker) bool { return w.Error != "" })
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// containmentOK reports whether class is the verified containment mode
// needs: WORKSPACE_WRITE_NO_NETWORK for a writer, READ_ONLY_NO_NETWORK for
// a read-only attempt.
func containmentOK(mode policy.Access, class string) bool {
	switch mode {
	case policy.IsolatedWrite:
		return class == string(providers.ContainmentWorkspaceWriteNoNetwork)
	case policy.ReadOnly:
		return class == string(providers.ContainmentReadOnlyNoNetwork)
	}
	return false
}

// deploymentCap is the provider's concurrency cap for the whole
// deployment (its job consumer's limit on jobs in flight) and how many of
// its sessions run now, read from the server when there is one; without
// one, the default every deployment starts with.
func deploymentCap(ctx context.Context, conn *engineConn, p policy.Provider) doctorConcurrency {
	if conn != nil {
		if caps, err := readCaps(ctx, conn); err == nil {
			for _, c := range caps {
				if c.Provider == p {
					return doctorConcurrency{Cap: c.Cap, InFlight: c.InFlight,
						Source: "deployment-wide (serve --cap; all workers together)"}
				}
			}
		}
	}
	return doctorConcurrency{Cap: events.DefaultProviderCap, Source: "deployment default (serve --cap sets it; all workers together)"}
}

// askWorkers asks each worker its capabilities for p and its transport
// status, concurrently, each bounded by events.DefaultCommandTimeout.
func askWorkers(ctx context.Context, conn *engineConn, p policy.Provider, ws []doctorWorker) {
	var wg sync.WaitGroup
	for i := range ws {
		wg.Go(func() {
			r, err := events.RequestCommand(ctx, conn.js.Conn(), ws[i].WorkerID, events.CommandCapabilities, p, 0)
			switch {
			case err != nil:
				ws[i].Error = err.Error()
			case r.Error != "":
				ws[i].Error = r.Error
			default:
				ws[i].Capabilities = r.Capabilities
				// Its sessions now: leases held and attempts running.
				if t, err := events.RequestCommand(ctx, conn.js.Conn(), ws[i].WorkerID, events.CommandTransportStatus, "", 0); err == nil && t.Transport != nil {
					ws[i].Transport = t.Transport
				}
			}
		})
	}
	wg.Wait()
}

// quotaFix is the fix line of a provider the eligibility gate excludes.
func quotaFix(p policy.Provider, code policy.ExclusionCode) string {
	switch code {
	case policy.ExcludeQuotaUnknown, policy.ExcludeUnverified:
		return fmt.Sprintf("make its quota measurable (switchyard usage --provider %s says why it is not), or pass --allow-unknown-quota %s to run to launch anyway (recorded in the run)", p, p)
	case policy.ExcludeNotSignedIn:
		return signInFix(p)
	case policy.ExcludeQuotaExhausted:
		return fmt.Sprintf("wait for the reset (switchyard usage --provider %s), or let the lane fall back", p)
	}
	return fmt.Sprintf("fix the account state switchyard usage --provider %s names", p)
}

// signInFix is the fix line of a signed-out provider.
func signInFix(p policy.Provider) string {
	var login string
	if spec, err := providers.Lookup(p); err == nil {
		login = spec.Login // the provider spec is the one source
	}
	if login == "" {
		return fmt.Sprintf("sign in to the %s CLI as its documentation says, then check again: switchyard doctor --provider %s --probe", p, p)
	}
	return fmt.Sprintf("sign in: run `%s` where the %s CLI runs, then check again: switchyard doctor --provider %s --probe", login, p, p)
}

var versionRE = regexp.MustCompile(`\d+\.\d+\.\d+`)

// probeVersion runs `<exe> --version` (bounded) and returns the first
// x.y.z it prints, or "".
func probeVersion(ctx context.Context, exe string, env map[string]string) string {
	res := runProbe(ctx, []string{exe, "--version"}, minimalEnv(env))
	if res.err != nil || res.exit != 0 {
		return ""
	}
	return versionRE.FindString(string(res.stdout))
}

// probeSignIn runs the spec's preflight probes in order, each bounded by
// doctorProbeTimeout, in the child environment the runner would build,
// and reads them with the spec's ReadPreflight (the runner's verdicts).
func probeSignIn(ctx context.Context, spec *providers.Spec, req providers.Request, env map[string]string) doctorSignIn {
	priv, err := os.MkdirTemp("", "switchyard-doctor-")
	if err != nil {
		return doctorSignIn{State: "error", Evidence: "cannot create a private directory for the probe"}
	}
	defer os.RemoveAll(priv)
	req.PrivateDir = priv
	if req.Cwd, err = os.Getwd(); err != nil {
		req.Cwd = priv
	}
	probes := spec.Preflight(req)
	if len(probes) == 0 {
		return doctorSignIn{State: "no_probe", Evidence: "the " + string(spec.Provider) + " spec runs no preflight probe in " + string(req.Mode) + " mode"}
	}
	var evidence []string
	files, overlay, err := spec.Prepare(req)
	if err != nil && req.CLIModel == "" {
		// A spec whose probes render a configuration for one model
		// (OpenCode) needs one even when no role names it: pick one, and
		// say so.
		choice, why := doctorProbeModel(spec.Provider)
		if choice == nil {
			return doctorSignIn{State: "error", Evidence: "cannot prepare the probe: " + err.Error() + "; " + why}
		}
		req.Model, req.Effort, req.CLIModel = choice.Model, choice.DefaultEffort, choice.CLIModel
		evidence = append(evidence, "probed with "+choice.Descriptor+" ("+why+"; the probe checks the CLI, not the model: pass --sheet/--role to probe a role's model)")
		files, overlay, err = spec.Prepare(req)
	}
	if err != nil {
		return doctorSignIn{State: "error", Evidence: "cannot prepare the probe: " + err.Error()}
	}
	if err := writeProbeFiles(priv, files); err != nil {
		return doctorSignIn{State: "error", Evidence: "cannot prepare the probe's private files"}
	}
	for i := 0; i < len(probes); i++ {
		argv := probes[i]
		res := runProbe(ctx, argv, providers.ChildEnv(spec, env, req, overlay))
		switch {
		case res.timedOut:
			return doctorSignIn{State: "timeout", Evidence: fmt.Sprintf("%s did not answer within %s", filepath.Base(argv[0])+" "+strings.Join(argv[1:], " "), doctorProbeTimeout)}
		case res.err != nil:
			return doctorSignIn{State: "error", Evidence: "the probe could not start"}
		}
		v := spec.ReadPreflight(req, i, res.capture())
		if v.Evidence != "" {
			evidence = append(evidence, v.Evidence)
		}
		if v.Status == "" {
			if c := v.Then; c != nil {
				// The runner's continuation (OpenCode's banner selects its
				// contract): its files, its environment, its probes.
				req.Contract, overlay = c.Contract, c.Overlay
				if err := writeProbeFiles(priv, c.Files); err != nil {
					return doctorSignIn{State: "error", Evidence: "cannot prepare the probe's private files"}
				}
				probes = append(probes[:i+1:i+1], c.Probes...)
			}
			continue
		}
		state := "failed"
		switch {
		case v.Status == policy.StatusUnauthenticated:
			state = "signed_out"
		case v.Status == policy.StatusUnavailableModel && req.CLIModel == "":
			// Probes read the login before the model list: the login is
			// there, and no model was asked.
			return doctorSignIn{State: "signed_in", Evidence: "model availability not checked (no model asked: use --sheet/--role)"}
		}
		return doctorSignIn{State: state, status: v.Status, Evidence: providers.CapText(strings.Join(evidence, "; "), 500)}
	}
	return doctorSignIn{State: "passed", Evidence: providers.CapText(strings.Join(evidence, "; "), 500)}
}

// writeProbeFiles creates the probe's private files and directories; only
// those inside the private directory priv are doctor's to write.
func writeProbeFiles(priv string, files []providers.File) error {
	for _, f := range files {
		if !strings.HasPrefix(f.Path, priv+string(filepath.Separator)) {
			continue
		}
		var err error
		if f.Dir {
			err = os.MkdirAll(f.Path, 0o700)
		} else {
			err = os.WriteFile(f.Path, f.Content, os.FileMode(f.Mode))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// doctorProbeModel picks the model a probe renders its configuration for
// when no role names one (OpenCode's probes check the CLI and the private
// configuration it renders for one model, not the model's availability):
// the provider's first model-matrix row, else for OpenCode the model of
// its ChatGPT-subscription mode. No listing runs: the real `opencode
// models` takes 10 to 25 s on a busy host, longer than the probes it
// would serve. why says where the model came from, or why there is none.
func doctorProbeModel(p policy.Provider) (*providers.ModelChoice, string) {
	if choices := providers.Choices(p, nil); len(choices) > 0 {
		return &choices[0], "the model matrix's first " + string(p) + " row"
	}
	if spec, err := providers.Lookup(p); err == nil && spec.SubscriptionModel != "" {
		m := spec.SubscriptionModel
		c := providers.ModelChoice{Provider: p, Model: m, DefaultEffort: policy.EffortDefault,
			Descriptor: string(p) + ":" + m + "@" + string(policy.EffortDefault), CLIModel: m}
		return &c, "the model of Switchyard's OpenCode ChatGPT-subscription mode"
	}
	return nil, "no model to probe " + string(p) + " with: pass --sheet/--role to probe a role's model"
}

// minimalEnv is the environment of a --version probe: only what finds the
// CLI's own files, never a credential.
func minimalEnv(env map[string]string) []string {
	var out []string
	for _, k := range []string{"PATH", "HOME", "LANG", "XDG_CONFIG_HOME", "XDG_STATE_HOME"} {
		if v, ok := env[k]; ok {
			out = append(out, k+"="+v)
		}
	}
	return out
}

type probeResult struct {
	stdout, stderr []byte
	exit           int
	signal         string
	timedOut       bool
	err            error
}

func (r probeResult) capture() providers.Capture {
	c := providers.Capture{Stdout: r.stdout, Stderr: r.stderr, Signal: r.signal}
	if r.signal == "" {
		exit := r.exit
		c.ExitCode = &exit
	}
	return c
}

// runProbe runs argv with env and stdin /dev/null, bounded by
// doctorProbeTimeout; the whole process group is killed on timeout.
func runProbe(ctx context.Context, argv []string, env []string) probeResult {
	pctx, cancel := context.WithTimeout(ctx, doctorProbeTimeout)
	defer cancel()
	cmd := exec.CommandContext(pctx, argv[0], argv[1:]...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &capped{b: &stdout}, &capped{b: &stderr}
	err := cmd.Run()
	res := probeResult{stdout: stdout.Bytes(), stderr: stderr.Bytes()}
	if pctx.Err() != nil && ctx.Err() == nil {
		res.timedOut = true
		return res
	}
	res.exit, res.signal, res.err = exitOf(err)
	return res
}

// capped keeps the first 64 KiB of a probe's output.
type capped struct{ b *bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := 64<<10 - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// doctorEnv is the environment doctor checks against: its own.
func doctorEnv() map[string]string { return runner.EnvMap(os.Environ()) }

// exitOf splits a finished command's error into its exit code, the signal
// that ended it, or another error (all zero for a clean exit).
func exitOf(err error) (code int, signal string, other error) {
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 0, ws.Signal().String(), nil
		}
		return ee.ExitCode(), "", nil
	case err != nil:
		return 0, "", err
	}
	return 0, "", nil
}
