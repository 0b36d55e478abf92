package engine

import (
	"context"
	"fmt"

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
//
// While settle decides its lanes (d.batch set), a launch whose files need
// no git work is not recorded at once: its files are prepared in the
// background and the launch waits in d.batch, so that the lanes one pass
// launches (a panel) prepare their directories and prompt copies side by
// side instead of one after the other on the run's chain. The batch is
// recorded in lane order before anything else is appended (see
// appendEvent), so the log holds the same events in the same order as
// without it.
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
	pl := &pendingLaunch{lane: i, rec: rec, id: id, folded: len(d.envs), done: make(chan struct{})}
	c, run, spec := d.r.Created, d.run, launchSpec{route: dec.Attempt.Route, provider: dec.Attempt.RunsOn(), reviewed: d.reviewed[i]}
	prepare := func() {
		defer close(pl.done)
		pl.paths, pl.base, pl.err = d.e.prepare(ctx, c, run, i, id, dec.PreparedExecution, note, spec)
	}
	if d.batch == nil || (dec.PreparedExecution == nil && c.Access == policy.IsolatedWrite) {
		// A writer's fresh worktree is git work on the checkout: one at a
		// time, on the chain.
		prepare()
		return d.record(ctx, pl)
	}
	sem := d.batch.sem
	sem <- struct{}{}
	go func() {
		defer func() { <-sem }()
		prepare()
	}()
	d.batch.pending = append(d.batch.pending, pl)
	return nil
}

// pendingLaunch is a launch decision whose execution files are being
// prepared (done closes when prepare has returned paths, base and err).
type pendingLaunch struct {
	lane int
	rec  events.Decided
	id   string
	// folded is how many events the fold held when the lane was decided.
	folded int
	done   chan struct{}
	paths  events.Paths
	base   *events.WorktreeBase
	err    error
}

// launchBatch holds the launches of one settle pass whose files are being
// prepared; sem bounds how many are prepared at once.
type launchBatch struct {
	pending []*pendingLaunch
	sem     chan struct{}
}

// maxParallelPrepare is how many executions' files one run prepares at once.
const maxParallelPrepare = 4

// flushLaunches records every pending launch of the batch, in lane order.
// Each lane's decision is taken again on the fold as it is now, with the
// launches before it folded in, and must be the one whose files were
// prepared (the same input digest, hence the same decision): otherwise the
// session fails and reloads, and the prepared directory, never launched,
// is removed with the run's other unlaunched ones. On any failure the
// remaining preparations are waited for and left unlaunched.
//
// Each job is published once its launch is recorded, as always, but not
// awaited there: it is acknowledged while the next launch is appended
// (the jobs one after the other, in lane order), and flushLaunches returns
// once every job it published is acknowledged. A job whose publication
// failed is not marked published, so the next settle (after the session
// reloads on the error) publishes it again under the same id.
func (d *driver) flushLaunches(ctx context.Context) error {
	if d.batch == nil || len(d.batch.pending) == 0 {
		return nil
	}
	pending := d.batch.pending
	d.batch.pending = nil
	var jobs []*jobPublication
	var prev chan struct{}
	var err error
	for k, pl := range pending {
		<-pl.done
		err = pl.err
		if err != nil {
			err = fmt.Errorf("lane %d: prepare execution %s: %w", pl.lane, pl.id, err)
		} else {
			err = d.stillDecided(pl)
		}
		var jp *jobPublication
		if err == nil {
			jp, err = d.recordLaunch(ctx, pl)
		}
		if jp != nil {
			jp.start(ctx, d.e.cfg.Queue, prev)
			prev = jp.done
			jobs = append(jobs, jp)
		}
		if err != nil {
			for _, rest := range pending[k+1:] {
				<-rest.done
			}
			break
		}
	}
	for _, jp := range jobs {
		<-jp.done
		if jp.err != nil {
			if err == nil {
				err = jp.err
			}
			continue
		}
		d.published[jp.job.ExecutionID] = true
	}
	return err
}

// jobPublication is one job published in the background (done closes
// when it is acknowledged or failed, err says which).
type jobPublication struct {
	subject string
	job     events.Job
	done    chan struct{}
	err     error
}

// start publishes the job once after (the previous publication) is done,
// so that jobs reach their stream in the order their launches did.
func (jp *jobPublication) start(ctx context.Context, q events.Queue, after chan struct{}) {
	jp.done = make(chan struct{})
	go func() {
		defer close(jp.done)
		if after != nil {
			<-after
		}
		if err := q.PublishJob(ctx, jp.subject, jp.job); err != nil {
			jp.err = fmt.Errorf("publish job %s on %s: %w", jp.job.ExecutionID, jp.subject, err)
		}
	}()
}

// stillDecided checks that lane pl.lane's decision, taken again now, is the
// one pl was prepared for. A fold that has not moved since the decision
// (the batch's first launch: any other append records the batch first)
// decides the same by construction.
func (d *driver) stillDecided(pl *pendingLaunch) error {
	if len(d.envs) == pl.folded {
		return nil
	}
	st, err := d.r.LaneState(pl.lane)
	if err != nil {
		return err
	}
	_, rec, err := decision(d.r, pl.lane, st)
	if err != nil {
		return err
	}
	if rec.InputDigest != pl.rec.InputDigest || rec.SheetDigest != pl.rec.SheetDigest {
		return fmt.Errorf("lane %d: the decision changed while execution %s was prepared (input digest %s, now %s)",
			pl.lane, pl.id, pl.rec.InputDigest, rec.InputDigest)
	}
	return nil
}

// record records pl, prepared on the chain, and publishes its job; or
// returns its preparation's error.
func (d *driver) record(ctx context.Context, pl *pendingLaunch) error {
	if pl.err != nil {
		return fmt.Errorf("lane %d: prepare execution %s: %w", pl.lane, pl.id, pl.err)
	}
	jp, err := d.recordLaunch(ctx, pl)
	if err != nil || jp == nil {
		return err
	}
	return d.publish(ctx, pl.lane)
}

// recordLaunch appends pl's launch (or continue) event with its prepared
// paths and returns the job to publish for it (nil: none, a strict native
// lane that settle ends unpublished).
func (d *driver) recordLaunch(ctx context.Context, pl *pendingLaunch) (*jobPublication, error) {
	i, rec, id := pl.lane, pl.rec, pl.id
	dec := rec.Decision
	ap := *dec.Attempt
	subject := events.JobSubject(string(ap.Attempt.Provider))
	if ap.Route == policy.RouteNative {
		subject = events.NativeJobSubject(string(d.r.Created.Parent))
	}
	ev := events.Launch{
		Decision: dec, InputDigest: rec.InputDigest, SheetDigest: rec.SheetDigest,
		ExecutionID: id, AttemptIndex: *dec.AttemptIndex, Descriptor: ap.Descriptor,
		Route: ap.Route, JobSubject: subject, Paths: pl.paths, WorktreeBase: pl.base,
	}
	if ap.Route != policy.RouteNative {
		if spec, err := providers.Lookup(ap.Attempt.Provider); err == nil {
			c := d.e.cfg.Containment(spec, d.r.Created.Access)
			ev.Containment = &c
		}
	}
	var p events.Payload = ev
	if dec.Kind == policy.DecideContinue {
		p = events.Continue(ev)
	}
	if err := d.appendEvent(ctx, i, p); err != nil {
		return nil, err
	}
	d.log.Info("launch", "lane", i, "execution", id, "descriptor", ap.Descriptor, "route", ap.Route)
	l := d.r.Lanes[i]
	if d.unsupported(l) {
		return nil, nil // settle ends it, never published
	}
	job, err := jobOf(d.r, l)
	if err != nil {
		return nil, err
	}
	return &jobPublication{subject: l.Dispatch.JobSubject, job: job}, nil
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

// jobOf builds the job of lane l's dispatch from the frozen run inputs
// (events.JobOf, which workers check jobs against); the same log always
// gives the same job.
func jobOf(r *machines.Run, l machines.LaneRecord) (events.Job, error) {
	if l.Dispatch == nil {
		return events.Job{}, fmt.Errorf("lane %d has no dispatch", l.Index)
	}
	return events.JobOf(r.ID, l.Index, *r.Created, *l.Dispatch, providers.UnsetStallTimeoutMs)
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
