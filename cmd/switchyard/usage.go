package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
	"github.com/switchyard-dev/switchyard/providers/quota"
)

// capacityMaxAge is how old a capacity report may be before the
// eligibility gate counts it as stale (unknown). The engine this binary
// builds and the usage and status commands use the same value, so what
// they show is what the gate decides.
const capacityMaxAge = policy.DefaultCapacityMaxAge

// defaultUsageWait bounds how long usage --refresh waits for the workers'
// newer reports: quota's own acquisition deadline and a margin.
const defaultUsageWait = quota.DefaultTimeout + 5*time.Second

// usageOutput is usage --json (documented in docs/CONCEPTS.md, "Knowing before
// launch").
type usageOutput struct {
	Providers []providerUsage `json:"providers"`
}

// providerUsage is one provider's capacity as the gate sees it: its quota
// source, the report's snapshot and eligibility (absent when there is no
// report), a quota view derived from them, the gate's verdict and the
// report's age.
type providerUsage struct {
	Provider    policy.Provider              `json:"provider"`
	Source      policy.QuotaSource           `json:"source"`
	Snapshot    *policy.CapacitySnapshot     `json:"snapshot,omitempty"`
	QuotaView   quotaView                    `json:"quotaView"`
	Eligibility *policy.ExecutionEligibility `json:"eligibility,omitempty"`
	Verdict     policy.EligibilityVerdict    `json:"verdict"`
	AgeSeconds  *int64                       `json:"ageSeconds,omitempty"`
	// Credential says when the quota source reads the CLI's credential
	// file (quota.CredentialNote); empty for a source that reads none.
	Credential string `json:"credential,omitempty"`
}

// quotaView is a snapshot read for people and scripts: the state and its
// reason, each window with what is left, whether the report is stale, and
// an exhaustion an attempt proved (carried to later runs).
type quotaView struct {
	State             policy.CapacityState      `json:"state"`
	Reason            policy.CapacityReason     `json:"reason,omitempty"`
	Report            bool                      `json:"report"` // a current report exists
	Stale             bool                      `json:"stale,omitempty"`
	Windows           []windowView              `json:"windows,omitempty"`
	LearnedExhaustion *policy.LearnedExhaustion `json:"learnedExhaustion,omitempty"`
}

// windowView is one quota window.
type windowView struct {
	Name             string     `json:"name"`
	UsedPercent      *float64   `json:"usedPercent,omitempty"`
	RemainingPercent *float64   `json:"remainingPercent,omitempty"`
	WindowMinutes    *int       `json:"windowMinutes,omitempty"`
	ResetsAt         *time.Time `json:"resetsAt,omitempty"`
}

// providerUsageOf is what the gate sees of provider p with report rep (nil:
// none) at now.
func providerUsageOf(p policy.Provider, rep *policy.CapacityReport, now time.Time) providerUsage {
	source := policy.QuotaUnsupported
	if spec, err := providers.Lookup(p); err == nil {
		source = spec.QuotaSource
	}
	u := providerUsage{Provider: p, Source: source}
	if source != policy.QuotaUnsupported {
		u.Credential = quota.CredentialNote(p, rep)
	}
	u.Verdict = policy.EvaluateEligibility(policy.EligibilityInput{
		Provider: p, Source: source, Report: rep, Now: now, MaxAge: capacityMaxAge,
	})
	if rep == nil {
		u.QuotaView.State = policy.CapacityUnknown
		if source == policy.QuotaUnsupported {
			u.QuotaView.State = policy.CapacityUnsupported
		}
		return u
	}
	snap := rep.Snapshot
	u.Snapshot, u.Eligibility = &snap, rep.Eligibility
	age := now.Sub(snap.AcquiredAt)
	secs := max(int64(age/time.Second), 0)
	u.AgeSeconds = &secs
	u.QuotaView = quotaView{State: snap.State, Reason: snap.Reason, Report: true, Stale: age > capacityMaxAge}
	if le := rep.LearnedExhaustion; le != nil && le.Until.After(now) {
		u.QuotaView.LearnedExhaustion = le
	}
	for _, w := range snap.Windows {
		wv := windowView{Name: w.Name, UsedPercent: w.UsedPercent, WindowMinutes: w.WindowMinutes, ResetsAt: w.ResetsAt}
		if w.UsedPercent != nil {
			left := math.Max(0, 100-*w.UsedPercent)
			wv.RemainingPercent = &left
		}
		u.QuotaView.Windows = append(u.QuotaView.Windows, wv)
	}
	return u
}

// usageFlags are `switchyard usage`'s own options.
type usageFlags struct {
	providers []string
	refresh   bool
	json      bool
	wait      time.Duration
}

// newUsageCmd builds `switchyard usage`.
func newUsageCmd(stdout, stderr io.Writer) *cobra.Command {
	var f engineFlags
	var uf usageFlags
	c := &cobra.Command{
		Use:   "usage [--provider P] [--refresh] [--json] [--data-dir D | --nats URLS]",
		Short: "Show each provider's quota, eligibility and whether the gate lets it launch",
		Long: `Show, per provider, what the engine's eligibility gate sees before it launches
an attempt: the provider's quota source (LIVE_RPC, LIVE_HTTP, LIVE_CLI or
UNSUPPORTED), the state of its capacity snapshot (measured, unknown or
unsupported, with the reason), each quota window (used percent, window
length, when it resets), the execution eligibility with its reason codes,
the gate's verdict (eligible, or the exclusion code it records) and the
report's age. A "credential:" line says when a source reads the CLI's own
login file: Claude's reads its OAuth token from ~/.claude/.credentials.json
(or $CLAUDE_CONFIG_DIR) on each measurement, only to call its usage
endpoint, never refreshing, copying or storing it; SWITCHYARD_CLAUDE_USAGE_API=0
stops it, and the line then says the file was not read.

With a server for the data directory (a "switchyard serve" or a running
"switchyard run") or with --nats, usage reads the deployment's capacity
store, which the workers fill where the CLIs and their logins live.
--refresh asks those workers to measure again and waits (at most --wait)
for their newer reports; a provider with no live worker, or whose workers
do not answer in time, keeps the report it had, and usage says so.

Without a server, usage measures here and now, in this process, for the
providers asked (--refresh is implied), using the CLIs on PATH and the
logins of this environment. It creates nothing: an exhaustion a run proved
earlier is read from the data directory when it holds a store.

Nothing usage prints carries an account id, e-mail, balance, token or raw
response: only states, percentages, times and reason codes.

Exit codes: 0 the usage was printed (whatever the verdicts); 64 usage
error (an unknown provider); 1 anything else.`,
		Example: `  # Every provider, from the data directory's serve (or measured here):
  switchyard usage

  # Ask codex's workers to measure now, and wait for the answer:
  switchyard usage --provider codex --refresh

  # For scripts: the snapshot, quota view, eligibility and verdict as JSON:
  switchyard usage --provider codex,claude --json`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validate(cmd); err != nil {
				return err
			}
			provs, err := parseUsageProviders(uf.providers)
			if err != nil {
				return err
			}
			if uf.wait <= 0 {
				return usagef("--wait %s: want a positive duration such as 20s", uf.wait)
			}
			return runUsage(cmd.Context(), stdout, stderr, f, uf, provs)
		},
	}
	fl := c.Flags()
	fl.StringSliceVar(&uf.providers, "provider", nil, "only these providers (repeatable or a comma list): "+strings.Join(providerNames(), ", "))
	fl.BoolVar(&uf.refresh, "refresh", false, "ask the workers to measure again and wait for their reports (implied without a server)")
	fl.BoolVar(&uf.json, "json", false, "print JSON (schema in docs/CONCEPTS.md)")
	fl.DurationVar(&uf.wait, "wait", defaultUsageWait, "with --refresh, how long to wait for the workers' newer reports")
	addQueryEngineFlags(c, &f)
	return wireCommand(c, stderr)
}

// parseUsageProviders parses --provider: every known provider when none
// is given, else the ones named, in canonical order.
func parseUsageProviders(vals []string) ([]policy.Provider, error) {
	known := providerNames()
	out, err := parseProviderList("--provider", vals, known)
	switch {
	case err != nil:
		return nil, err
	case len(vals) > 0 && len(out) == 0:
		return nil, usagef("--provider names no provider; for example --provider codex")
	case len(vals) == 0:
		for _, n := range known {
			out = append(out, policy.Provider(n))
		}
	}
	return out, nil
}

// runUsage finds the server (creating nothing), gets the reports and
// prints them.
func runUsage(ctx context.Context, stdout, stderr io.Writer, f engineFlags, uf usageFlags, provs []policy.Provider) error {
	var conn *engineConn
	if f.nats != "" {
		c, err := openEngineConn(ctx, f, connectOptions{query: true})
		if err != nil {
			return err
		}
		conn = c
	} else {
		dir, err := locateDataDir(f.dataDir)
		if err != nil {
			return usagef("%v", err)
		}
		if err := storeAccessError(dir); err != nil {
			return err
		}
		if hasStore(dir) {
			c, err := openEngineConn(ctx, f, connectOptions{query: true})
			if err != nil {
				return err
			}
			conn = c
		}
	}
	if conn != nil {
		defer conn.Close()
	}
	var reports map[policy.Provider]*policy.CapacityReport
	var where string
	var err error
	if conn != nil && conn.mode != connEmbedded {
		where = "from " + conn.describe()
		reports, err = storedReports(ctx, stderr, conn, f, provs, uf)
	} else {
		where = "measured here (no server for the data directory)"
		reports, err = measureHere(ctx, conn, provs)
	}
	if err != nil {
		return err
	}
	now := time.Now()
	out := usageOutput{}
	for _, p := range provs {
		out.Providers = append(out.Providers, providerUsageOf(p, reports[p], now))
	}
	if uf.json {
		return writeDoc(stdout, out)
	}
	// Suggest --refresh only where it could help: not when it was given,
	// nor when usage measured here (where it is implied).
	suggestRefresh := !uf.refresh && conn != nil && conn.mode != connEmbedded
	return printUsage(stdout, out, where, suggestRefresh)
}

// storedReports reads provs' reports from the capacity store; with
// --refresh it first asks their workers to measure again and waits for
// newer reports (or uf.wait).
func storedReports(ctx context.Context, stderr io.Writer, conn *engineConn, f engineFlags, provs []policy.Provider, uf usageFlags) (map[policy.Provider]*policy.CapacityReport, error) {
	capa := conn.capacity()
	read := func() (map[policy.Provider]*policy.CapacityReport, error) {
		out := map[policy.Provider]*policy.CapacityReport{}
		for _, p := range provs {
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			r, err := capa.Get(rctx, p)
			cancel()
			switch {
			case err == nil:
				out[p] = &r
			case errors.Is(err, events.ErrNoCapacityReport):
			default:
				return nil, failf("read the capacity report of %s from %s: %v", p, conn.describe(), err)
			}
		}
		return out, nil
	}
	if !uf.refresh {
		return read()
	}
	// Only a provider with a live worker can answer; the others keep the
	// report they have, and usage says so instead of waiting in vain.
	ask := provs
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	live, err := conn.js.Presence().Live(pctx)
	cancel()
	if err == nil {
		byProvider := liveByProvider(live)
		ask = nil
		var idle []string
		for _, p := range provs {
			if len(byProvider[string(p)]) > 0 {
				ask = append(ask, p)
			} else {
				idle = append(idle, string(p))
			}
		}
		if len(idle) > 0 {
			fmt.Fprintf(stderr, "switchyard usage: no live worker for %s to measure again; showing the report it has (start one: `switchyard worker --provider %s%s`)\n",
				strings.Join(idle, ", "), strings.Join(idle, ","), conn.connFlags(f))
		}
	}
	asked := time.Now()
	for _, p := range ask {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := capa.RequestRefresh(rctx, p)
		cancel()
		if err != nil {
			return nil, failf("ask the workers of %s for a refresh on %s: %v", p, conn.describe(), err)
		}
	}
	deadline := time.Now().Add(uf.wait)
	for {
		reports, err := read()
		if err != nil {
			return nil, err
		}
		var waiting []string
		for _, p := range ask {
			if r := reports[p]; r == nil || r.Snapshot.AcquiredAt.Before(asked) {
				waiting = append(waiting, string(p))
			}
		}
		if len(waiting) == 0 {
			return reports, nil
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(stderr, "switchyard usage: no worker answered the refresh for %s within %s; showing the report it had (is a `switchyard worker --provider %s` running?)\n",
				strings.Join(waiting, ", "), uf.wait, strings.Join(waiting, ","))
			return reports, nil
		}
		if !events.Sleep(ctx, 100*time.Millisecond) {
			return nil, &cliError{code: exitInterrupted, msg: "interrupted while waiting for the workers' reports"}
		}
	}
}

// measureHere acquires provs' reports in this process, all at once, each
// bounded by quota's deadline. With conn (the data directory's store,
// opened by this process) an unexpired exhaustion a run proved is carried
// over from the stored report, as a worker would; nothing is stored.
func measureHere(ctx context.Context, conn *engineConn, provs []policy.Provider) (map[policy.Provider]*policy.CapacityReport, error) {
	env := os.Environ()
	envMap := runner.EnvMap(env)
	out := make([]policy.CapacityReport, len(provs))
	var wg sync.WaitGroup
	for i, p := range provs {
		cfg := quota.Config{Env: env, Now: time.Now}
		if spec, err := providers.Lookup(p); err == nil {
			if exe, err := providers.Discover(spec, envMap); err == nil {
				cfg.Binary = exe
			}
		}
		wg.Go(func() { out[i] = quota.Acquire(ctx, p, cfg) })
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, &cliError{code: exitInterrupted, msg: "interrupted while measuring"}
	}
	reports := map[policy.Provider]*policy.CapacityReport{}
	now := time.Now()
	for i, p := range provs {
		r := out[i]
		if conn != nil {
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			prev, err := conn.capacity().Get(rctx, p)
			cancel()
			if err == nil && prev.LearnedExhaustion != nil && prev.LearnedExhaustion.Until.After(now) && r.LearnedExhaustion == nil {
				r.LearnedExhaustion = prev.LearnedExhaustion
			}
		}
		reports[p] = &r
	}
	return reports, nil
}

// printUsage prints the usage as text: one block per provider;
// suggestRefresh adds "try --refresh" to a provider with no report.
func printUsage(w io.Writer, out usageOutput, where string, suggestRefresh bool) error {
	fmt.Fprintf(w, "provider usage, %s:\n", where)
	for _, u := range out.Providers {
		fmt.Fprintln(w)
		head := fmt.Sprintf("%s (%s): %s", u.Provider, u.Source, u.QuotaView.State)
		if u.QuotaView.Reason != "" {
			head += " (" + string(u.QuotaView.Reason) + ")"
		}
		switch {
		case u.Source == policy.QuotaUnsupported:
			head += ": no trustworthy metric; capacity is opaque"
		case !u.QuotaView.Report:
			head += ": no current report (no worker for it has measured yet"
			if suggestRefresh {
				head += "; try --refresh"
			}
			head += ")"
		case u.AgeSeconds != nil && u.QuotaView.State == policy.CapacityMeasured:
			head += " " + ageText(*u.AgeSeconds) + " ago"
			if u.QuotaView.Stale {
				head += " (stale: older than " + capacityMaxAge.String() + ")"
			}
		case u.AgeSeconds != nil:
			head += ", reported " + ageText(*u.AgeSeconds) + " ago"
			if u.QuotaView.Stale {
				head += " (stale: older than " + capacityMaxAge.String() + ")"
			}
		}
		fmt.Fprintln(w, head)
		for _, wv := range u.QuotaView.Windows {
			fmt.Fprintf(w, "  window %s\n", windowText(wv))
		}
		if u.Eligibility != nil {
			line := "  eligibility: " + string(u.Eligibility.State)
			if len(u.Eligibility.Reasons) > 0 {
				rs := make([]string, len(u.Eligibility.Reasons))
				for i, r := range u.Eligibility.Reasons {
					rs[i] = string(r)
				}
				line += " (" + strings.Join(rs, ", ") + ")"
			}
			fmt.Fprintln(w, line)
		}
		if le := u.QuotaView.LearnedExhaustion; le != nil {
			fmt.Fprintf(w, "  exhausted (an attempt proved it at %s) until %s\n", le.At.UTC().Format(time.RFC3339), le.Until.UTC().Format(time.RFC3339))
		}
		fmt.Fprintf(w, "  verdict: %s\n", verdictText(u.Verdict))
		if u.Credential != "" {
			fmt.Fprintf(w, "  credential: %s\n", u.Credential)
		}
	}
	return nil
}

// verdictText renders a verdict: "eligible (capacity measured)" or
// "excluded before launch: CODE until T: detail".
func verdictText(v policy.EligibilityVerdict) string {
	var s string
	switch {
	case v.Eligible && v.Overridden:
		s = fmt.Sprintf("eligible only by --allow-unknown-quota (%s)", v.Code)
	case v.Eligible:
		s = fmt.Sprintf("eligible (capacity %s)", v.Capacity)
	default:
		s = "excluded before launch: " + string(v.Code)
		if v.Until != nil {
			s += " until " + v.Until.UTC().Format(time.RFC3339)
		}
	}
	if v.Detail != "" {
		s += ": " + v.Detail
	}
	return s
}

// windowText renders one window: "5h: 42% used, 58% left, 300 min, resets 2026-…Z".
func windowText(wv windowView) string {
	parts := []string{}
	if wv.UsedPercent != nil {
		parts = append(parts, fmt.Sprintf("%s%% used", fmtPercent(*wv.UsedPercent)))
	} else {
		parts = append(parts, "used percent not reported")
	}
	if wv.RemainingPercent != nil {
		parts = append(parts, fmt.Sprintf("%s%% left", fmtPercent(*wv.RemainingPercent)))
	}
	if wv.WindowMinutes != nil {
		parts = append(parts, fmt.Sprintf("%d-minute window", *wv.WindowMinutes))
	}
	if wv.ResetsAt != nil {
		parts = append(parts, "resets "+wv.ResetsAt.UTC().Format(time.RFC3339))
	}
	return wv.Name + ": " + strings.Join(parts, ", ")
}

// fmtPercent renders a percentage without needless decimals.
func fmtPercent(p float64) string {
	if p == math.Trunc(p) {
		return fmt.Sprintf("%.0f", p)
	}
	return fmt.Sprintf("%.1f", p)
}

// ageText renders an age in seconds: "42s", "3m", "2h5m".
func ageText(secs int64) string {
	d := time.Duration(secs) * time.Second
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", secs)
	case d < time.Hour:
		return fmt.Sprintf("%dm", secs/60)
	}
	return fmt.Sprintf("%dh%dm", secs/3600, (secs%3600)/60)
}
