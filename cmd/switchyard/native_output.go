package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// printNativeJob prints what native next found: the job (text or JSON),
// or that none is queued. waitHint adds that --wait would block; it is
// false when --wait was given and could not wait, so the two lines agree.
func printNativeJob(w io.Writer, job *engine.NativeJob, parent policy.Parent, asJSON, waitHint bool, conn string) error {
	if job == nil {
		if asJSON {
			return writeDoc(w, map[string]string{"status": "none", "parent": string(parent)})
		}
		if waitHint {
			fmt.Fprintf(w, "no native job queued for parent %s (--wait blocks until one is)\n", parent)
		} else {
			fmt.Fprintf(w, "no native job queued for parent %s\n", parent)
		}
		return nil
	}
	if asJSON {
		// The command must answer the same store when pasted as is.
		j := *job
		j.ReportCommand = nativeReportCommand(job.ExecutionID, conn)
		return writeDoc(w, j)
	}
	fmt.Fprintf(w, "native job for parent %s\n", job.Parent)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "  %s\t%s\n", k, v)
		}
	}
	row("execution", job.ExecutionID)
	row("run", fmt.Sprintf("%s lane %d, attempt %d", job.Run, job.Lane, job.AttemptIndex))
	row("descriptor", job.Descriptor)
	switch {
	case job.Agent != "":
		row("agent", job.Agent+" (dispatch through this shipped Claude agent)")
	case job.Model != "":
		row("model", job.Model+" (reasoning effort "+string(job.Effort)+")")
	default:
		row("model", "the parent's own model and effort")
	}
	row("mode", string(job.Mode))
	row("contract", string(job.Contract))
	row("prompt", job.Paths.Prompt+" (the worker contract, the assignment, then the task: hand it over whole)")
	row("artifact", job.Paths.Artifact)
	row("output", job.Paths.Output)
	row("receipt", job.Paths.Receipt+" (reserved; a native attempt writes no runner receipt)")
	row("cwd", job.Paths.Cwd)
	row("worktree", job.Paths.Worktree)
	if job.TimeoutMs > 0 {
		row("timeout", (time.Duration(job.TimeoutMs) * time.Millisecond).String())
	}
	tw.Flush()
	fmt.Fprintf(w, "Run it with your native subagent (the prompt file in, its final response to the output path), then record how it ended:\n")
	fmt.Fprintf(w, "  %s\n", nativeReportCommand(job.ExecutionID, conn))
	fmt.Fprintf(w, "  (outcomes: %s)\n", outcomeList())
	return nil
}

// nativeReportError explains a refused native report.
func nativeReportError(ctx context.Context, err error, execution string, f engineFlags, conn *engineConn) error {
	flags := conn.connFlags(f)
	if errors.Is(err, engine.ErrUnknownExecution) {
		if run, lane, fin, ok := recordedFinish(ctx, conn.store(), execution); ok {
			outcome := "its outcome"
			if fin.Host != nil {
				outcome = "outcome " + string(fin.Host.Status)
			}
			return usagef("--execution %s was already reported: run %s lane %d recorded %s, and nothing waits for another report; `switchyard status --run %s%s` shows the lane now",
				execution, run, lane, outcome, run, flags)
		}
		return usagef("--execution %s names no native execution a run is waiting for; `switchyard native next --parent P%s` hands out queued jobs and `switchyard status%s` shows waiting lanes",
			execution, flags, flags)
	}
	if errors.Is(err, engine.ErrInvalidRequest) || policy.IsUsage(err) {
		return usagef("%s", invalidReason(err))
	}
	return failf("native report for execution %s: %v", execution, err)
}

// recordedFinish finds the finish event of execution in the store, newest
// run first: a report for an execution that already ended says so rather
// than that there is no such execution.
func recordedFinish(ctx context.Context, store events.Store, execution string) (string, int, events.Finish, bool) {
	ids, err := store.Runs(ctx)
	if err != nil {
		return "", 0, events.Finish{}, false
	}
	for k := len(ids) - 1; k >= 0; k-- {
		envs, err := store.LoadRun(ctx, ids[k])
		if err != nil {
			continue
		}
		for _, env := range envs {
			if fin, ok := env.Payload.(events.Finish); ok && fin.ExecutionID == execution {
				return ids[k], env.Lane, fin, true
			}
		}
	}
	return "", 0, events.Finish{}, false
}
