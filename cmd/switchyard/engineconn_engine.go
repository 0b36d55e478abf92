package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// engineAPI is the engine as the one-request commands use it.
type engineAPI = *engine.Engine

// withEngine connects (to --nats, the data directory's serve, or an
// embedded server of its own), builds an engine for one request and calls
// fn; the connection is closed afterwards. Every command that uses it
// reads or answers stored runs, so a data directory without a store is an
// error and nothing is created there.
func withEngine(ctx context.Context, stderr io.Writer, f engineFlags, fn func(ctx context.Context, conn *engineConn, eng engineAPI) error) error {
	conn, err := openEngineConn(ctx, f, connectOptions{query: true})
	if err != nil {
		return err
	}
	defer conn.Close()
	eng, err := conn.newEngine(f, quietLogger(stderr))
	if err != nil {
		return err
	}
	return fn(ctx, conn, eng)
}

// checkRunLane checks --run and, unless laneOptional, --lane.
func checkRunLane(run string, lane int, laneOptional bool) error {
	if err := events.ValidateRunID(run); err != nil {
		return usagef("--run %q is not a run id; list runs with `switchyard status`", run)
	}
	if lane < 0 || lane > events.MaxLanes {
		if laneOptional {
			return usagef("--lane %d: want a zero-based lane index, or no --lane for the whole run", lane)
		}
		return usagef("--lane %d: want a zero-based lane index (see `switchyard status --run %s`)", lane, run)
	}
	return nil
}

// engineError turns an engine error about run (and lane, or
// events.RunLane) into one that names the bad input and the fix.
func engineError(err error, run string, lane int, f engineFlags, conn *engineConn) error {
	flags := ""
	if conn != nil {
		flags = conn.connFlags(f)
	}
	var le *engine.LaneError
	switch {
	case err == nil:
		return nil
	case policy.IsPolicy(err):
		return err
	case errors.Is(err, engine.ErrUnknownRun):
		where := ""
		if conn != nil {
			where = " in " + conn.describe()
		}
		return usagef("no run %q%s; list runs with `switchyard status%s`", run, where, flags)
	case errors.Is(err, engine.ErrUnknownLane):
		return usagef("run %s has no lane %d; its lanes are listed by `switchyard status --run %s%s`", run, lane, run, flags)
	case errors.As(err, &le) && le.Lane == events.RunLane:
		return failf("run %s is final: nothing in it waits for input any more; see `switchyard status --run %s%s`", run, run, flags)
	case errors.As(err, &le):
		return failf("%s; see `switchyard status --run %s%s`", strings.Replace(err.Error(), "engine: ", "", 1), run, flags)
	case errors.Is(err, engine.ErrInvalidRequest), policy.IsUsage(err):
		return usagef("%s", invalidReason(err))
	case errors.Is(err, engine.ErrInconsistentLog):
		return failf("%v; `switchyard replay --run %s --verify%s` shows where the log breaks", err, run, flags)
	}
	return failf("%v", err)
}

// invalidReason is the engine's reason for refusing a request, without
// the "engine: invalid request: " its errors start with.
func invalidReason(err error) string {
	return strings.TrimPrefix(err.Error(), engine.ErrInvalidRequest.Error()+": ")
}

// pendingNote is appended to a control command's confirmation when no
// engine runs for the data directory: the input waits in the queue until
// one starts.
func pendingNote(conn *engineConn, f engineFlags) string {
	if conn.mode != connEmbedded {
		return ""
	}
	return fmt.Sprintf(" (no engine is running for %s: it applies when `switchyard serve%s` starts)", conn.dataDir, conn.connFlags(f))
}
