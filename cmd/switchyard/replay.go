package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// replayOutput is replay's JSON: the engine's result and, on divergence,
// the recorded event where replay diverged.
type replayOutput struct {
	engine.ReplayResult
	Event *events.Envelope `json:"event,omitempty"`
}

// newReplayCmd builds `switchyard replay`.
func newReplayCmd(stdout, stderr io.Writer) *cobra.Command {
	var f engineFlags
	var run string
	var verify, asJSON bool
	c := &cobra.Command{
		Use:   "replay --run ID [--verify] [--json]",
		Short: "Recompute a run's decisions from its event log",
		Long: `Read a run's event log and recompute, from the inputs it records, everything
the engine decided: the frozen sheet is resolved again into the same lanes;
each decision (launch, continue, inspect, request-operation, complete, stop)
is recomputed from the lane's rebuilt state and must match the recorded
decision, input digest and sheet digest; each finish's receipt (or native
host metadata) is normalized again and must give the recorded outcome; and
every event must be a transition the lane machine allows.

It prints how many events, decisions and outcomes were recomputed, or the
first divergence: the event, what replay expected and what the log records.
With --verify a divergence exits 1 (without, replay only reports it).
Replay reads the log only; it works on a run in progress too.

Exit codes: 0 the result was printed (a divergence too, without --verify);
1 with --verify when replay diverges, or anything else (the store cannot be
read); 64 usage error or no such run.`,
		Example: `  switchyard replay --run 7f3c2a --verify
  switchyard replay --run 7f3c2a --json`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlags(cmd, "run"); err != nil {
				return err
			}
			if err := f.validate(cmd); err != nil {
				return err
			}
			if err := checkRunLane(run, 0, true); err != nil {
				return err
			}
			return withRun(cmd.Context(), stderr, f, run, func(ctx context.Context, conn *engineConn, _ engineAPI, run string) error {
				res, err := engine.Replay(ctx, conn.store(), run, policy.DefaultOptions())
				if err != nil {
					return engineError(err, run, events.RunLane, f, conn)
				}
				out := replayOutput{ReplayResult: res}
				if d := res.Divergence; d != nil {
					out.Event = divergentEvent(ctx, conn.store(), run, d.Seq)
				}
				if asJSON {
					if err := writeDoc(stdout, out); err != nil {
						return err
					}
				} else {
					fmt.Fprint(stdout, ensureNewline(res.Text()))
					if out.Event != nil {
						b, _ := json.Marshal(out.Event)
						fmt.Fprintf(stdout, "  event:    %s\n", b)
					}
				}
				if verify && !res.Verified {
					return &exitError{code: exitGeneric}
				}
				return nil
			})
		},
	}
	c.Flags().StringVar(&run, "run", "", "the run id")
	c.Flags().BoolVar(&verify, "verify", false, "exit 1 when replay diverges from the log")
	c.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	addQueryEngineFlags(c, &f)
	return wireCommand(c, stderr)
}

// divergentEvent loads the run's event at seq, or nil.
func divergentEvent(ctx context.Context, store events.Store, run string, seq uint64) *events.Envelope {
	envs, err := store.LoadRun(ctx, run)
	if err != nil {
		return nil
	}
	for i := range envs {
		if envs[i].Seq == seq {
			return &envs[i]
		}
	}
	return nil
}
