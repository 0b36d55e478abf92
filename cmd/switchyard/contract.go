package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/activities/contract"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// Exit codes of `switchyard contract` beyond the shared ones.
const (
	// exitRefused: the handoff, response or ledger request was refused
	// (fail closed); same value as exitPolicy.
	exitRefused = 65
	// exitUnsupported: a strict contract was requested; no route supports
	// it (the runner's unsupported-capability exit).
	exitUnsupported = 79
)

// newContractCmd builds `switchyard contract`.
func newContractCmd(stdout, stderr io.Writer) *cobra.Command {
	return groupCommand("contract <command>", "The parent's worker-contract tool: prepare, interpret, validate and record handoffs",
		`The worker contract between a parent session and its workers
(provider-dispatch.md "Worker handoffs and parent operations"):

  prepare      the instructions to prepend to a worker's task prompt
  interpret    a worker's final response: completion, handoff or malformed
  op-validate  check a handoff against the worktree; print its checkpoint digest
  op-record    reserve (pending) and settle (complete|rejected) an operation
  op-status    list a ledger's operations, pending ones first

Exit codes: 0 ok, 64 usage, 65 refused (malformed response, handoff out of
scope, ledger rule), 79 strict contract unsupported, 1 I/O failure.
The digest framing and a worked example are in docs/CONTRACT.md.`,
		stderr,
		newContractPrepareCmd(stdout, stderr), newContractInterpretCmd(stdout, stderr),
		newContractValidateCmd(stdout, stderr), newContractRecordCmd(stdout, stderr),
		newContractStatusCmd(stdout, stderr))
}

// contractErr maps a contract package error to its exit code.
func contractErr(err error) error {
	switch {
	case err == nil:
		return nil
	case policy.IsUsage(err):
		return usagef("%s", err)
	case contract.IsRefusal(err), contract.IsLedgerRefusal(err):
		return &cliError{code: exitRefused, msg: err.Error()}
	}
	return failf("%s", err)
}

func newContractPrepareCmd(stdout, stderr io.Writer) *cobra.Command {
	var parent, provider, route, mode, ctr string
	var asJSON bool
	c := &cobra.Command{
		Use:   "prepare --parent P --provider X --route native|external --mode M [--contract legacy|strict]",
		Short: "Print the worker contract to prepend to a task prompt",
		Long: `Print the instructions a worker gets before its task: the parent owns Git
state and remote writes, the mode's rules, and how to end with a handoff.
The text ends with the "Assigned task:" heading, so the output followed by
the task is the whole prompt. --route external prints exactly what the
runner prepends for that provider; --route native is for a parent's own
subagent (claude parent: claude workers; codex parent: codex workers) and
tells a read-only worker to write only its parent-assigned output artifact.

The legacy contract is prompt guidance, not confinement. --contract strict
is unsupported on every route: it prints the reason and exits 79, a
terminal capability stop, not a route failure to fall back from.

Exit codes: 0 the contract was printed; 64 usage error (a missing option, an
unknown parent, provider, route, mode or contract); 79 --contract strict
(unsupported); 1 anything else.`,
		Example: `  switchyard contract prepare --parent claude --provider claude --route native --mode isolated-write > prompt.md
  cat task.md >> prompt.md
  switchyard contract prepare --parent codex --provider grok --route external --mode read-only --json`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlags(cmd, "parent", "provider", "route", "mode"); err != nil {
				return err
			}
			req := providers.ContractRequest{Parent: policy.Parent(parent), Provider: policy.Provider(provider),
				Route: providers.Route(route), Mode: policy.Access(mode), Contract: policy.Contract(ctr)}
			text, err := providers.PrepareContract(req)
			if errors.Is(err, providers.ErrStrictUnsupported) {
				if asJSON {
					_ = writeJSON(stdout, map[string]any{"status": "unsupported", "contract": ctr, "processStarted": false, "reason": err.Error()})
				}
				return &cliError{code: exitUnsupported, msg: err.Error()}
			}
			if err != nil {
				return contractErr(err)
			}
			if asJSON {
				return writeJSON(stdout, map[string]any{"status": "ok", "parent": parent, "provider": provider, "route": route,
					"mode": mode, "contract": ctr, "instructions": text})
			}
			_, err = io.WriteString(stdout, text)
			return err
		},
	}
	c.Flags().StringVar(&parent, "parent", "", "the parent harness: claude or codex")
	c.Flags().StringVar(&provider, "provider", "", "the worker's provider (claude, codex, grok, devin, cursor, antigravity, opencode, gemini)")
	c.Flags().StringVar(&route, "route", "", "native (the parent's own subagent) or external (the runner)")
	c.Flags().StringVar(&mode, "mode", "", "read-only or isolated-write")
	c.Flags().StringVar(&ctr, "contract", string(policy.ContractLegacy), "legacy, or strict (always unsupported: exit 79)")
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON object with the instructions")
	return wireCommand(c, stderr)
}

func newContractInterpretCmd(stdout, stderr io.Writer) *cobra.Command {
	var response string
	c := &cobra.Command{
		Use:   "interpret --response F",
		Short: "Classify a worker's final response: completion, handoff or malformed",
		Long: `Read a worker's final response and print its verdict as JSON:

  {"verdict":"complete"}                      an ordinary final response
  {"verdict":"needs-parent-operation",        exactly one well-formed
   "handoff":{"task":..,"checkpoint":..,        pstack-handoff block ending
   "operation":..,"files":[..],"checks":[..],   the response
   "summary":..}}
  {"verdict":"malformed-output","error":..}   empty or blank, truncated, repeated,
                                              trailing or malformed markers

A malformed response fails closed: its JSON is printed and the exit is 65.
A handoff is a request, not completion and not authorization.

Exit codes: 0 complete or needs-parent-operation; 65 malformed-output (its
JSON is printed); 64 usage error (no --response, an unreadable file).`,
		Example: `  switchyard contract interpret --response runs/a1/output.md`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlags(cmd, "response"); err != nil {
				return err
			}
			b, err := contract.ReadResponse(response)
			if err != nil {
				return usagef("--response: %s", err)
			}
			v := contract.Interpret(b)
			if err := writeJSON(stdout, v); err != nil {
				return err
			}
			if v.Verdict == contract.VerdictMalformed {
				return &cliError{code: exitRefused, msg: "the final response fails closed: " + v.Error}
			}
			return nil
		},
	}
	c.Flags().StringVar(&response, "response", "", "the worker's final-response file")
	return wireCommand(c, stderr)
}

func newContractValidateCmd(stdout, stderr io.Writer) *cobra.Command {
	var r contract.ValidateRequest
	var response string
	c := &cobra.Command{
		Use:   "op-validate --response F --repo R --task T --checkpoint C --expected-head SHA --file P... --check ID...",
		Short: "Validate a handoff against the worktree and print its checkpoint digest",
		Long: `Check a worker's handoff before the parent acts on it, using real git:

  - the response holds exactly one well-formed handoff;
  - its task and checkpoint are exactly --task and --checkpoint;
  - each file it names is one of the --file paths, each check one of --check;
  - --repo is the canonical top level of a non-bare worktree whose metadata
    is its own .git directory, or a linked worktree's gitdir file with a
    matching back-pointer; no core.worktree, no object alternates;
  - HEAD is exactly --expected-head (the full commit id);
  - every file is a regular file with one hard link, reached through real
    directories (no symlink) outside any .git and any nested repository.

On success it prints JSON with "digest": the SHA-256 checkpoint digest over
HEAD, operation, checks and the framed file paths, modes and contents
(framing in docs/CONTRACT.md). Recheck it immediately before the
operation. A refused handoff prints {"valid":false,"error":..} and exits 65.

Exit codes: 0 the handoff is valid (its digest is printed); 65 refused;
64 usage error (a missing option, an unreadable --response); 1 anything
else (git could not be run).`,
		Example: `  switchyard contract op-validate --response runs/a1/output.md --repo ~/src/app-fix \
    --task T-42 --checkpoint C-1 --expected-head "$(git -C ~/src/app-fix rev-parse HEAD)" \
    --file src/parse.go --file src/parse_test.go --check unit`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlags(cmd, "response", "repo", "task", "checkpoint", "expected-head"); err != nil {
				return err
			}
			if err := contract.CheckRequest(r); err != nil {
				return contractErr(err)
			}
			b, err := contract.ReadResponse(response)
			if err != nil {
				return usagef("--response: %s", err)
			}
			r.Response = b
			v, err := contract.Validate(cmd.Context(), r)
			if contract.IsRefusal(err) {
				_ = writeJSON(stdout, map[string]any{"valid": false, "error": err.Error()})
			}
			if err != nil {
				return contractErr(err)
			}
			return writeJSON(stdout, v)
		},
	}
	c.Flags().StringVar(&response, "response", "", "the worker's final-response file")
	c.Flags().StringVar(&r.Repo, "repo", "", "the canonical worktree the worker wrote in")
	c.Flags().StringVar(&r.Task, "task", "", "the assigned task id")
	c.Flags().StringVar(&r.Checkpoint, "checkpoint", "", "the assigned checkpoint id")
	c.Flags().StringVar(&r.ExpectedHead, "expected-head", "", "the full commit id HEAD must be at")
	c.Flags().StringArrayVar(&r.Files, "file", nil, "an allowed repository-relative file (repeatable)")
	c.Flags().StringArrayVar(&r.Checks, "check", nil, "an allowed parent-owned check id (repeatable)")
	return wireCommand(c, stderr)
}

func newContractRecordCmd(stdout, stderr io.Writer) *cobra.Command {
	var r contract.RecordRequest
	var kind, expected, result string
	c := &cobra.Command{
		Use:   "op-record --ledger L --id ID --task T --checkpoint C --kind commit-checkpoint|run-checks --state pending|complete|rejected [--expected J] [--result J]",
		Short: "Reserve or settle a parent operation in the ledger",
		Long: `Record one step of a parent operation in the ledger file:

  pending    before the operation: a new --id whose task/checkpoint/kind
             identity no record holds; --expected is the JSON object of
             preconditions (digest, HEAD) it is reserved under.
  complete   after the operation succeeded: settles the pending --id;
             --result is the JSON result (commit id, check outcome).
  rejected   the parent decided not to perform it: settles the pending --id.

A rejected or complete operation keeps its identity: a new operation needs a
new checkpoint. A pending record left by a crash stays pending until the
parent reconciles it (inspects the repository and records complete or
rejected); do not reserve it again to replay the operation. --expected on
complete or rejected must equal the reserved preconditions.

Writers are serialized with an exclusive lock on L.lock, and L is replaced
atomically (temporary file, fsync, rename, directory fsync). Recording an
operation does not authorize it. Prints the record as JSON; a refusal exits
65 and leaves the ledger unchanged.

Exit codes: 0 the step was recorded; 64 usage error (a missing option, an
unknown --kind or --state, --expected or --result not a JSON object); 65 the
ledger refused it (a reused identity, no pending --id to settle, --expected
differing from the reservation); 1 anything else (the ledger cannot be read
or written).`,
		Example: `  switchyard contract op-record --ledger ops.json --id op-7 --task T-42 --checkpoint C-1 \
    --kind commit-checkpoint --state pending --expected '{"digest":"5c1e...","head":"9f2b..."}'
  switchyard contract op-record --ledger ops.json --id op-7 --task T-42 --checkpoint C-1 \
    --kind commit-checkpoint --state complete --result '{"commit":"a41c..."}'`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlags(cmd, "ledger", "id", "task", "checkpoint", "kind", "state"); err != nil {
				return err
			}
			r.Kind = policy.OperationKind(kind)
			if cmd.Flags().Changed("expected") {
				r.Expected = []byte(expected)
			}
			if cmd.Flags().Changed("result") {
				r.Result = []byte(result)
			}
			r.Now = time.Now()
			rec, err := contract.Record(r)
			if err != nil {
				return contractErr(err)
			}
			return writeJSON(stdout, rec)
		},
	}
	c.Flags().StringVar(&r.Ledger, "ledger", "", "the ledger file (created on the first pending record)")
	c.Flags().StringVar(&r.ID, "id", "", "a unique operation id")
	c.Flags().StringVar(&r.Task, "task", "", "the task id")
	c.Flags().StringVar(&r.Checkpoint, "checkpoint", "", "the checkpoint id")
	c.Flags().StringVar(&kind, "kind", "", "commit-checkpoint or run-checks")
	c.Flags().StringVar(&r.State, "state", "", "pending, complete or rejected")
	c.Flags().StringVar(&expected, "expected", "", "JSON object: the preconditions the operation is reserved under")
	c.Flags().StringVar(&result, "result", "", "JSON object: the operation's result")
	return wireCommand(c, stderr)
}

func newContractStatusCmd(stdout, stderr io.Writer) *cobra.Command {
	var ledger string
	var asJSON bool
	c := &cobra.Command{
		Use:   "op-status --ledger L [--json]",
		Short: "List a ledger's operations; pending ones need reconciliation",
		Long: `List the ledger's operations, pending first. A pending operation after a
crash is ambiguous: the operation may or may not have happened. Inspect the
repository and settle it with op-record --state complete or rejected; never
reserve it again to replay it. A missing ledger file is an error (exit 64),
not an empty ledger.

Exit codes: 0 the operations were printed (pending ones too); 64 usage
error (no --ledger, a ledger file that does not exist); 1 anything else (the
ledger cannot be read or parsed).`,
		Example: `  switchyard contract op-status --ledger ops.json
  switchyard contract op-status --ledger ops.json --json`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlags(cmd, "ledger"); err != nil {
				return err
			}
			lf, err := contract.Status(ledger)
			if errors.Is(err, os.ErrNotExist) {
				return usagef("--ledger %s does not exist: check the path (a parent creates it with op-record --state pending)", ledger)
			}
			if err != nil {
				return failf("%s", err)
			}
			pending := lf.Pending()
			if asJSON {
				return writeJSON(stdout, map[string]any{"schema": lf.Schema, "pending": pending, "operations": lf.Operations})
			}
			fmt.Fprintf(stdout, "%s: %s, %d pending\n", ledger, plural(len(lf.Operations), "operation"), len(pending))
			for _, state := range []string{contract.StatePending, contract.StateComplete, contract.StateRejected} {
				for _, o := range lf.Operations {
					if o.State != state {
						continue
					}
					fmt.Fprintf(stdout, "  %-8s  %s  task %s checkpoint %s  %s  expected %s", o.State, o.ID, o.Task, o.Checkpoint, o.Kind, o.Expected)
					if len(o.Result) > 0 {
						fmt.Fprintf(stdout, "  result %s", o.Result)
					}
					fmt.Fprintln(stdout)
				}
			}
			if len(pending) > 0 {
				fmt.Fprintln(stdout, "pending operations may or may not have happened: inspect the repository, then record complete or rejected")
			}
			return nil
		},
	}
	c.Flags().StringVar(&ledger, "ledger", "", "the ledger file")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON: schema, pending and operations")
	return wireCommand(c, stderr)
}
