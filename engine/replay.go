package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// ReplayResult is what Replay found.
type ReplayResult struct {
	Run string `json:"run"`
	// Verified is true when every recomputed value equals the recorded
	// one and the log folds.
	Verified bool `json:"verified"`
	// Events counts the envelopes replayed (up to the divergence).
	Events int `json:"events"`
	// Decisions counts the decision events recomputed (launch, continue,
	// inspect, request-operation, complete, stop, exclude).
	Decisions int `json:"decisions"`
	// Normalizations counts the finish events whose outcome was recomputed
	// from their recorded receipt or host metadata.
	Normalizations int `json:"normalizations"`
	// Exclusions counts the exclude events whose verdict was recomputed
	// from their recorded capacity report (each also counts as a
	// decision: the launch it kept from happening).
	Exclusions int `json:"exclusions,omitempty"`
	// Divergence is the first difference, when not Verified.
	Divergence *Divergence `json:"divergence,omitempty"`
}

// Divergence is the first recorded value that replay does not reproduce.
type Divergence struct {
	Seq  uint64      `json:"seq"`
	Type events.Type `json:"type"`
	Lane int         `json:"lane"` // events.RunLane for run-level events.
	// Field is what differs.
	Field DivergenceField `json:"field"`
	// Expected is what replay computed from the recorded inputs; Actual is
	// what the log records. Both are JSON (or an error text).
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
}

// DivergenceField names what differs in a Divergence.
type DivergenceField string

// Divergence fields.
const (
	// FieldLanes: run-created's lanes differ from the frozen sheet
	// resolved again.
	FieldLanes DivergenceField = "lanes"
	// FieldType: the event type differs from the one the recomputed
	// decision is recorded as (complete versus stop, …).
	FieldType DivergenceField = "type"
	// FieldDecision: the recorded policy.Decision differs from
	// policy.Next's.
	FieldDecision DivergenceField = "decision"
	// FieldInputDigest: the recorded policy-input digest differs from the
	// digest of the lane policy and state the log folds to.
	FieldInputDigest DivergenceField = "inputDigest"
	// FieldSheetDigest: the decision names another sheet than run-created.
	FieldSheetDigest DivergenceField = "sheetDigest"
	// FieldEvent: a finish's lane-state event differs from its receipt or
	// host metadata normalized again.
	FieldEvent DivergenceField = "event"
	// FieldLog: the envelope does not fold (machines refused it).
	FieldLog DivergenceField = "log"
	// FieldExcludedAttempt: an exclude names another attempt, descriptor
	// or provider group than the launch policy.Next decides at that point
	// (or the decision there is no gated launch at all).
	FieldExcludedAttempt DivergenceField = "excludedAttempt"
	// FieldExclusionRule: an exclude's rule is not the one the lane's
	// fallback applies to its code (policy.ExclusionRuleOf).
	FieldExclusionRule DivergenceField = "exclusionRule"
	// FieldReportDigest: an exclude's report digest differs from the
	// digest of the report it records.
	FieldReportDigest DivergenceField = "reportDigest"
	// FieldVerdict: an exclude's verdict differs from
	// policy.EvaluateEligibility over its recorded report, evaluation time
	// and the run's overrides, or is no exclusion at all.
	FieldVerdict DivergenceField = "verdict"
	// FieldWorktreeBase: a writer launch's worktree base is not the
	// reviewed state the lane's clear verdict named (or names a reviewed
	// state where no verdict named one).
	FieldWorktreeBase DivergenceField = "worktreeBase"
)

// Text renders the result for people.
func (r ReplayResult) Text() string {
	if r.Verified {
		excl := ""
		if r.Exclusions > 0 {
			excl = " (" + plural(r.Exclusions, "exclusion") + " among them)"
		}
		return fmt.Sprintf("run %s: verified: %s, %s%s and %s recomputed, no divergence\n", r.Run,
			plural(r.Events, "event"), plural(r.Decisions, "decision"), excl, plural(r.Normalizations, "outcome"))
	}
	d := r.Divergence
	lane := fmt.Sprintf("lane %d", d.Lane)
	if d.Lane == events.RunLane {
		lane = "run"
	}
	return fmt.Sprintf("run %s: DIVERGED at seq %d (%s, %s), field %s\n  expected: %s\n  actual:   %s\n",
		r.Run, d.Seq, d.Type, lane, d.Field, d.Expected, d.Actual)
}

// Replay recomputes every decision of run from the inputs its log records
// and reports the first divergence. It reads only store:
//
//   - run-created: the frozen sheet is parsed and the role resolved again
//     with opt; the lanes must equal the recorded ones;
//   - each decision event: the log is folded up to it, the lane's
//     policy.LaneState rebuilt, and InputDigest, the sheet digest,
//     policy.Next(lane, state, nil) and the event type that decision maps
//     to must equal the recorded ones (the engine decides with nil file
//     facts, so this is exact);
//   - each exclude: the decision at that point must be a gated launch of
//     the excluded attempt (same input and sheet digests, descriptor and
//     provider group); the report digest must be the recorded report's;
//     and policy.EvaluateEligibility over the recorded report, source and
//     evaluation time, with the run's unknown-quota overrides and the
//     default maximum report age, must give the recorded verdict, which
//     must exclude; and its rule, when it records one, must be the one the
//     lane's fallback applies to the code (policy.ExclusionRuleOf);
//   - each finish: the recorded receipt is normalized again (or the host
//     metadata, or the abandoned rule, applied again) and must give the
//     recorded lane-state event;
//   - each writer launch's worktree base: the reviewed state the lane's
//     clear verdict named since its previous launch, else the checkout's
//     HEAD;
//   - every envelope must fold (machines.Run.Apply).
func Replay(ctx context.Context, store events.Store, run string, opt policy.Options) (ReplayResult, error) {
	if opt.Catalog == nil {
		opt = policy.DefaultOptions()
	}
	res := ReplayResult{Run: run}
	if err := events.ValidateRunID(run); err != nil {
		return res, fmt.Errorf("%w: %v", ErrUnknownRun, err)
	}
	envs, err := store.LoadRun(ctx, run)
	if err != nil {
		return res, fmt.Errorf("load run %s: %w", run, err)
	}
	if len(envs) == 0 {
		return res, fmt.Errorf("run %s: %w", run, ErrUnknownRun)
	}
	r := &machines.Run{}
	reviewed := map[int]*events.Verdict{} // each lane's clear verdict since its latest launch
	for _, env := range envs {
		d := replayOne(r, env, opt, &res)
		if l, ok := env.Payload.(events.Launch); ok && d == nil {
			d = replayBase(reviewed[env.Lane], l)
		}
		switch p := env.Payload.(type) {
		case events.Launch, events.Continue:
			delete(reviewed, env.Lane)
		case events.Verdict:
			if p.State == events.VerdictClear {
				reviewed[env.Lane] = &p
			}
		}
		if d != nil {
			d.Seq, d.Type, d.Lane = env.Seq, env.Type, env.Lane
			res.Divergence = d
			return res, nil
		}
		if err := r.Apply(env); err != nil {
			res.Divergence = &Divergence{Seq: env.Seq, Type: env.Type, Lane: env.Lane, Field: FieldLog, Expected: "an envelope the run's machines accept", Actual: err.Error()}
			return res, nil
		}
		res.Events++
	}
	res.Verified = true
	return res, nil
}

// replayOne checks env against the run folded up to it.
func replayOne(r *machines.Run, env events.Envelope, opt policy.Options, res *ReplayResult) *Divergence {
	switch p := env.Payload.(type) {
	case events.RunCreated:
		return replayCreated(p, opt)
	case events.Launch:
		return replayDecision(r, env, events.Decided{Decision: p.Decision, InputDigest: p.InputDigest, SheetDigest: p.SheetDigest}, res)
	case events.Continue:
		return replayDecision(r, env, events.Decided{Decision: p.Decision, InputDigest: p.InputDigest, SheetDigest: p.SheetDigest}, res)
	case events.Inspect:
		return replayDecision(r, env, events.Decided(p), res)
	case events.RequestOperation:
		return replayDecision(r, env, events.Decided(p), res)
	case events.Complete:
		return replayDecision(r, env, events.Decided(p), res)
	case events.Stop:
		return replayDecision(r, env, events.Decided(p), res)
	case events.Finish:
		res.Normalizations++
		return replayFinish(r, env, p)
	case events.Exclude:
		res.Exclusions++
		return replayExclude(r, env, p, res)
	}
	return nil
}

// replayExclude recomputes an exclusion: the launch it kept from happening
// and the verdict that kept it.
func replayExclude(r *machines.Run, env events.Envelope, p events.Exclude, res *ReplayResult) *Divergence {
	res.Decisions++
	if r.Created == nil || env.Lane < 0 || env.Lane >= len(r.Lanes) {
		return nil // the fold reports it
	}
	dec, div := recomputeDecision(r, env.Lane, p.InputDigest, p.SheetDigest)
	if div != nil {
		return div
	}
	actual := jsonText(struct {
		AttemptIndex int             `json:"attemptIndex"`
		Descriptor   string          `json:"descriptor"`
		Provider     policy.Provider `json:"provider"`
	}{p.AttemptIndex, p.Descriptor, p.Provider})
	if !gated(dec) {
		return &Divergence{Field: FieldExcludedAttempt, Expected: "a gated launch, not " + jsonText(dec), Actual: actual}
	}
	ap := dec.Attempt
	expected := jsonText(struct {
		AttemptIndex int             `json:"attemptIndex"`
		Descriptor   string          `json:"descriptor"`
		Provider     policy.Provider `json:"provider"`
	}{*dec.AttemptIndex, ap.Descriptor, ap.ExhaustionGroup})
	if expected != actual {
		return &Divergence{Field: FieldExcludedAttempt, Expected: expected, Actual: actual}
	}
	digest, err := CapacityReportDigest(p.Report)
	if err != nil {
		digest = "error: " + err.Error()
	}
	if digest != p.ReportDigest {
		return &Divergence{Field: FieldReportDigest, Expected: digest, Actual: p.ReportDigest}
	}
	v := policy.EvaluateEligibility(policy.EligibilityInput{
		Provider: p.Provider, Source: p.Source, Report: p.Report, Now: p.EvaluatedAt,
		MaxAge:                     time.Duration(p.MaxAgeMs) * time.Millisecond,
		AllowUnknown:               slices.Contains(r.Created.Options.AllowUnknownQuota, p.Provider),
		Unhealthy:                  slices.Contains(r.Unhealthy, p.Provider),
		SignedOut:                  slices.Contains(r.SignedOut, p.Provider),
		Containment:                p.Containment,
		AllowUnverifiedContainment: slices.Contains(r.Created.Options.AllowUnverifiedContainment, ap.RunsOn()),
	})
	if e, a := jsonText(v), jsonText(p.Verdict); e != a {
		return &Divergence{Field: FieldVerdict, Expected: e, Actual: a}
	}
	if v.Eligible {
		return &Divergence{Field: FieldVerdict, Expected: "an exclusion", Actual: "an eligible verdict recorded as an exclusion: " + jsonText(p.Verdict)}
	}
	// The rule the lane's fallback applies; a log recorded before the rule
	// existed carries none, and its lane moved on as it then did.
	if p.Rule != policy.ExclusionRuleLegacy {
		if want := policy.ExclusionRuleOf(r.Lanes[env.Lane].Policy.Fallback, v.Code); want != p.Rule {
			return &Divergence{Field: FieldExclusionRule, Expected: string(want), Actual: string(p.Rule)}
		}
	}
	return nil
}

func replayCreated(p events.RunCreated, opt policy.Options) *Divergence {
	sheet, err := policy.ParseSheet(p.Sheet, opt)
	if err != nil {
		return &Divergence{Field: FieldLanes, Expected: "sheet error: " + err.Error(), Actual: jsonText(p.Lanes)}
	}
	rp, err := policy.Resolve(sheet, p.Role, p.Parent, opt)
	if err != nil {
		return &Divergence{Field: FieldLanes, Expected: "resolve error: " + err.Error(), Actual: jsonText(p.Lanes)}
	}
	if e, a, differ := diffJSON(rp.Lanes, p.Lanes, events.SameLanePolicies(rp.Lanes, p.Lanes)); differ {
		return &Divergence{Field: FieldLanes, Expected: e, Actual: a}
	}
	return nil
}

// recomputeDecision recomputes lane's decision at this point of the fold
// and compares the digests a recorded decision (or exclusion) carries.
func recomputeDecision(r *machines.Run, lane int, inputDigest, sheetDigest string) (policy.Decision, *Divergence) {
	st, err := r.LaneState(lane)
	if err != nil {
		return policy.Decision{}, &Divergence{Field: FieldLog, Expected: "a lane state", Actual: err.Error()}
	}
	dec, want, err := decision(r, lane, st)
	if err != nil {
		return dec, &Divergence{Field: FieldInputDigest, Expected: err.Error(), Actual: inputDigest}
	}
	switch {
	case want.SheetDigest != sheetDigest:
		return dec, &Divergence{Field: FieldSheetDigest, Expected: want.SheetDigest, Actual: sheetDigest}
	case want.InputDigest != inputDigest:
		return dec, &Divergence{Field: FieldInputDigest, Expected: want.InputDigest, Actual: inputDigest}
	}
	return dec, nil
}

func replayDecision(r *machines.Run, env events.Envelope, got events.Decided, res *ReplayResult) *Divergence {
	res.Decisions++
	if r.Created == nil || env.Lane < 0 || env.Lane >= len(r.Lanes) {
		return nil // the fold reports it
	}
	dec, div := recomputeDecision(r, env.Lane, got.InputDigest, got.SheetDigest)
	if div != nil {
		return div
	}
	if e, a, differ := diffJSON(dec, got.Decision, events.SameDecision(&dec, &got.Decision)); differ {
		return &Divergence{Field: FieldDecision, Expected: e, Actual: a}
	}
	if t := typeOfDecision(dec); t != env.Type {
		return &Divergence{Field: FieldType, Expected: string(t), Actual: string(env.Type)}
	}
	return nil
}

// typeOfDecision is the event type the engine records a decision as.
func typeOfDecision(d policy.Decision) events.Type {
	switch d.Kind {
	case policy.DecideLaunch:
		return events.TypeLaunch
	case policy.DecideContinue:
		return events.TypeContinue
	case policy.DecideInspect:
		return events.TypeInspect
	case policy.DecideParentOperation:
		return events.TypeRequestOperation
	case policy.DecideStop:
		if d.Reason == string(policy.StopComplete) {
			return events.TypeComplete
		}
		return events.TypeStop
	case policy.DecidePolicyDenied:
		return events.TypeStop
	}
	return ""
}

// replayBase checks a launch's worktree base against v, the lane's clear
// verdict since its previous launch (nil: none): a verdict that named a
// reviewed state must be the base, and only such a verdict can be.
func replayBase(v *events.Verdict, l events.Launch) *Divergence {
	if l.WorktreeBase == nil {
		return nil
	}
	actual := jsonText(l.WorktreeBase)
	if v != nil && v.FromCommit != "" {
		want := events.WorktreeBase{Source: events.BaseReviewed, Ref: v.FromRef, Commit: v.FromCommit}
		if e := jsonText(want); e != actual {
			return &Divergence{Field: FieldWorktreeBase, Expected: e, Actual: actual}
		}
		return nil
	}
	if l.WorktreeBase.Source != events.BaseCheckoutHead {
		return &Divergence{Field: FieldWorktreeBase, Expected: "the checkout's HEAD: no clear verdict named a reviewed state", Actual: actual}
	}
	return nil
}

// replayFinish recomputes a finish's lane-state event the way the engine
// derived it.
func replayFinish(r *machines.Run, env events.Envelope, p events.Finish) *Divergence {
	if r.Created == nil || env.Lane < 0 || env.Lane >= len(r.Lanes) || r.Lanes[env.Lane].Dispatch == nil {
		return nil // the fold reports it
	}
	l := r.Lanes[env.Lane]
	idx := l.Dispatch.AttemptIndex
	var want policy.Event
	switch {
	case p.Malformed != "":
		// The engine's re-check refused a delivered receipt (it read the
		// output file, which the log does not hold): failed, unknown start.
		want = malformedEvent(idx)
	case p.Receipt != nil:
		// Exactly what Normalize gives for the receipt's encoding (what
		// replay computed before), without encoding the receipt and
		// strictly decoding it again.
		c := r.Created
		var err error
		want, err = policy.NormalizeReceipt(policy.NormalizeInput{
			Parent: c.Parent, Attempt: l.Policy.Attempts[idx], AttemptIndex: idx,
			Mode: c.Access, Contract: c.Options.Contract, ReceiptPath: l.Dispatch.Paths.Receipt,
		}, p.Receipt)
		var ee *policy.ReceiptEncodeError
		if errors.As(err, &ee) {
			return &Divergence{Field: FieldEvent, Expected: ee.Error(), Actual: jsonText(p.Event)}
		}
		if err != nil { // the engine records an unusable receipt as failed
			want = policy.Event{AttemptIndex: idx, Status: policy.OutcomeFailed}
		}
	case p.Host != nil:
		want = policy.Event{AttemptIndex: idx, Status: p.Host.Status, ProcessStarted: p.Host.ProcessStarted}
	case p.Unsupported != "":
		if l.Dispatch.Route != policy.RouteNative || r.Created.Options.Contract != policy.ContractStrict {
			return &Divergence{Field: FieldEvent, Expected: "an unsupported finish only for a strict-contract native lane", Actual: jsonText(p)}
		}
		want = unsupportedFinish(l).Event
	default:
		want = policy.Event{AttemptIndex: idx, Status: policy.OutcomeFailed}
	}
	if e, a, differ := diffJSON(want, p.Event, events.SameEvent(&want, &p.Event)); differ {
		return &Divergence{Field: FieldEvent, Expected: e, Actual: a}
	}
	return nil
}

// diffJSON compares want and got as jsonText does, and returns both texts
// when they differ. same is the events package's generated deep
// comparison of the two (events.SameDecision and its kin), which calls
// values the same only when they encode alike: then neither is encoded.
// Values it calls different are still compared as text, because
// distinct values can encode alike (nil and empty under omitempty,
// strings with different invalid UTF-8).
func diffJSON[T policy.Decision | policy.Event | []policy.LanePolicy](want, got T, same bool) (expected, actual string, differ bool) {
	if same {
		return "", "", false
	}
	expected, actual = jsonText(want), jsonText(got)
	return expected, actual, expected != actual
}

// jsonText is v's compact JSON, for comparison and display.
func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "error: " + err.Error()
	}
	return strings.TrimSpace(b.String())
}
