package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/activities/contract"
	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// newOperationCmd builds `switchyard operation` and its steps.
func newOperationCmd(stdout, stderr io.Writer) *cobra.Command {
	return groupCommand("operation <command>", "Answer a lane's parent-operation handoff",
		`A worker that needs something only the parent may do (commit a checkpoint,
run checks) ends with a handoff; its lane waits in "awaiting-operation".
The parent goes through the operation ledger, each step an event in the
run's log (history, replay --verify, status show it):

  operation validate  check the handoff against the lane's worktree; digest
  operation begin     revalidate and reserve it: pending
  (the parent performs its fixed operation: git commit -- the files, or a check)
  operation done      settle it: --result succeeded|failed (or rejected)
  operation reject    settle it as rejected: the parent will not perform it

done and reject need the pending record, and its digest and HEAD must still
match. A pending operation after a crash is shown by status: inspect the
worktree and settle it; never begin it again. The worked example is in
docs/OPERATIONS.md ("A handoff from worker to commit").

Exit codes: 64 without a subcommand or with an unknown one; each
subcommand's --help lists its own.`,
		stderr, newOperationValidateCmd(stdout, stderr), newOperationBeginCmd(stdout, stderr),
		newOperationDoneCmd(stdout, stderr), newOperationRejectCmd(stdout, stderr))
}

// operationError maps the ledger's refusals to exit 65 and everything else
// to the engine commands' errors.
func operationError(err error, run string, lane int, f engineFlags, conn *engineConn) error {
	switch {
	case err == nil:
		return nil
	case contract.IsRefusal(err):
		return &cliError{code: exitRefused, msg: err.Error()}
	case errors.Is(err, engine.ErrOperationPending):
		return &cliError{code: exitRefused, msg: fmt.Sprintf("%s; see `switchyard status --run %s%s`", err, run, conn.connFlags(f))}
	case errors.Is(err, engine.ErrBeginNotRecorded):
		return failf("%v", err)
	}
	return engineError(err, run, lane, f, conn)
}

// operationFlags are the flags every step shares.
type operationFlags struct {
	f    engineFlags
	run  string
	lane int
}

func (o *operationFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&o.run, "run", "", "the run id")
	c.Flags().IntVar(&o.lane, "lane", 0, "the zero-based lane index")
	addEngineFlags(c, &o.f, true)
}

// do checks the shared flags and runs fn against the run.
func (o *operationFlags) do(cmd *cobra.Command, stderr io.Writer, required []string, fn func(ctx context.Context, conn *engineConn, eng engineAPI, run string) error) error {
	if err := requireFlags(cmd, append([]string{"run", "lane"}, required...)...); err != nil {
		return err
	}
	if err := o.f.validate(cmd); err != nil {
		return err
	}
	if err := checkRunLane(o.run, o.lane, false); err != nil {
		return err
	}
	return withRun(cmd.Context(), stderr, o.f, o.run, func(ctx context.Context, conn *engineConn, eng engineAPI, run string) error {
		if err := checkLaneOf(ctx, conn, o.f, run, o.lane); err != nil {
			return err
		}
		return operationError(fn(ctx, conn, eng, run), run, o.lane, o.f, conn)
	})
}

func newOperationValidateCmd(stdout, stderr io.Writer) *cobra.Command {
	var o operationFlags
	var s engine.OperationScope
	var asJSON bool
	c := &cobra.Command{
		Use:   "validate --run R --lane N --expected-head SHA [--file PATH...] [--check ID...] [--json]",
		Short: "Validate the lane's handoff against its worktree and record the digest",
		Long: `Run op-validate (see switchyard contract op-validate --help) for the lane
awaiting an operation: the response is the execution's output file, the
repository its worktree (or cwd for a read-only lane), the task and
checkpoint the ones its handoff was accepted with, and the handoff must be
the one its receipt recorded. --expected-head is the full commit the worker
was given (for an engine writer lane, the commit its worktree was created
from: the last line of git -C WORKTREE log -g --format=%H HEAD, if nothing
rewrote the worktree's reflog); --file and --check are what the parent
allows, never taken from the handoff. The validated scope
and checkpoint digest are recorded as an operation-step event. A refused
handoff records nothing and exits 65.

Exit codes: 0 the handoff was validated and recorded; 64 usage error
(a missing --expected-head, no such run or lane); 65 the handoff was
refused (malformed, out of scope, HEAD moved); 1 anything else.`,
		Example: `  switchyard operation validate --run 7f3c2a --lane 0 --expected-head 9f2b6c0e... --file README.md
  switchyard operation validate --run 7f3c2a --lane 0 --expected-head 9f2b6c0e... --check unit --json`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.do(cmd, stderr, []string{"expected-head"}, func(ctx context.Context, conn *engineConn, eng engineAPI, run string) error {
				v, err := eng.OperationValidate(ctx, run, o.lane, s)
				if err != nil {
					return err
				}
				if asJSON {
					return writeDoc(stdout, v)
				}
				fmt.Fprintf(stdout, "operation %s validated for run %s lane %d: digest %s at HEAD %s (%s, %s)%s\n",
					v.Operation, run, o.lane, v.Digest, v.Head, plural(len(v.Files), "file"), plural(len(v.Checks), "check"), pendingNote(conn, o.f))
				fmt.Fprintf(stdout, "next: switchyard operation begin --run %s --lane %d --digest %s%s\n", run, o.lane, v.Digest, conn.connFlags(o.f))
				return nil
			})
		},
	}
	o.add(c)
	c.Flags().StringVar(&s.ExpectedHead, "expected-head", "", "the full commit id the worker was given; HEAD must still be there")
	c.Flags().StringArrayVar(&s.Files, "file", nil, "an allowed repository-relative file (repeatable)")
	c.Flags().StringArrayVar(&s.Checks, "check", nil, "an allowed parent-owned check id (repeatable)")
	c.Flags().BoolVar(&asJSON, "json", false, "print the validation as JSON")
	return wireCommand(c, stderr)
}

func newOperationBeginCmd(stdout, stderr io.Writer) *cobra.Command {
	var o operationFlags
	var digest string
	var wait time.Duration
	c := &cobra.Command{
		Use:   "begin --run R --lane N --digest D [--wait 30s]",
		Short: "Reserve the validated operation: it is pending until done or reject",
		Long: `Revalidate the lane's worktree (same files, checks and HEAD) and, if it
still has the validated digest --digest, record the operation as begun: the
ledger's pending record. begin waits (--wait) until the engine recorded it;
only then may the parent perform its fixed operation. Exit 65 if the
digest or HEAD changed since validation, if another parent began it first,
or if it is already pending; exit 1 if no engine recorded it in time (do not
perform the operation then).

Exit codes: 0 the operation is pending; 64 usage error (a missing
--digest, no such run or lane); 65 refused (digest or HEAD changed, begun
elsewhere, already pending); 1 not recorded in time, or anything else.`,
		Example: `  switchyard operation begin --run 7f3c2a --lane 0 --digest 5c1e0b...`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.do(cmd, stderr, []string{"digest"}, func(ctx context.Context, conn *engineConn, eng engineAPI, run string) error {
				step, err := eng.OperationBegin(ctx, run, o.lane, digest, wait)
				if err != nil {
					return err
				}
				fmt.Fprintf(stdout, "operation %s begun for run %s lane %d: pending, digest %s at HEAD %s in %s\n",
					step.Operation.Kind, run, o.lane, step.Digest, step.Head, step.Repo)
				if step.Operation.Kind == policy.OpCommitCheckpoint {
					// A succeeded commit-checkpoint is refused without the
					// commit: the hint names it as required.
					fmt.Fprintf(stdout, "perform it now (commit exactly the validated files), then: switchyard operation done --run %s --lane %d --result succeeded --ref COMMIT%s (or --result failed, or operation reject if you do not perform it)\n", run, o.lane, conn.connFlags(o.f))
					return nil
				}
				fmt.Fprintf(stdout, "perform it now, then: switchyard operation done --run %s --lane %d --result succeeded|failed [--ref LOG]%s (or operation reject if you do not perform it)\n", run, o.lane, conn.connFlags(o.f))
				return nil
			})
		},
	}
	o.add(c)
	c.Flags().StringVar(&digest, "digest", "", "the digest operation validate printed")
	c.Flags().DurationVar(&wait, "wait", 30*time.Second, "how long to wait for the engine to record the begin")
	return wireCommand(c, stderr)
}

// newOperationDoneCmd builds `switchyard operation done`.
func newOperationDoneCmd(stdout, stderr io.Writer) *cobra.Command {
	var o operationFlags
	var result, ref, detail string
	c := &cobra.Command{
		Use:   "done --run R --lane N --result succeeded|failed|rejected [--ref REF] [--detail TEXT]",
		Short: "Settle the lane's pending operation with its result",
		Long: `Record that the parent carried out (succeeded) or could not carry out
(failed) the pending operation, or decided not to (rejected, the same as
operation reject). It needs the pending record of operation begin, and:

  - succeeded commit-checkpoint: --ref is the commit the parent made; it must
    be the worktree's HEAD, have the pending HEAD as its only parent, change
    only the pending files and record exactly the validated contents and
    modes (the pending digest);
  - anything else: the worktree must still be at the pending HEAD with the
    pending digest.

The lane then continues as its sheet's continuation policy allows.

Exit codes: 0 the result was recorded; 64 usage error (a --result other than
succeeded, failed or rejected, no such run or lane); 65 refused (no pending
operation, the worktree or --ref does not match it); 1 anything else.`,
		Example: `  switchyard operation done --run 7f3c2a --lane 0 --result succeeded --ref "$(git -C WORKTREE rev-parse HEAD)"
  switchyard operation done --run 7f3c2a --lane 0 --result failed --detail "unit check failed: see logs/checks.txt"`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("result") {
				switch result {
				case string(events.OperationSucceeded), string(events.OperationFailed), "rejected", "reject":
				default:
					return usagef("--result %q: want succeeded, failed or rejected", result)
				}
			}
			return o.do(cmd, stderr, []string{"result"}, func(ctx context.Context, conn *engineConn, eng engineAPI, run string) error {
				r, rejected := events.OperationResult(result), false
				if result == "rejected" || result == "reject" {
					r, rejected = events.OperationFailed, true
				}
				if err := eng.OperationSettle(ctx, run, o.lane, r, rejected, ref, detail); err != nil {
					return err
				}
				what := string(r)
				if rejected {
					what = "rejected"
				}
				fmt.Fprintf(stdout, "operation %s recorded for run %s lane %d%s\n", what, run, o.lane, pendingNote(conn, o.f))
				return nil
			})
		},
	}
	o.add(c)
	c.Flags().StringVar(&result, "result", "", "how the operation ended: succeeded, failed, or rejected")
	c.Flags().StringVar(&ref, "ref", "", "the operation's product: the commit (required for a succeeded commit-checkpoint), a check log")
	c.Flags().StringVar(&detail, "detail", "", "a human explanation, for failures and rejections")
	return wireCommand(c, stderr)
}

func newOperationRejectCmd(stdout, stderr io.Writer) *cobra.Command {
	var o operationFlags
	var detail string
	c := &cobra.Command{
		Use:   "reject --run R --lane N [--detail TEXT]",
		Short: "Settle the lane's pending operation as rejected: it will not be performed",
		Long: `Record that the parent decided not to perform the pending operation. The
worktree must still be at the pending HEAD with the pending digest (nothing
was performed). A rejected operation keeps its task/checkpoint identity;
the lane continues as if the operation failed.

Exit codes: 0 the rejection was recorded; 64 usage error (no such run or
lane); 65 refused (no pending operation, the worktree moved); 1 anything
else.`,
		Example: `  switchyard operation reject --run 7f3c2a --lane 0 --detail "the change touches generated files"`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.do(cmd, stderr, nil, func(ctx context.Context, conn *engineConn, eng engineAPI, run string) error {
				if err := eng.OperationSettle(ctx, run, o.lane, events.OperationFailed, true, "", detail); err != nil {
					return err
				}
				fmt.Fprintf(stdout, "operation rejected for run %s lane %d%s\n", run, o.lane, pendingNote(conn, o.f))
				return nil
			})
		},
	}
	o.add(c)
	c.Flags().StringVar(&detail, "detail", "", "why the parent rejects it")
	return wireCommand(c, stderr)
}
