package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/internal/termsafe"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// roundTripTimeout bounds one round trip: a one-line answer from a real
// model, far below any real lane, generous for a slow first start.
const roundTripTimeout = 5 * time.Minute

// roundTripPrompt is what a round trip asks: the cheapest question with a
// checkable answer.
const roundTripPrompt = "Reply with the single word: ready\n"

// Round-trip states.
const (
	roundTripRan     = "ran"     // the CLI was launched once; Status says how it ended
	roundTripSkipped = "skipped" // nothing to ask: no CLI, not signed in, no model given
	roundTripRefused = "refused" // a blocking problem (the billing guard under deny among them) stops it, as the gate would
)

// doctorRoundTrip is `doctor --probe --round-trip`'s answer for one
// provider: one real, cheap attempt through the runner, read-only, in an
// empty scratch checkout. It spends (a model call), so doctor runs it only
// when asked.
type doctorRoundTrip struct {
	Descriptor string          `json:"descriptor"`
	APISpend   policy.APISpend `json:"apiSpend"`
	State      string          `json:"state"`
	// Reason says why a round trip was skipped or refused.
	Reason string `json:"reason,omitempty"`
	// The ran attempt's receipt, in brief.
	Status        policy.ReceiptStatus `json:"status,omitempty"`
	ExitCode      int                  `json:"exitCode"`
	ReportedModel string               `json:"reportedModel,omitempty"`
	ModelVerified bool                 `json:"modelVerified"`
	InputTokens   *int64               `json:"inputTokens"`
	OutputTokens  *int64               `json:"outputTokens"`
	CostUSD       *float64             `json:"costUsd"`
	ElapsedMs     int64                `json:"elapsedMs"`
	// Error is the receipt's error message (capped) when it did not end
	// complete.
	Error string `json:"error,omitempty"`
}

// roundTripTarget is the attempt a round trip makes for one provider.
type roundTripTarget struct {
	attempt  policy.Attempt
	apiSpend policy.APISpend
}

// parseRoundTripDescriptors reads --descriptor values (repeatable, comma
// lists): one <provider>:<model>@<effort> per provider, with the given
// api-spend policy.
func parseRoundTripDescriptors(vals []string, spend policy.APISpend) (map[policy.Provider]roundTripTarget, error) {
	out := map[policy.Provider]roundTripTarget{}
	for _, v := range vals {
		for _, s := range strings.Split(v, ",") {
			s = strings.TrimSpace(s)
			if s == "" {
				continue
			}
			a, err := parseRoundTripDescriptor(s)
			if err != nil {
				return nil, usagef("--descriptor %q: %v; want <provider>:<model>@<effort>, for example codex:gpt-5.6-luna@low", s, err)
			}
			if _, dup := out[a.Provider]; dup {
				return nil, usagef("--descriptor names %s twice; give one descriptor per provider", a.Provider)
			}
			out[a.Provider] = roundTripTarget{attempt: a, apiSpend: spend}
		}
	}
	return out, nil
}

// parseRoundTripFlags checks --round-trip, --descriptor and --api-spend
// together and returns the --descriptor targets.
func parseRoundTripFlags(df doctorFlags) (map[policy.Provider]roundTripTarget, error) {
	if !df.roundTrip {
		if len(df.descriptors) > 0 {
			return nil, usagef("--descriptor applies to --round-trip; add --probe --round-trip, or drop --descriptor")
		}
		return nil, nil
	}
	if !df.probe {
		return nil, usagef("--round-trip needs --probe: a round trip runs only after the sign-in probes pass; add --probe")
	}
	spend := policy.APISpend(df.apiSpend)
	if spend != policy.APISpendDeny && spend != policy.APISpendApproved {
		return nil, usagef("--api-spend %q: want deny or approved", df.apiSpend)
	}
	targets, err := parseRoundTripDescriptors(df.descriptors, spend)
	if err != nil {
		return nil, err
	}
	if len(targets) == 0 && df.sheet == "" {
		return nil, usagef("--round-trip needs the attempts to make: --descriptor P:MODEL@EFFORT (for example --descriptor claude:sonnet@low), or --sheet F --role R")
	}
	return targets, nil
}

// roundTrips makes each checked provider's round trip, one at a time:
// --descriptor's target, else the role's first attempt for it.
func roundTrips(ctx context.Context, c doctorCheck, checked []doctorProvider, targets map[policy.Provider]roundTripTarget) {
	for i := range checked {
		d := &checked[i]
		t, ok := targets[d.Provider]
		if !ok {
			a, fromSheet := c.attempts[d.Provider]
			if !fromSheet {
				d.RoundTrip = &doctorRoundTrip{State: roundTripSkipped,
					Reason: fmt.Sprintf("no model to ask: pass --descriptor %s:MODEL@EFFORT", d.Provider)}
				continue
			}
			t = roundTripTarget{attempt: a.Attempt, apiSpend: cmpSpend(a.APISpend)}
		}
		if ctx.Err() != nil {
			return
		}
		d.RoundTrip = roundTrip(ctx, c, d, t)
	}
}

// cmpSpend reads an attempt's api-spend policy, legacy as deny: a round
// trip never spends more than the sheet clearly approved.
func cmpSpend(s policy.APISpend) policy.APISpend {
	if s == policy.APISpendApproved {
		return s
	}
	return policy.APISpendDeny
}

// roundTripsPassed reports whether at least one round trip ran and every
// one that ran ended complete.
func roundTripsPassed(checked []doctorProvider) bool {
	ran := 0
	for _, d := range checked {
		if d.RoundTrip == nil || d.RoundTrip.State != roundTripRan {
			continue
		}
		ran++
		if d.RoundTrip.Status != policy.StatusComplete {
			return false
		}
	}
	return ran > 0
}

// parseRoundTripDescriptor parses one descriptor as a sheet does, and
// gemini's too: gemini is receipt-only (no sheet routes to it), but the
// runner launches it, so a round trip may. The runner checks its model
// and effort as it checks every attempt's.
func parseRoundTripDescriptor(s string) (policy.Attempt, error) {
	rest, ok := strings.CutPrefix(s, string(policy.Gemini)+":")
	if !ok {
		return policy.ParseAttempt(s)
	}
	model, effort, ok := strings.Cut(rest, "@")
	if !ok || model == "" || effort == "" || strings.ContainsAny(rest, " \t") {
		return policy.Attempt{}, fmt.Errorf("want gemini:<model>@<effort>")
	}
	return policy.Attempt{Kind: policy.KindDescriptor, Provider: policy.Gemini, Model: model, Effort: policy.Effort(effort)}, nil
}

// roundTripReady says whether a checked provider may make its round trip:
// a CLI, a sign-in the probes did not refuse, and no blocking problem
// under the target's api-spend policy (the billing guard under deny, a
// writer-only containment gap does not apply: the round trip is
// read-only). state is "" when it may.
func roundTripReady(d *doctorProvider, t roundTripTarget) (state, reason string) {
	if d.Binary.Path == "" {
		return roundTripSkipped, "no " + string(d.Provider) + " CLI here"
	}
	switch d.SignIn.State {
	case "passed", "signed_in", "no_probe":
	case "signed_out":
		return roundTripSkipped, "not signed in"
	default:
		return roundTripSkipped, "sign-in is " + strings.ReplaceAll(d.SignIn.State, "_", " ")
	}
	for _, pr := range d.blockingFor(t.apiSpend) {
		if pr.Code == problemSignedOut {
			continue
		}
		return roundTripRefused, pr.Message
	}
	return "", ""
}

// roundTrip makes one provider's round trip, or says why not.
func roundTrip(ctx context.Context, c doctorCheck, d *doctorProvider, t roundTripTarget) *doctorRoundTrip {
	rt := &doctorRoundTrip{Descriptor: t.attempt.String(), APISpend: t.apiSpend}
	if rt.State, rt.Reason = roundTripReady(d, t); rt.State != "" {
		return rt
	}
	rt.State = roundTripRan
	dir, err := os.MkdirTemp(roundTripScratchRoot(), "switchyard-round-trip-")
	if err != nil {
		rt.State, rt.Reason = roundTripSkipped, "cannot create a scratch directory: "+err.Error()
		return rt
	}
	defer os.RemoveAll(dir)
	repo := filepath.Join(dir, "checkout")
	prompt := filepath.Join(dir, "prompt.md")
	if err := scratchCheckout(ctx, repo, c.env); err != nil {
		rt.State, rt.Reason = roundTripSkipped, "cannot create a scratch checkout: "+err.Error()
		return rt
	}
	if err := os.WriteFile(prompt, []byte(roundTripPrompt), 0o600); err != nil {
		rt.State, rt.Reason = roundTripSkipped, "cannot write the prompt: "+err.Error()
		return rt
	}
	parent := policy.ParentCodex // a parent other than the provider: its own parent would launch it natively
	if string(d.Provider) == string(parent) {
		parent = policy.ParentClaude
	}
	r, err := runner.New(runner.Config{Env: c.env, Stdout: io.Discard, Stderr: io.Discard})
	if err != nil {
		rt.State, rt.Reason = roundTripSkipped, err.Error()
		return rt
	}
	res, err := r.Run(ctx, runner.Options{
		Parent: parent, Provider: d.Provider, Model: t.attempt.Model, Effort: t.attempt.Effort,
		Mode: policy.ReadOnly, Prompt: prompt, Cwd: repo,
		Output: filepath.Join(dir, "output.md"), Receipt: filepath.Join(dir, "receipt.json"),
		Timeout: roundTripTimeout, APISpend: t.apiSpend,
		AllowUnverifiedContainment: slices.Contains(c.allowUnverified, d.Provider),
	})
	if err != nil {
		rt.State, rt.Reason = roundTripRefused, err.Error()
		return rt
	}
	rc := res.Receipt
	rt.Status, rt.ExitCode, rt.ModelVerified, rt.ElapsedMs, rt.CostUSD = rc.Status, res.ExitCode, rc.ModelVerified, rc.ElapsedMs, rc.CostUSD
	if rc.ReportedModel != nil {
		rt.ReportedModel = *rc.ReportedModel
	}
	if rc.Usage != nil {
		rt.InputTokens, rt.OutputTokens = rc.Usage.InputTokens, rc.Usage.OutputTokens
	}
	if rc.Error != nil && rc.Status != policy.StatusComplete {
		rt.Error = providers.CapText(rc.Error.Message, 300)
	}
	return rt
}

// roundTripScratchRoot is where a round trip's scratch directory goes:
// under the user's cache directory, outside every temporary directory,
// because a read-only Grok lane refuses a checkout under one (the dispatch
// seed: its read-only profile keeps the temporary directories writable).
// "" (the temporary directory) when there is no cache directory.
func roundTripScratchRoot() string {
	cache, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	root := filepath.Join(cache, "switchyard", "round-trips")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return ""
	}
	return root
}

// scratchCheckout makes an empty git checkout for a round trip to run in:
// nothing of the user's repository reaches the model.
func scratchCheckout(ctx context.Context, repo string, env map[string]string) error {
	if err := os.MkdirAll(repo, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(repo, "README.md"), []byte("# round trip\n"), 0o600); err != nil {
		return err
	}
	var genv []string
	for _, k := range []string{"PATH", "HOME"} {
		genv = append(genv, k+"="+env[k])
	}
	genv = append(genv, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=switchyard", "GIT_AUTHOR_EMAIL=doctor@switchyard.invalid",
		"GIT_COMMITTER_NAME=switchyard", "GIT_COMMITTER_EMAIL=doctor@switchyard.invalid")
	for _, args := range [][]string{{"init", "-q"}, {"add", "README.md"}, {"commit", "-qm", "round trip"}} {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir, cmd.Env = repo, genv
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", args[0], err, providers.CapText(string(out), 200))
		}
	}
	return nil
}

// roundTripLine is the human line for a round trip.
func roundTripLine(rt *doctorRoundTrip) string {
	switch rt.State {
	case roundTripSkipped, roundTripRefused:
		return fmt.Sprintf("%s %s: %s", rt.State, rt.Descriptor, printable(rt.Reason))
	}
	s := fmt.Sprintf("%s -> %s (exit %d)", rt.Descriptor, rt.Status, rt.ExitCode)
	if rt.ReportedModel != "" {
		verified := "unverified"
		if rt.ModelVerified {
			verified = "verified"
		}
		s += fmt.Sprintf(", served %s (%s)", printable(rt.ReportedModel), verified)
	}
	if rt.InputTokens != nil || rt.OutputTokens != nil {
		s += fmt.Sprintf(", %s in / %s out tokens", countOrDash(rt.InputTokens), countOrDash(rt.OutputTokens))
	}
	if rt.CostUSD != nil {
		s += fmt.Sprintf(", $%.4f", *rt.CostUSD)
	}
	s += fmt.Sprintf(", %.1fs", float64(rt.ElapsedMs)/1000)
	if rt.Error != "" {
		s += ": " + printable(rt.Error)
	}
	return s
}

func countOrDash(n *int64) string {
	if n == nil {
		return "-"
	}
	return fmt.Sprint(*n)
}

// printable escapes control characters (terminal escape sequences among
// them) in provider text bound for a terminal; JSON output keeps the
// exact text.
func printable(s string) string { return termsafe.String(s) }
