package client

import (
	"context"
	"errors"
	"iter"

	"github.com/switchyard-dev/switchyard/engine"
)

type (
	// LogEntry is one thing recorded about a run's attempts: a launch, a
	// claim, a progress snapshot, a finish with the receipt's capped
	// diagnostic, the attempt's output (capped), or a lane's end. It
	// never carries a raw provider stream, an argv or an environment
	// value.
	LogEntry = engine.LogEntry
	// LogKind is a LogEntry's kind.
	LogKind = engine.LogKind
)

// LogOptions select what Logs yields.
type LogOptions struct {
	// Lane is the lane to show, or AllLanes for every lane (the zero
	// value is lane 0).
	Lane int
	// Follow keeps yielding what is recorded later until every selected
	// lane is final; without it Logs yields what is recorded now.
	Follow bool
}

// errStopLogs ends the engine's log walk when the caller breaks out.
var errStopLogs = errors.New("client: logs: stopped by the caller")

// Logs yields what is recorded of the run's attempts, in log order: per
// attempt its launch, claim, progress snapshots, finish and output, and
// each lane's end. Progress and output are read from the attempt files
// under the data directory, so the client's host must see it (a
// deployment shares it). With Follow the sequence goes on until every
// selected lane is final; otherwise it ends with what is recorded now. It
// yields one error (ErrNotFound for an unknown run or lane, ctx's when
// ctx ends) and ends. Breaking out of the loop stops it.
//
//	for e, err := range run.Logs(ctx, client.LogOptions{Lane: client.AllLanes, Follow: true}) {
//		if err != nil { return err }
//		fmt.Println(e.Lane, e.Kind, e.Descriptor)
//	}
func (r *Run) Logs(ctx context.Context, o LogOptions) iter.Seq2[LogEntry, error] {
	return func(yield func(LogEntry, error) bool) {
		if o.Lane != AllLanes {
			if err := checkLane(o.Lane); err != nil {
				yield(LogEntry{}, err)
				return
			}
		}
		err := r.c.eng.Logs(ctx, r.id, engine.LogOptions{Lane: o.Lane, Follow: o.Follow}, func(e LogEntry) error {
			if !yield(e, nil) {
				return errStopLogs
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStopLogs) {
			yield(LogEntry{}, mapError(err, ""))
		}
	}
}
