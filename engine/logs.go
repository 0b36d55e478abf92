package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// LogKind is the kind of a LogEntry.
type LogKind string

// The kinds of log entries, in the order an attempt produces them.
const (
	// LogLaunch: an attempt was launched (its launch or continue event).
	LogLaunch LogKind = "launch"
	// LogClaim: a worker claimed the attempt and runs it.
	LogClaim LogKind = "claim"
	// LogProgress: the runner wrote a new progress snapshot (Progress).
	LogProgress LogKind = "progress"
	// LogFinish: the attempt's outcome was recorded (its finish event).
	LogFinish LogKind = "finish"
	// LogOutput: the attempt's output file, capped at MaxLogOutputBytes.
	LogOutput LogKind = "output"
	// LogLaneFinal: the lane became final (complete, stopped or
	// cancelled).
	LogLaneFinal LogKind = "lane-final"
)

// MaxLogOutputBytes caps the output a LogOutput entry carries; the rest
// stays in the file (OutputPath).
const MaxLogOutputBytes = 256 << 10

// LogEntry is one thing recorded about a run's attempts: a launch, a
// claim, a progress snapshot, a finish with its capped diagnostic, the
// attempt's output, or a lane becoming final. It never carries a raw
// provider stream, an argv or an environment value.
type LogEntry struct {
	Kind LogKind   `json:"kind"`
	Run  string    `json:"run"`
	Lane int       `json:"lane"`
	Time time.Time `json:"time"`
	// Seq is the event's stream sequence (launch, claim, finish,
	// lane-final).
	Seq uint64 `json:"seq,omitempty"`
	// Attempt, Descriptor, Provider, Route and ExecutionID name the
	// attempt (every kind but lane-final).
	Attempt     int             `json:"attempt"`
	Descriptor  string          `json:"descriptor,omitempty"`
	Provider    policy.Provider `json:"provider,omitempty"`
	Route       policy.Route    `json:"route,omitempty"`
	ExecutionID string          `json:"executionId,omitempty"`
	// WorkerID is the claiming worker (claim, finish).
	WorkerID string `json:"workerId,omitempty"`
	// Progress is the snapshot (progress).
	Progress *runner.Progress `json:"progress,omitempty"`
	// Outcome is the normalized outcome and Cause the observed cause as
	// the run report words it; Took is how long the attempt ran, from
	// its launch (finish).
	Outcome policy.Outcome `json:"outcome,omitempty"`
	Cause   string         `json:"cause,omitempty"`
	TookMs  int64          `json:"tookMs,omitempty"`
	// Error is the receipt's diagnosis: its message and the capped
	// failure evidence (at most 4000 characters) (finish).
	Error *policy.ReceiptError `json:"error,omitempty"`
	// Output is the output file's text (output), cut at
	// MaxLogOutputBytes (OutputTruncated); OutputBytes is the file's
	// size. OutputPath is where it is.
	Output          string `json:"output,omitempty"`
	OutputBytes     int64  `json:"outputBytes,omitempty"`
	OutputTruncated bool   `json:"outputTruncated,omitempty"`
	OutputPath      string `json:"outputPath,omitempty"`
	// Note says why a file is not shown: not written (an attempt that
	// never started writes none), outside the data directory, not a
	// regular file (output, progress).
	Note string `json:"note,omitempty"`
	// State and Reason: the lane's final state and why (lane-final).
	State  machines.State `json:"state,omitempty"`
	Reason string         `json:"reason,omitempty"`
}

// LogOptions select what Logs prints.
type LogOptions struct {
	// Lane is the lane to show (events.RunLane: every lane).
	Lane int
	// Follow keeps printing what is recorded until every selected lane
	// is final (or ctx ends); without it Logs prints what is recorded now.
	Follow bool
	// Poll is how often a followed attempt's progress file is read
	// (default 500ms).
	Poll time.Duration
}

// Logs calls emit with what is recorded of run's attempts, in log order:
// per attempt its launch, claim, progress snapshot, finish (with the
// receipt's capped diagnostic) and output, and each lane's end. With
// Follow it goes on with what is recorded later (new events, each newer
// progress snapshot of a running attempt) until every selected lane is
// final, then returns nil; it returns ctx's error once ctx ends. The
// progress and output files are read from the paths the launch recorded,
// only under the data directory, never through a symlink. ErrUnknownRun
// if the run has no events; ErrUnknownLane for a lane it does not have.
func (e *Engine) Logs(ctx context.Context, run string, o LogOptions, emit func(LogEntry) error) error {
	if err := events.ValidateRunID(run); err != nil {
		return fmt.Errorf("%w: %v", ErrUnknownRun, err)
	}
	envs, err := e.cfg.Store.LoadRun(ctx, run)
	if err != nil {
		return fmt.Errorf("load run %s: %w", run, err)
	}
	if len(envs) == 0 {
		return fmt.Errorf("run %s: %w", run, ErrUnknownRun)
	}
	if c, ok := envs[0].Payload.(events.RunCreated); ok && o.Lane != events.RunLane && (o.Lane < 0 || o.Lane >= len(c.Lanes)) {
		return fmt.Errorf("run %s lane %d: %w", run, o.Lane, ErrUnknownLane)
	}
	l := &logFollower{e: e, run: run, o: o, emit: emit, r: &machines.Run{}, live: map[string]*liveAttempt{}}
	if !o.Follow {
		for _, env := range envs {
			if _, err := l.event(env); err != nil {
				return err
			}
		}
		return l.poll()
	}
	poll := cmpOr(o.Poll, 500*time.Millisecond)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := make(chan events.Envelope)
	watched := make(chan error, 1)
	go func() {
		watched <- e.followRun(ctx, run, func(env events.Envelope) (bool, error) {
			select {
			case got <- env:
				return false, nil
			case <-ctx.Done():
				return false, ctx.Err()
			}
		})
	}()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case env := <-got:
			done, err := l.event(env)
			if err != nil || done {
				return err
			}
		case <-tick.C:
			if err := l.poll(); err != nil {
				return err
			}
		case err := <-watched:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// cmpOr is d, or def when d is not positive.
func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// logFollower folds a run's events into log entries.
type logFollower struct {
	e    *Engine
	run  string
	o    LogOptions
	emit func(LogEntry) error
	r    *machines.Run
	// live are the launched attempts without a finish, by execution id.
	live  map[string]*liveAttempt
	order []string // live's keys in launch order
}

// liveAttempt is a launched attempt not finished yet.
type liveAttempt struct {
	head    LogEntry // the launch entry: names the attempt
	paths   events.Paths
	lastSeq int64 // the last progress snapshot emitted (0: none)
}

// selected says whether lane is shown.
func (l *logFollower) selected(lane int) bool { return l.o.Lane == events.RunLane || l.o.Lane == lane }

// event folds env and emits what it records; done once every selected
// lane is final.
func (l *logFollower) event(env events.Envelope) (bool, error) {
	wasFinal := make([]bool, len(l.r.Lanes))
	for i, lane := range l.r.Lanes {
		wasFinal[i] = lane.State.Final()
	}
	if err := l.r.Apply(env); err != nil {
		return false, fmt.Errorf("run %s: %w: %w", l.run, ErrInconsistentLog, err)
	}
	if env.Lane >= 0 && env.Lane < len(l.r.Lanes) && l.selected(env.Lane) {
		if err := l.laneEvent(env); err != nil {
			return false, err
		}
	}
	// A lane's own event or a run-level one (a run cancel) may end lanes.
	for i, lane := range l.r.Lanes {
		if l.selected(i) && lane.State.Final() && (i >= len(wasFinal) || !wasFinal[i]) {
			if err := l.laneFinal(env, i); err != nil {
				return false, err
			}
		}
	}
	if len(l.r.Lanes) == 0 {
		return false, nil
	}
	for i, lane := range l.r.Lanes {
		if l.selected(i) && !lane.State.Final() {
			return false, nil
		}
	}
	return true, nil
}

func (l *logFollower) laneEvent(env events.Envelope) error {
	lane := l.r.Lanes[env.Lane]
	switch p := env.Payload.(type) {
	case events.Launch:
		return l.launched(env, p, lane)
	case events.Continue:
		return l.launched(env, events.Launch(p), lane)
	case events.Claim:
		if a := l.live[p.ExecutionID]; a != nil {
			ent := a.head
			ent.Kind, ent.Time, ent.Seq, ent.WorkerID = LogClaim, env.Time, env.Seq, p.WorkerID
			a.head.WorkerID = p.WorkerID
			if err := l.emit(ent); err != nil {
				return err
			}
		}
	case events.Finish:
		return l.finished(env, p)
	}
	return nil
}

func (l *logFollower) launched(env events.Envelope, p events.Launch, lane machines.LaneRecord) error {
	ent := LogEntry{Kind: LogLaunch, Run: l.run, Lane: env.Lane, Time: env.Time, Seq: env.Seq, Attempt: p.AttemptIndex,
		Descriptor: p.Descriptor, Route: p.Route, ExecutionID: p.ExecutionID}
	if p.AttemptIndex >= 0 && p.AttemptIndex < len(lane.Policy.Attempts) {
		ent.Provider = lane.Policy.Attempts[p.AttemptIndex].RunsOn()
	}
	if _, ok := l.live[p.ExecutionID]; !ok {
		l.order = append(l.order, p.ExecutionID)
	}
	l.live[p.ExecutionID] = &liveAttempt{head: ent, paths: p.Paths}
	return l.emit(ent)
}

// finished emits the attempt's last progress snapshot (when newer than
// the last shown), its finish and its output.
func (l *logFollower) finished(env events.Envelope, p events.Finish) error {
	a := l.live[p.ExecutionID]
	if a == nil {
		return nil // a finish of an execution this log never launched (an audit-only path)
	}
	delete(l.live, p.ExecutionID)
	if err := l.progress(a, true); err != nil {
		return err
	}
	ent := a.head
	ent.Kind, ent.Time, ent.Seq, ent.Outcome, ent.Cause = LogFinish, env.Time, env.Seq, p.Event.Status, causeOf(&p)
	if p.WorkerID != "" {
		ent.WorkerID = p.WorkerID
	}
	ent.TookMs = env.Time.Sub(a.head.Time).Milliseconds()
	if rc := p.Receipt; rc != nil {
		ent.TookMs = rc.ElapsedMs
		ent.Error = rc.Error
	}
	if err := l.emit(ent); err != nil {
		return err
	}
	out := a.head
	out.Kind, out.Time, out.Seq, out.OutputPath = LogOutput, env.Time, 0, a.paths.Output
	if a.paths.Output == "" {
		return nil
	}
	b, size, note := l.readFile(a.paths.Output, MaxLogOutputBytes)
	if note != "" {
		if p.Event.ProcessStarted != nil && !*p.Event.ProcessStarted && strings.HasPrefix(note, "not written") {
			return nil // nothing started, so nothing could write output
		}
		out.Note = note
		return l.emit(out)
	}
	out.Output, out.OutputBytes, out.OutputTruncated = string(b), size, size > int64(len(b))
	return l.emit(out)
}

func (l *logFollower) laneFinal(env events.Envelope, lane int) error {
	rec := l.r.Lanes[lane]
	return l.emit(LogEntry{Kind: LogLaneFinal, Run: l.run, Lane: lane, Time: env.Time, Seq: env.Seq, State: rec.State, Reason: rec.Reason})
}

// poll emits each live attempt's progress snapshot when it is newer than
// the last one shown.
func (l *logFollower) poll() error {
	for _, id := range l.order {
		if a := l.live[id]; a != nil {
			if err := l.progress(a, false); err != nil {
				return err
			}
		}
	}
	// Forget finished attempts.
	kept := l.order[:0]
	for _, id := range l.order {
		if l.live[id] != nil {
			kept = append(kept, id)
		}
	}
	l.order = kept
	return nil
}

// progress emits a's snapshot if newer than the last shown. final (the
// attempt finished) stays quiet about a snapshot that cannot be read.
func (l *logFollower) progress(a *liveAttempt, final bool) error {
	if a.paths.Progress == "" || a.head.Route == policy.RouteNative {
		return nil // a native attempt has no runner writing progress
	}
	if !l.underDataDir(a.paths.Progress) {
		if a.lastSeq == 0 && !final {
			a.lastSeq = -1
			ent := a.head
			ent.Kind, ent.Time, ent.Seq, ent.Note = LogProgress, l.e.cfg.Now(), 0, "the progress file lies outside the data directory; not shown"
			return l.emit(ent)
		}
		return nil
	}
	p, err := runner.ReadProgress(a.paths.Progress)
	if err != nil || p.Seq <= a.lastSeq {
		return nil // not written yet, or mid-replace: the next poll reads it
	}
	a.lastSeq = p.Seq
	ent := a.head
	ent.Kind, ent.Time, ent.Seq, ent.Progress = LogProgress, p.UpdatedAt, 0, &p
	return l.emit(ent)
}

// readFile reads at most limit bytes of the regular file at path under
// the data directory, never through a symlink; it returns the bytes, the
// file's size, and a note instead when it cannot be shown.
func (l *logFollower) readFile(path string, limit int64) ([]byte, int64, string) {
	if !l.underDataDir(path) {
		return nil, 0, "lies outside the data directory; not shown"
	}
	f, err := openNoFollow(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, "not written"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return nil, 0, "cannot be opened here (" + pe.Err.Error() + ")"
	}
	if err != nil {
		return nil, 0, "cannot be opened here"
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, 0, "is not a regular file; not shown"
	}
	b, err := io.ReadAll(io.LimitReader(f, limit))
	if err != nil {
		return nil, 0, "cannot be read here"
	}
	return b, max(st.Size(), int64(len(b))), ""
}

// underDataDir reports whether path is absolute and inside the engine's
// data directory (any absolute path when the engine has none configured).
func (l *logFollower) underDataDir(path string) bool {
	if !filepath.IsAbs(path) {
		return false
	}
	root := l.e.cfg.DataDir
	if root == "" {
		return true
	}
	under := func(root string) bool {
		rel, err := filepath.Rel(root, filepath.Clean(path))
		return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
	}
	if under(root) {
		return true
	}
	real, err := filepath.EvalSymlinks(root)
	return err == nil && under(real)
}
