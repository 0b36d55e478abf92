package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/policy"
)

// exitDoctorBlocked is doctor's exit code with --sheet/--role when some
// lane of the role could not run at all: every one of its attempts has a
// blocking problem.
const exitDoctorBlocked = 1

// doctorFlags are `switchyard doctor`'s own options.
type doctorFlags struct {
	providers       []string
	sheet, role     string
	parent, mode    string
	probe, json     bool
	allowUnverified []string
	// roundTrip (--round-trip) makes one real, cheap attempt per provider
	// after the probes; descriptors (--descriptor) and apiSpend
	// (--api-spend) say with which model and spending policy.
	roundTrip   bool
	descriptors []string
	apiSpend    string
}

// doctorOutput is `switchyard doctor --json` (schema in docs/OPERATIONS.md).
type doctorOutput struct {
	Server    string           `json:"server"` // "" without one
	Mode      policy.Access    `json:"mode"`
	Probed    bool             `json:"probed"`
	Sheet     string           `json:"sheet,omitempty"`
	Role      string           `json:"role,omitempty"`
	Providers []doctorProvider `json:"providers"`
	// Lanes is set with --sheet/--role: each lane and whether it can run.
	Lanes []doctorLane `json:"lanes,omitempty"`
	// Problems counts every provider problem; Blocking those that stop
	// every attempt of their provider; BlockedLanes the lanes that cannot
	// run at all.
	Problems     int `json:"problems"`
	Blocking     int `json:"blocking"`
	BlockedLanes int `json:"blockedLanes"`
}

// doctorLane is one lane of the checked role.
type doctorLane struct {
	Lane     int             `json:"lane"`
	ID       string          `json:"id"`
	CanRun   bool            `json:"canRun"`
	Attempts []doctorAttempt `json:"attempts"`
}

// doctorAttempt is one attempt of a lane: blocked when its provider has a
// blocking problem for it (native routes are the parent's and never
// checked).
type doctorAttempt struct {
	Descriptor string          `json:"descriptor"`
	Route      policy.Route    `json:"route"`
	Provider   policy.Provider `json:"provider,omitempty"`
	Blocked    bool            `json:"blocked"`
	Problems   []string        `json:"problems"` // codes of the blocking problems
}

// newDoctorCmd builds `switchyard doctor`.
func newDoctorCmd(stdout, stderr io.Writer) *cobra.Command {
	var f engineFlags
	var df doctorFlags
	c := &cobra.Command{
		Use:   "doctor [--provider P] [--sheet F --role R] [--mode M] [--probe [--round-trip --descriptor D]] [--json] [--data-dir D | --nats URLS]",
		Short: "Check what will and will not work before a run: CLIs, sign-in, billing guard, containment, quota, workers",
		Long: `Check every provider (or those asked) and say what will not work, each
problem with the line that fixes it:

  binary       the CLI found on PATH (path; with --probe its version and
               whether it is verified: one the conformance suite checked,
               or "not verified" (a newer release still runs))
  sign-in      with --probe: the provider's real preflight probes, each
               bounded to 30s, read exactly as the runner reads them
  guard        what the billing guard would block under api-spend deny:
               the NAMES of the variables set, never their values
  containment  the containment class per access mode; the --mode in
               question needs a verified class (UNVERIFIED blocks unless
               --allow-unverified-containment P accepts it)
  quota        the quota source and state, as "switchyard usage" shows
               it (from the server, or measured here without one)
  concurrency  the provider's concurrency cap
  workers      with a server: the live workers of the provider and each
               one's answer to the "capabilities" worker command (the CLI
               found on its host, its containment, its concurrency)

With --sheet and --role, doctor checks exactly the providers that role
can route to (resolved as "run" resolves it, for --parent) and lists each
lane: a lane whose every attempt has a blocking problem cannot run at all.

With --probe --round-trip, doctor then makes ONE real attempt per
provider through the runner (read-only, in an empty scratch checkout,
"Reply with the single word: ready", at most 5 minutes) and prints its
receipt in brief: the status, the model the CLI served, its usage and
cost. This spends: doctor never does it unless asked. The model is the
role's first attempt for that provider (--sheet/--role, with the sheet's
apiSpend) or --descriptor P:MODEL@EFFORT (with --api-spend, default
deny). A provider whose CLI is missing or not signed in is skipped, and
one the gate would stop (the billing guard under api-spend deny, an
unverified containment) is refused, without a launch.

Doctor creates nothing (no data directory, no store) and works with and
without a server. Nothing it prints carries an environment value or a
credential.

Exit codes: 0 the check ran (problems or not), except: 1 with
--sheet/--role when some lane cannot run at all, and 1 with --round-trip
when no round trip ran or one did not end complete; 64 usage error; 65
the sheet or role is invalid.`,
		Example: `  # Every provider, quickly (no probes):
  switchyard doctor

  # Is codex installed and signed in? (runs its real preflight probe)
  switchyard doctor --provider codex --probe

  # Can every lane of a role run? Exit 1 when one cannot:
  switchyard doctor --sheet team.sheet --role "bug-fix" --probe

  # For scripts (schema in docs/OPERATIONS.md):
  switchyard doctor --json

  # One real, cheap round trip (spends!) through two signed-in CLIs:
  switchyard doctor --probe --round-trip \
    --descriptor claude:sonnet@low --descriptor codex:gpt-5.6-luna@low`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validate(cmd); err != nil {
				return err
			}
			return runDoctor(cmd.Context(), stdout, stderr, f, df)
		},
	}
	fl := c.Flags()
	fl.StringSliceVar(&df.providers, "provider", nil, "only these providers (repeatable or a comma list): "+strings.Join(providerNames(), ", "))
	fl.StringVar(&df.sheet, "sheet", "", "with --role: check the providers this sheet's role routes to")
	fl.StringVar(&df.role, "role", "", "with --sheet: the role to check")
	fl.StringVar(&df.parent, "parent", string(policy.ParentClaude), "with --sheet: the parent harness the role is resolved for (claude or codex)")
	fl.StringVar(&df.mode, "mode", string(policy.ReadOnly), "the access mode whose containment is checked: read-only or isolated-write")
	fl.BoolVar(&df.probe, "probe", false, "run each provider's --version and real preflight (sign-in) probes, 30s each")
	fl.BoolVar(&df.json, "json", false, "print JSON (schema in docs/OPERATIONS.md)")
	fl.StringSliceVar(&df.allowUnverified, "allow-unverified-containment", nil, "providers whose UNVERIFIED containment you accept (as run's flag of that name)")
	fl.BoolVar(&df.roundTrip, "round-trip", false, "with --probe: make one real, cheap read-only attempt per provider (spends) and print its status, served model and usage")
	fl.StringSliceVar(&df.descriptors, "descriptor", nil, "with --round-trip: the attempt to make, <provider>:<model>@<effort> (repeatable or a comma list; one per provider)")
	fl.StringVar(&df.apiSpend, "api-spend", string(policy.APISpendDeny), "with --descriptor: the spending policy of its round trips, deny or approved (a sheet's attempts use the sheet's)")
	addQueryEngineFlags(c, &f)
	return wireCommand(c, stderr)
}

// runDoctor checks and prints.
func runDoctor(ctx context.Context, stdout, stderr io.Writer, f engineFlags, df doctorFlags) error {
	mode, err := policy.ParseAccess(df.mode)
	if err != nil {
		return usagef("--mode %q: want read-only or isolated-write", df.mode)
	}
	allow, err := parseProviderList("--allow-unverified-containment", df.allowUnverified, providerNames())
	if err != nil {
		return err
	}
	out := doctorOutput{Mode: mode, Probed: df.probe}
	targets, err := parseRoundTripFlags(df)
	if err != nil {
		return err
	}
	var lanes []policy.LanePolicy
	var provs []policy.Provider
	switch {
	case (df.sheet == "") != (df.role == ""):
		return usagef("--sheet and --role go together: pass both to check one role, or neither to check providers")
	case df.sheet != "":
		if len(df.providers) > 0 {
			return usagef("--provider and --sheet/--role exclude each other: the role decides the providers")
		}
		if lanes, provs, err = resolveDoctorRole(df); err != nil {
			return err
		}
		out.Sheet, out.Role = df.sheet, df.role
	case df.roundTrip && len(df.providers) == 0:
		// The descriptors name the providers.
		for _, name := range providerNames() {
			if _, ok := targets[policy.Provider(name)]; ok {
				provs = append(provs, policy.Provider(name))
			}
		}
	default:
		if provs, err = parseUsageProviders(df.providers); err != nil {
			return err
		}
	}

	conn, err := openDoctorConn(ctx, f)
	if err != nil {
		return err
	}
	c := doctorCheck{mode: mode, probe: df.probe, quota: true, commands: true, allowUnverified: allow, env: doctorEnv(),
		attempts: firstAttempts(lanes)}
	if conn != nil {
		defer conn.Close()
		c.conn = conn
		c.served = conn.mode != connEmbedded
		if c.served {
			out.Server = conn.describe()
			c.connFlags = conn.connFlags(f)
		}
	}
	out.Providers = checkProviders(ctx, c, provs)
	if ctx.Err() != nil {
		return &cliError{code: exitInterrupted, msg: "interrupted while checking"}
	}
	if df.roundTrip {
		roundTrips(ctx, c, out.Providers, targets)
		if ctx.Err() != nil {
			return &cliError{code: exitInterrupted, msg: "interrupted during a round trip"}
		}
	}
	out.Lanes = doctorLanes(lanes, out.Providers)
	for _, p := range out.Providers {
		out.Problems += len(p.Problems)
		for _, pr := range p.Problems {
			if pr.Blocking {
				out.Blocking++
			}
		}
	}
	for _, l := range out.Lanes {
		if !l.CanRun {
			out.BlockedLanes++
		}
	}
	if df.json {
		err = writeDoc(stdout, out)
	} else {
		err = printDoctor(stdout, out)
	}
	if err != nil {
		return err
	}
	if out.BlockedLanes > 0 || (df.roundTrip && !roundTripsPassed(out.Providers)) {
		return &exitError{code: exitDoctorBlocked}
	}
	return nil
}

// openDoctorConn connects like usage: to --nats, or to the data
// directory's server or store when there is one; nil (and nothing
// created) when there is none.
func openDoctorConn(ctx context.Context, f engineFlags) (*engineConn, error) {
	if f.nats == "" {
		dir, err := locateDataDir(f.dataDir)
		if err != nil {
			return nil, usagef("%v", err)
		}
		if !hasStore(dir) {
			return nil, nil
		}
	}
	return openEngineConn(ctx, f, connectOptions{query: true})
}

// resolveDoctorRole resolves --sheet/--role as run does and returns the
// lanes and the external providers they may launch, in first-use order.
func resolveDoctorRole(df doctorFlags) ([]policy.LanePolicy, []policy.Provider, error) {
	parent, err := policy.ParseParent(df.parent)
	if err != nil {
		return nil, nil, usagef("--parent %q: want claude or codex", df.parent)
	}
	src, err := readInput(df.sheet)
	if err != nil {
		return nil, nil, usagef("cannot read --sheet %s: %v", df.sheet, err)
	}
	_, sheet, err := policy.ParseRunSheet(src, policy.DefaultOptions())
	if err != nil {
		return nil, nil, err
	}
	if !sheet.HasRole(df.role, policy.DefaultOptions()) {
		return nil, nil, &policy.PolicyError{Issues: []string{unknownRoleIssue(sheet, df.role, df.sheet)}}
	}
	rp, err := policy.Resolve(sheet, df.role, parent, policy.DefaultOptions())
	if err != nil {
		return nil, nil, err
	}
	return rp.Lanes, externalProviders(rp.Lanes), nil
}

// externalProviders are the providers lanes may launch, in first-use order.
func externalProviders(lanes []policy.LanePolicy) []policy.Provider {
	var out []policy.Provider
	for _, l := range lanes {
		for _, a := range l.Attempts {
			if a.Route == policy.RouteExternal && a.Attempt.Provider != "" && !slices.Contains(out, a.Attempt.Provider) {
				out = append(out, a.Attempt.Provider)
			}
		}
	}
	return out
}

// firstAttempts maps each external provider of lanes to its first attempt.
func firstAttempts(lanes []policy.LanePolicy) map[policy.Provider]policy.AttemptPolicy {
	out := map[policy.Provider]policy.AttemptPolicy{}
	for _, l := range lanes {
		for _, a := range l.Attempts {
			if _, seen := out[a.Attempt.Provider]; a.Route == policy.RouteExternal && !seen {
				out[a.Attempt.Provider] = a
			}
		}
	}
	return out
}

// doctorLanes says, per lane, which attempts are blocked and whether the
// lane can run at all.
func doctorLanes(lanes []policy.LanePolicy, checked []doctorProvider) []doctorLane {
	byProvider := map[policy.Provider]*doctorProvider{}
	for i := range checked {
		byProvider[checked[i].Provider] = &checked[i]
	}
	var out []doctorLane
	for i, l := range lanes {
		dl := doctorLane{Lane: i, ID: l.ID}
		for _, a := range l.Attempts {
			da := doctorAttempt{Descriptor: a.Descriptor, Route: a.Route, Problems: []string{}}
			if a.Route == policy.RouteExternal {
				da.Provider = a.Attempt.Provider
				if p := byProvider[a.Attempt.Provider]; p != nil {
					for _, pr := range p.blockingFor(a.APISpend) {
						da.Problems = append(da.Problems, pr.Code)
					}
				}
				da.Blocked = len(da.Problems) > 0
			}
			if !da.Blocked {
				dl.CanRun = true
			}
			dl.Attempts = append(dl.Attempts, da)
		}
		out = append(out, dl)
	}
	return out
}

// printDoctor prints the check as text: one block per provider, then the
// lanes.
func printDoctor(w io.Writer, out doctorOutput) error {
	var b strings.Builder
	where := "no server (checked on this host only)"
	if out.Server != "" {
		where = out.Server
	}
	fmt.Fprintf(&b, "switchyard doctor: %s mode, %s\n", out.Mode, where)
	for _, p := range out.Providers {
		fmt.Fprintf(&b, "\n%s\n", p.Provider)
		bin := "not found (tried " + strings.Join(p.Binary.Names, ", ") + ")"
		if p.Binary.Path != "" {
			bin = p.Binary.Path
			verified := strings.Join(p.Binary.KnownVersions, ", ")
			if verified == "" {
				verified = "none"
			}
			switch {
			case p.Binary.Version == "":
			case p.Binary.Verification == versionVerified:
				bin += " (" + p.Binary.Version + ", verified)"
			case p.Binary.Verification == versionNewer:
				bin += " (" + p.Binary.Version + ", not verified: newer than every verified version: " + verified + ")"
			default:
				bin += " (" + p.Binary.Version + ", not verified: not among the verified versions: " + verified + ")"
			}
		}
		fmt.Fprintf(&b, "  binary:       %s\n", bin)
		signIn := strings.ReplaceAll(p.SignIn.State, "_", " ")
		switch {
		case p.SignIn.State == "not_probed":
			signIn += " (pass --probe)"
		case p.SignIn.State == "skipped":
			signIn += " (no CLI to probe)"
		case p.SignIn.Evidence != "":
			signIn += ": " + p.SignIn.Evidence
		}
		fmt.Fprintf(&b, "  sign-in:      %s\n", signIn)
		guard := "passes"
		if len(p.Guard.Blocked) > 0 {
			guard = "blocks " + strings.Join(p.Guard.Blocked, ", ")
		}
		fmt.Fprintf(&b, "  guard (deny): %s\n", guard)
		var cs []string
		for _, c := range p.Containment {
			line := string(c.Mode) + " " + c.Class
			if by, ok := strings.CutPrefix(c.Reason, "verified by "); ok {
				line += " verified by " + strings.SplitN(by, ";", 2)[0]
			}
			cs = append(cs, line)
		}
		fmt.Fprintf(&b, "  containment:  %s\n", strings.Join(cs, ", "))
		q := string(p.Quota.Source)
		switch {
		case p.Quota.Where == "not_measured":
			q += ", not measured"
		case p.Quota.Verdict != nil:
			q += ", " + string(p.Quota.State)
			if p.Quota.Reason != "" {
				q += " (" + string(p.Quota.Reason) + ")"
			}
			q += "; " + verdictText(*p.Quota.Verdict)
			if p.Quota.Where == "measured_here" {
				q += " [measured here]"
			}
		}
		fmt.Fprintf(&b, "  quota:        %s\n", q)
		if p.Quota.Credential != "" {
			fmt.Fprintf(&b, "  credential:   %s\n", p.Quota.Credential)
		}
		fmt.Fprintf(&b, "  concurrency:  %d, %s", p.Concurrency.Cap, p.Concurrency.Source)
		if out.Server != "" {
			fmt.Fprintf(&b, "; %d running now", p.Concurrency.InFlight)
		}
		b.WriteString("\n")
		if p.Workers != nil {
			if len(p.Workers) == 0 {
				fmt.Fprintf(&b, "  workers:      none live\n")
			}
			for _, wk := range p.Workers {
				line := wk.WorkerID
				if wk.Host != "" {
					line += " on " + wk.Host
				}
				switch {
				case wk.Error != "":
					line += ": no answer (" + wk.Error + ")"
				case wk.Capabilities != nil:
					bin := wk.Capabilities.BinaryPath
					if bin == "" {
						bin = "no CLI on its PATH"
					}
					line += fmt.Sprintf(": %s, concurrency %d", bin, wk.Capabilities.Concurrency)
					if wk.Transport != nil {
						line += fmt.Sprintf(", %d running", len(wk.Transport.Running))
					}
				}
				fmt.Fprintf(&b, "  worker:       %s\n", line)
			}
		}
		if p.RoundTrip != nil {
			fmt.Fprintf(&b, "  round trip:   %s\n", roundTripLine(p.RoundTrip))
		}
		for _, pr := range p.Problems {
			tag := "warning"
			if pr.Blocking {
				tag = "problem"
			}
			fmt.Fprintf(&b, "  %s: %s\n    fix: %s\n", tag, pr.Message, pr.Fix)
		}
	}
	if out.Role != "" {
		fmt.Fprintf(&b, "\nrole %q:\n", out.Role)
		for _, l := range out.Lanes {
			state := "can run"
			if !l.CanRun {
				state = "CANNOT RUN"
			}
			var as []string
			for _, a := range l.Attempts {
				s := a.Descriptor
				if a.Blocked {
					s += " (blocked: " + strings.Join(a.Problems, ", ") + ")"
				}
				as = append(as, s)
			}
			fmt.Fprintf(&b, "  lane %d %s: %s\n", l.Lane, state, strings.Join(as, " -> "))
		}
	}
	fmt.Fprintf(&b, "\n%s, %d blocking", plural(out.Problems, "problem"), out.Blocking)
	if out.Role != "" {
		fmt.Fprintf(&b, "; %s cannot run", plural(out.BlockedLanes, "lane"))
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}
