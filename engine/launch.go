package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// launch records a launch or continue decision for lane i and publishes its
// job. The execution's files and, for a writer, its fresh worktree are
// prepared first (their paths are part of the event); the event is appended
// next; only a recorded execution is ever published. A crash between the
// append and the publication is repaired by the next session, which
// publishes every launching execution again under the same id.
func (d *driver) launch(ctx context.Context, i int, rec events.Decided) error {
	dec := rec.Decision
	if dec.AttemptIndex == nil || dec.Attempt == nil {
		return fmt.Errorf("lane %d: %s decision without an attempt", i, dec.Kind)
	}
	id := d.e.cfg.NewID()
	if dec.Kind == policy.DecideContinue {
		if dec.PreparedExecution == nil {
			return fmt.Errorf("lane %d: continue decision without a prepared execution", i)
		}
		id = dec.PreparedExecution.ID
	}
	if err := events.ValidateExecutionID(id); err != nil {
		return fmt.Errorf("lane %d: execution id: %w", i, err)
	}
	note := ""
	if dec.Kind == policy.DecideContinue {
		note = continuationNote(d.r.Lanes[i].History)
	}
	ap := *dec.Attempt
	paths, base, err := d.e.prepare(ctx, d.r.Created, d.run, i, id, dec.PreparedExecution, note, launchSpec{route: ap.Route, provider: attemptProvider(ap), reviewed: d.reviewed[i]})
	if err != nil {
		return fmt.Errorf("lane %d: prepare execution %s: %w", i, id, err)
	}
	subject := events.JobSubject(string(ap.Attempt.Provider))
	if ap.Route == policy.RouteNative {
		subject = events.NativeJobSubject(string(d.r.Created.Parent))
	}
	ev := events.Launch{
		Decision: dec, InputDigest: rec.InputDigest, SheetDigest: rec.SheetDigest,
		ExecutionID: id, AttemptIndex: *dec.AttemptIndex, Descriptor: ap.Descriptor,
		Route: ap.Route, JobSubject: subject, Paths: paths, WorktreeBase: base,
	}
	var p events.Payload = ev
	if dec.Kind == policy.DecideContinue {
		p = events.Continue(ev)
	}
	if err := d.appendEvent(ctx, i, p); err != nil {
		return err
	}
	d.log.Info("launch", "lane", i, "execution", id, "descriptor", ap.Descriptor, "route", ap.Route)
	if d.unsupported(d.r.Lanes[i]) {
		return nil // settle ends it, never published
	}
	return d.publish(ctx, i)
}

// unsupported says whether lane l's launching execution must never be
// published: a native attempt under the strict contract. No native route
// proves the strict boundary (the seed: a strict request returns
// unsupported and ends the assignment without trying another provider), so
// settle finishes it failed, unstarted and unsupported, and no parent ever
// sees its job.
func (d *driver) unsupported(l machines.LaneRecord) bool {
	return l.State == machines.StateLaunching && l.Dispatch.Route == policy.RouteNative &&
		d.r.Created.Options.Contract == policy.ContractStrict
}

// publish publishes lane i's dispatched execution as a job, with message id
// = execution id.
func (d *driver) publish(ctx context.Context, i int) error {
	l := d.r.Lanes[i]
	job, err := jobOf(d.r, l)
	if err != nil {
		return err
	}
	if err := d.e.cfg.Queue.PublishJob(ctx, l.Dispatch.JobSubject, job); err != nil {
		return fmt.Errorf("publish job %s on %s: %w", job.ExecutionID, l.Dispatch.JobSubject, err)
	}
	d.published[job.ExecutionID] = true
	return nil
}

// jobOf builds the job of lane l's dispatch from the frozen run inputs; the
// same log always gives the same job.
func jobOf(r *machines.Run, l machines.LaneRecord) (events.Job, error) {
	disp := l.Dispatch
	if disp == nil {
		return events.Job{}, fmt.Errorf("lane %d has no dispatch", l.Index)
	}
	ap := l.Policy.Attempts[disp.AttemptIndex]
	provider := attemptProvider(ap)
	c := r.Created
	return events.Job{
		ExecutionID: disp.ExecutionID, Run: r.ID, Lane: l.Index, AttemptIndex: disp.AttemptIndex,
		Descriptor: disp.Descriptor, Provider: provider, Model: ap.Attempt.Model, Effort: ap.Attempt.Effort,
		Mode: c.Access, APISpend: ap.APISpend, Contract: c.Options.Contract, Parent: c.Parent,
		Route: disp.Route, Paths: disp.Paths, TimeoutMs: c.Options.TimeoutMs,
		StallTimeoutMs:             effectiveStallTimeoutMs(c.Options, provider),
		AllowUnverifiedContainment: slices.Contains(c.Options.AllowUnverifiedContainment, provider),
		OpenCodeChatGPTSubscription: c.Options.OpenCodeChatGPTSubscription &&
			events.ChatGPTSubscriptionAttempt(provider, ap.Attempt.Model, ap.Attempt.Effort, ap.APISpend),
	}, nil
}

// effectiveStallTimeoutMs is the response-stall timeout of an attempt of
// provider under the run's options: the provider's override, else the
// run's, else events.DefaultStallTimeoutMs (a zero resolves to the
// default). The job always carries the effective value, never 0, so the
// worker applies exactly what the run recorded.
func effectiveStallTimeoutMs(o events.RunOptions, provider policy.Provider) int64 {
	ms := o.StallTimeoutMs
	if v, ok := o.ProviderStallTimeoutMs[provider]; ok {
		ms = v
	}
	if ms <= 0 || ms > events.MaxStallTimeoutMs {
		// Unset (or, past run-created's validation, impossible): the
		// provider's default, which is longer for a CLI that prints
		// nothing until its final answer (providers.SilentUntilDone).
		if providers.SilentUntilDone(provider) {
			return providers.SilentStallTimeoutMs
		}
		return events.DefaultStallTimeoutMs
	}
	return ms
}

// strictNativeUnsupported is the capability a strict-contract native lane
// lacks.
const strictNativeUnsupported = "unsupported-capability: the strict worker contract has no native route (no native route proves the strict boundary); the lane ends without being handed out and without trying another provider"

// unsupportedFinish ends lane l's native strict-contract execution before
// it is handed out.
func unsupportedFinish(l machines.LaneRecord) events.Finish {
	notStarted := false
	return events.Finish{ExecutionID: l.Dispatch.ExecutionID, Unsupported: strictNativeUnsupported,
		Event: policy.Event{AttemptIndex: l.Dispatch.AttemptIndex, Status: policy.OutcomeFailed, ProcessStarted: &notStarted}}
}

// attemptProvider is the provider that runs ap: its descriptor's, or for a
// parent alias the parent's own group.
func attemptProvider(ap policy.AttemptPolicy) policy.Provider {
	if ap.Attempt.Provider == "" {
		return ap.ExhaustionGroup
	}
	return ap.Attempt.Provider
}
