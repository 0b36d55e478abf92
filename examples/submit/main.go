// Command submit submits many runs through the public client
// from one process: the load generator of the peers benchmark (its
// SWITCHYARD_SUBMITTER contract) and of `make bench-e2e`'s client
// scenario. It dials the serve holding --data-dir once, submits runs
// <prefix>0 … <prefix><count-1> with --concurrency submissions in flight,
// prints each accepted run id on its own line, and exits 0 once all are
// accepted (1 with the first error on stderr otherwise; 64 for bad flags).
//
//	switchyard-submit --data-dir D --sheet S --role "swarm workers" \
//	  --parent claude --prompt P --cwd C --allow-unknown-quota codex \
//	  --count 300 --concurrency 16 --run-id-prefix k
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/switchyard-dev/switchyard/client"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	fs := flag.NewFlagSet("switchyard-submit", flag.ContinueOnError)
	dataDir := fs.String("data-dir", "", "the data directory a `switchyard serve` holds (default: the CLI's)")
	sheetPath := fs.String("sheet", "", "the model sheet file (required)")
	role := fs.String("role", "", "the role to resolve (required)")
	parent := fs.String("parent", "", "the parent harness: claude or codex (required)")
	promptPath := fs.String("prompt", "", "the prompt file (required)")
	cwd := fs.String("cwd", "", "the checkout the runs are for (required)")
	allow := fs.String("allow-unknown-quota", "", "comma-separated providers whose unknown quota the runs accept")
	count := fs.Int("count", 1, "how many runs to submit")
	conc := fs.Int("concurrency", 16, "submissions in flight at once")
	prefix := fs.String("run-id-prefix", "", "run ids are <prefix>0 … <prefix><count-1> (required)")
	if err := fs.Parse(args); err != nil {
		return 64
	}
	switch {
	case fs.NArg() > 0:
		return usage("unexpected argument %q", fs.Arg(0))
	case *sheetPath == "" || *role == "" || *parent == "" || *promptPath == "" || *cwd == "" || *prefix == "":
		return usage("--sheet, --role, --parent, --prompt, --cwd and --run-id-prefix are required")
	case *count < 1:
		return usage("--count %d: want at least 1", *count)
	case *conc < 1:
		return usage("--concurrency %d: want at least 1", *conc)
	}
	sheet, err := os.ReadFile(*sheetPath)
	if err != nil {
		return usage("--sheet: %v", err)
	}
	prompt, err := os.ReadFile(*promptPath)
	if err != nil {
		return usage("--prompt: %v", err)
	}
	var providers []string
	for p := range strings.SplitSeq(*allow, ",") {
		if p = strings.TrimSpace(p); p != "" {
			providers = append(providers, p)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := client.Dial(ctx, client.Options{DataDir: *dataDir})
	if err != nil {
		fmt.Fprintln(os.Stderr, "switchyard-submit:", err)
		return 1
	}
	defer c.Close()

	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	ids := make(chan string)
	errs := make(chan error, *conc)
	var wg sync.WaitGroup
	for range *conc {
		wg.Go(func() {
			for id := range ids {
				_, err := c.Submit(ctx, client.RunRequest{
					RunID: id, Sheet: sheet, Role: *role, Parent: *parent,
					Prompt: prompt, Checkout: *cwd, AllowUnknownQuota: providers,
				})
				if err != nil {
					errs <- fmt.Errorf("run %s: %w", id, err)
					return
				}
				mu.Lock()
				fmt.Fprintln(out, id)
				out.Flush()
				mu.Unlock()
			}
		})
	}
	var failed error
feed:
	for i := range *count {
		select {
		case ids <- *prefix + strconv.Itoa(i):
		case failed = <-errs:
			break feed
		}
	}
	close(ids)
	wg.Wait()
	if failed == nil {
		select {
		case failed = <-errs:
		default:
		}
	}
	if failed != nil {
		if errors.Is(failed, context.Canceled) {
			failed = errors.New("interrupted")
		}
		fmt.Fprintln(os.Stderr, "switchyard-submit:", failed)
		return 1
	}
	return 0
}

func usage(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "switchyard-submit: "+format+"\n", args...)
	fmt.Fprintln(os.Stderr, "usage: switchyard-submit --sheet S --role R --parent P --prompt F --cwd DIR --run-id-prefix K [--count N] [--concurrency C] [--data-dir D] [--allow-unknown-quota P,...]")
	return 64
}
