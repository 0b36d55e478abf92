// Command benchclient is make bench-e2e's client scenario (issue 27): one
// process submits -runs runs through package client, -submit at a time,
// each followed to its final report, against a data directory's serve.
// It prints one line: the runs, the wall time from the first submission to
// the last final report, runs/s, and the p50 and p95 of each run's
// submit-to-final latency, and the process's own CPU.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/switchyard-dev/switchyard/client"
)

func main() {
	dataDir := flag.String("data-dir", "", "the data directory a switchyard serve serves")
	sheet := flag.String("sheet", "", "the model sheet file")
	role := flag.String("role", "", "the role")
	promptFile := flag.String("prompt", "", "the prompt file")
	checkout := flag.String("checkout", "", "the checkout")
	runs := flag.Int("runs", 100, "how many runs")
	submit := flag.Int("submit", 20, "runs in flight at once")
	flag.Parse()
	if err := bench(*dataDir, *sheet, *role, *promptFile, *checkout, *runs, *submit); err != nil {
		fmt.Fprintln(os.Stderr, "benchclient:", err)
		os.Exit(1)
	}
}

func bench(dataDir, sheetFile, role, promptFile, checkout string, runs, submit int) error {
	sheet, err := os.ReadFile(sheetFile)
	if err != nil {
		return err
	}
	prompt, err := os.ReadFile(promptFile)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	c, err := client.Dial(ctx, client.Options{DataDir: dataDir})
	if err != nil {
		return err
	}
	defer c.Close()
	req := client.RunRequest{Sheet: sheet, Role: role, Parent: "claude", Prompt: prompt, Checkout: checkout}
	lat := make([]time.Duration, runs)
	errs := make(chan error, runs)
	next := make(chan int)
	var wg sync.WaitGroup
	t0 := time.Now()
	for range submit {
		wg.Go(func() {
			for i := range next {
				s := time.Now()
				run, err := c.Submit(ctx, req)
				if err == nil {
					var rep client.Report
					rep, err = run.Wait(ctx)
					if err == nil && rep.Diversity.Complete == 0 {
						err = fmt.Errorf("run %s delivered nothing: %s", run.ID(), rep.Summary)
					}
				}
				if err != nil {
					errs <- err
					continue
				}
				lat[i] = time.Since(s)
			}
		})
	}
	for i := range runs {
		next <- i
	}
	close(next)
	wg.Wait()
	wall := time.Since(t0)
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	fmt.Printf("runs %d wall_ms %d runs_per_s %.2f p50_ms %d p95_ms %d client_cpu_ms %d\n",
		runs, wall.Milliseconds(), float64(runs)/wall.Seconds(), pct(0.50).Milliseconds(), pct(0.95).Milliseconds(), cpu.Milliseconds())
	return nil
}
