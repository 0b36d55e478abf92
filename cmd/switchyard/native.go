package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/policy"
)

// newNativeCmd builds `switchyard native` with `next` and `report`.
func newNativeCmd(stdout, stderr io.Writer) *cobra.Command {
	return groupCommand("native <command>", "Hand native lanes to the parent harness and record their outcome",
		`A native attempt (inherit-parent, auto, or a descriptor the parent covers
natively) runs inside the parent harness, not through a worker. The parent
takes the job with "switchyard native next", runs it with its own subagent
primitive, and records the outcome with "switchyard native report": the
explicit host terminal metadata the dispatch contract requires, since a
native attempt has no runner receipt.

Exit codes: 64 without a subcommand or with an unknown one; each
subcommand's --help lists its own.`,
		stderr, newNativeNextCmd(stdout, stderr), newNativeReportCmd(stdout, stderr))
}

// newNativeNextCmd builds `switchyard native next`.
func newNativeNextCmd(stdout, stderr io.Writer) *cobra.Command {
	var f engineFlags
	var parent string
	var wait, asJSON bool
	c := &cobra.Command{
		Use:   "next --parent P [--wait] [--json]",
		Short: "Take the next native job queued for a parent harness",
		Long: `Take the next native job queued for the parent and print what the parent
needs to run it: the execution id, the descriptor, the Claude agent that
covers it (pstack-<stem>-<effort>; a codex parent gets the model and
effort for spawn_agent instead), the access mode, and the prompt, output and
receipt paths. The prompt file is the prepared worker contract (the same
rules the runner gives external workers), the assignment, then the task:
hand it to the subagent whole. A read-only job also names a distinct output
artifact, the one file its subagent may write. Each job is handed out once;
a cancelled lane's job is never handed out, and a run with --contract
strict never queues one (no native route proves the strict boundary: the
lane ends unsupported). Without --wait it answers at once ("no native
job", exit 0) when none is queued; with --wait it blocks until one is.

Exit codes: 0 a job was printed, or none is queued; 64 usage error (a
--parent other than claude or codex); 130 interrupted while waiting; 1
anything else (the store cannot be reached).`,
		Example: `  switchyard native next --parent claude
  switchyard native next --parent codex --wait --json`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlags(cmd, "parent"); err != nil {
				return err
			}
			if err := f.validate(cmd); err != nil {
				return err
			}
			p, err := policy.ParseParent(parent)
			if err != nil {
				return usagef("--parent %q: want claude or codex", parent)
			}
			return withEngine(cmd.Context(), stderr, f, func(ctx context.Context, conn *engineConn, eng engineAPI) error {
				waitHint := !wait
				if wait && conn.mode == connEmbedded {
					// This process holds the data directory: no engine can
					// queue a job while it waits.
					fmt.Fprintf(stderr, "switchyard native next: nothing serves %s, so no native job can arrive; not waiting (start `switchyard serve` or a `switchyard run`)\n", conn.dataDir)
					wait = false
				}
				job, err := eng.NativeNext(ctx, p, wait)
				if err != nil {
					if ctx.Err() != nil {
						return &exitError{code: exitInterrupted}
					}
					return failf("native next for parent %s: %v", p, err)
				}
				return printNativeJob(stdout, job, p, asJSON, waitHint, conn.connFlags(f))
			})
		},
	}
	c.Flags().StringVar(&parent, "parent", "", "the parent harness: claude or codex")
	c.Flags().BoolVar(&wait, "wait", false, "block until a native job is queued")
	c.Flags().BoolVar(&asJSON, "json", false, `print the job as JSON ({"status":"none"} when there is none)`)
	addEngineFlags(c, &f, true)
	return wireCommand(c, stderr)
}

// newNativeReportCmd builds `switchyard native report`.
func newNativeReportCmd(stdout, stderr io.Writer) *cobra.Command {
	var f engineFlags
	var execution, status, started, evidence string
	c := &cobra.Command{
		Use:   "report --execution ID --status S [--process-started true|false] [--evidence REF]",
		Short: "Record the host terminal metadata of a native attempt",
		Long: `Record how a native attempt ended, as the parent host attests it:
--status is the policy outcome (` + outcomeList() + `);
--process-started says whether the native worker started (omit it when the
host does not know); --evidence points at the host's structured record, for
example the tool envelope of a capacity failure. Usage exhaustion may be
reported only from such an explicit structured failure, never inferred from
model prose.

Exit codes: 0 the outcome was recorded; 64 usage error (an unknown --status,
a --process-started other than true or false, an --execution no run waits
for or one already reported); 1 anything else (the store cannot be
reached).`,
		Example: `  switchyard native report --execution 4b1d9e0c-... --status complete --process-started true
  switchyard native report --execution 4b1d9e0c-... --status usage-exhausted --process-started false \
    --evidence envelopes/capacity-4b1d.json`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlags(cmd, "execution", "status"); err != nil {
				return err
			}
			if err := f.validate(cmd); err != nil {
				return err
			}
			outcome := policy.Outcome(status)
			if !outcome.Valid() {
				return usagef("--status %q: want one of %s", status, outcomeList())
			}
			var processStarted *bool
			if cmd.Flags().Changed("process-started") {
				b, err := strconv.ParseBool(started)
				if err != nil || (started != "true" && started != "false") {
					return usagef("--process-started %q: want true or false (omit it when unknown)", started)
				}
				processStarted = &b
			}
			return withEngine(cmd.Context(), stderr, f, func(ctx context.Context, conn *engineConn, eng engineAPI) error {
				if err := eng.NativeReport(ctx, execution, outcome, processStarted, evidence); err != nil {
					return nativeReportError(ctx, err, execution, f, conn)
				}
				fmt.Fprintf(stdout, "native outcome %s recorded for execution %s%s\n", outcome, execution, pendingNote(conn, f))
				return nil
			})
		},
	}
	c.Flags().StringVar(&execution, "execution", "", "the execution id native next printed")
	c.Flags().StringVar(&status, "status", "", "the attempt's outcome: "+outcomeList())
	c.Flags().StringVar(&started, "process-started", "", "whether the native worker started: true or false")
	c.Flags().StringVar(&evidence, "evidence", "", "reference to the host's structured terminal record")
	addEngineFlags(c, &f, true)
	return wireCommand(c, stderr)
}

// outcomeList lists the policy outcomes.
func outcomeList() string {
	s := make([]string, len(policy.Outcomes))
	for i, o := range policy.Outcomes {
		s[i] = string(o)
	}
	return strings.Join(s, ", ")
}
