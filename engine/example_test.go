package engine_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// ExampleEngine runs one role to its report on the in-memory seams. The
// sheet's only attempt, claude:opus@max, is covered by a Claude-native
// agent, so the parent harness runs it (NativeNext, then NativeReport) and
// no worker or provider CLI is needed. Replay then recomputes every
// decision from the run's event log.
func ExampleEngine() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dataDir, err := os.MkdirTemp("", "switchyard-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dataDir)

	store := events.NewMemoryStore()
	eng, err := engine.New(engine.Config{
		Store: store, Queue: events.NewMemoryQueue(), Claims: events.NewMemoryClaims(nil),
		DataDir: dataDir,
		// Each provider's current capacity report, which the eligibility
		// gate reads before launching a provider route (the native attempt
		// below is not gated).
		Capacity: events.NewMemoryCapacity(),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// One Run per deployment drives every run in the store until stopped.
	runCtx, stop := context.WithCancel(ctx)
	stopped := make(chan error, 1)
	go func() { stopped <- eng.Run(runCtx) }()
	defer func() { stop(); <-stopped }()

	sheet := []byte(`# access: {"provider":"claude","funding":"included","capacity":"high","apiSpend":"deny","provenance":"user"}
judgment and prose: claude:opus@max
`)
	run, err := eng.Submit(ctx, engine.RunRequest{
		RunID: "example-run", Sheet: sheet, Role: "judgment and prose", Parent: policy.ParentClaude,
		Prompt: []byte("Summarize README.md in one sentence.\n"), Cwd: dataDir,
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	// The parent harness takes the native job (waiting for it to be
	// queued), runs it with its own subagent, writes the final response to
	// the job's output path and reports the host's terminal metadata.
	job, err := eng.NativeNext(ctx, policy.ParentClaude, true)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("native job: lane %d attempt %d %s\n", job.Lane, job.AttemptIndex, job.Descriptor)
	if err := os.WriteFile(job.Paths.Output, []byte("The README describes Switchyard.\n"), 0o600); err != nil {
		fmt.Println(err)
		return
	}
	started := true
	if err := eng.NativeReport(ctx, job.ExecutionID, policy.OutcomeComplete, &started, "host task 1"); err != nil {
		fmt.Println(err)
		return
	}

	report, err := eng.Wait(ctx, run, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("final:", report.Final, "-", report.Summary)
	for _, l := range report.Lanes {
		fmt.Printf("lane %d: %s by %s\n", l.Lane, l.State, l.Success)
	}

	replay, err := engine.Replay(ctx, store, run, policy.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("replay verified: %v (%d decisions, %d normalizations)\n", replay.Verified, replay.Decisions, replay.Normalizations)
	// Output:
	// native job: lane 0 attempt 0 claude:opus@max
	// final: true - 1 lane: 1 complete; 1 distinct provider delivered: claude
	// lane 0: complete by claude:opus@max
	// replay verified: true (2 decisions, 1 normalizations)
}
