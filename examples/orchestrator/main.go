// Command orchestrator is an orchestrator built on the Go client (package
// client): it connects to a data directory's `switchyard serve`, submits a
// three-seat writer panel, follows its lanes as they change, answers the
// verdict a writer lane waits for when its first attempt failed after
// starting, and prints the run report.
//
//	go run ./examples/orchestrator -data-dir DIR -checkout REPO
//
// A `switchyard serve --data-dir DIR` and a `switchyard worker --data-dir
// DIR --provider grok,devin` must run. REPO must be a git work tree with a
// commit: the panel runs isolated-write, each writer in a fresh worktree
// of its HEAD. orchestrator_test.go runs it against a real serve and
// worker on the simulated provider CLIs (testdata/simcli), in CI.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"time"

	"github.com/switchyard-dev/switchyard/client"
	"github.com/switchyard-dev/switchyard/engine"
)

// panelSheet is the model sheet: three writer seats, each with a fallback.
// grok and devin are subscription routes; a seat falls back on a failed
// attempt too (terminal-failure), which for a writer that started first
// waits for the parent's verdict on its partial work.
const panelSheet = `# orchestrator example: a three-seat writer panel.
# access: {"provider":"grok","funding":"included","capacity":"standard","apiSpend":"approved","provenance":"user"}
# access: {"provider":"devin","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
# fallback: {"on":["usage-exhausted","route-unavailable","terminal-failure"]}
swarm workers: grok:grok-4.7@xhigh -> devin:swe-2@high, devin:swe-2@high -> grok:grok-4.7@high, devin:swe-2@medium -> grok:grok-4.7@high
`

func main() {
	dataDir := flag.String("data-dir", "", "the data directory a switchyard serve serves (default: the CLI's default)")
	checkout := flag.String("checkout", "", "the git checkout the panel works in (required)")
	runID := flag.String("run-id", "", "the run id (default: a fresh one); submitting the same id again follows the same run")
	limit := flag.Duration("timeout", 5*time.Minute, "give up after this long")
	flag.Parse()
	if *checkout == "" {
		fmt.Fprintln(os.Stderr, "orchestrator: -checkout REPO is required")
		os.Exit(64)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *limit)
	defer cancel()
	if err := orchestrate(ctx, *dataDir, *checkout, *runID); err != nil {
		fmt.Fprintln(os.Stderr, "orchestrator:", err)
		os.Exit(1)
	}
}

func orchestrate(ctx context.Context, dataDir, checkout, runID string) error {
	c, err := client.Dial(ctx, client.Options{DataDir: dataDir})
	switch {
	case errors.Is(err, client.ErrUnavailable):
		return fmt.Errorf("%w\n(start `switchyard serve` and a worker first)", err)
	case err != nil:
		return err
	}
	defer c.Close()
	fmt.Printf("connected to %s\n", c.Describe())

	run, err := c.Submit(ctx, client.RunRequest{
		RunID:  runID,
		Sheet:  []byte(panelSheet),
		Role:   "swarm workers",
		Parent: "claude",
		Prompt: []byte("Fix the typo in README.md and say what you changed.\n"),
		// Every writer starts from a fresh worktree of this checkout's
		// HEAD; the checkout itself is never written.
		Checkout: checkout,
		Mode:     "isolated-write",
		// grok and devin bring no containment of their own; the worker's
		// sandbox contains them where the kernel allows, and the run
		// accepts them where it does not.
		AllowUnverifiedContainment: []string{"grok", "devin"},
	})
	if err != nil {
		return fmt.Errorf("submit: %w", err)
	}
	fmt.Printf("submitted run %s\n", run.ID())

	answered := map[int]bool{}
	for ch, err := range run.Watch(ctx) {
		if err != nil {
			return fmt.Errorf("watch: %w", err)
		}
		line := fmt.Sprintf("lane %d: %s -> %s", ch.Lane, ch.From, ch.To)
		if ch.Descriptor != "" {
			line += " (" + ch.Descriptor + ")"
		}
		if ch.WaitingFor != "" {
			line += ", waiting for " + string(ch.WaitingFor)
		}
		fmt.Println(line)
		if ch.WaitingFor == engine.WaitVerdict && !answered[ch.Lane] {
			// Watch replays the run from its start: a verdict seen in
			// the history may have been answered already (this program
			// run again with the same -run-id). Answer only a lane that
			// waits now.
			st, err := run.Status(ctx)
			if err != nil {
				return err
			}
			if st.Lanes[ch.Lane].WaitingFor != engine.WaitVerdict {
				continue
			}
			// A writer that started and failed left partial work: review
			// it, then say whether the next writer may continue and from
			// which reviewed state. Here: the checkout's HEAD as it is.
			ref, err := reviewedRef(ctx, checkout)
			if err != nil {
				return err
			}
			err = run.Verdict(ctx, ch.Lane, client.Verdict{
				State:       client.VerdictClear,
				EvidenceRef: "orchestrator: reviewed lane " + fmt.Sprint(ch.Lane) + "'s partial work",
				ReviewedRef: ref,
			})
			if err != nil {
				return fmt.Errorf("verdict on lane %d: %w", ch.Lane, err)
			}
			answered[ch.Lane] = true
			fmt.Printf("answered lane %d: clear, the next writer starts from %s\n", ch.Lane, ref)
		}
	}
	rep, err := run.FinalReport(ctx)
	if err != nil {
		return err
	}
	fmt.Print(rep.Text())
	return nil
}

// reviewedRef is the commit the verdict names as reviewed: checkout's HEAD.
func reviewedRef(ctx context.Context, checkout string) (string, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", checkout, "rev-parse", "--verify", "HEAD^{commit}").Output()
	if err != nil {
		return "", fmt.Errorf("git rev-parse HEAD in %s: %v", checkout, err)
	}
	return strings.TrimSpace(string(out)), nil
}
