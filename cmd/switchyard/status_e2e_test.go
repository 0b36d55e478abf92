package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
)

// waitExit waits for a background process to end by itself and returns
// its exit code.
func waitExit(t *testing.T, p *bgProcess, limit time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(limit):
		out, errOut := p.output()
		t.Fatalf("switchyard %q did not finish within %s\nstdout:\n%s\nstderr:\n%s", p.cmd.Args[1:], limit, out, errOut)
	}
	return p.stop(t)
}

// TestStatusListNewestFirstLimitState: the run list is newest first,
// --limit cuts it (saying how many more there are), --state filters it,
// and an unknown state is a usage error naming the valid ones.
func TestStatusListNewestFirstLimitState(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	for _, id := range []string{"b-first", "a-second", "c-third"} {
		r := s.run(t, 60*time.Second, s.runArgs("hillclimb", "--run-id", id)...)
		require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	rows := func(out string) []string {
		var ids []string
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 0 && strings.Contains(f[0], "-") {
				ids = append(ids, f[0])
			}
		}
		return ids
	}
	r := s.run(t, 30*time.Second, "status", "--data-dir", s.data)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, []string{"c-third", "a-second", "b-first"}, rows(r.stdout), r.stdout)
	require.NotContains(t, r.stdout, "more;")

	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--limit", "2")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, []string{"c-third", "a-second"}, rows(r.stdout), r.stdout)
	require.Contains(t, r.stdout, "(1 more; --limit 0 lists every run)\n")

	// --json says so too, on stderr: stdout stays the JSON array (issue
	// 28, finding 23).
	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--limit", "2", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var cut []engine.RunStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &cut), r.stdout)
	require.Len(t, cut, 2)
	require.Equal(t, "switchyard status: listed the newest 2 of 3 runs (--limit 2); --limit 0 lists every run\n", r.stderr)

	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--state", "final", "--limit", "0", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var runs []engine.RunStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &runs), r.stdout)
	require.Len(t, runs, 3)
	require.Equal(t, "c-third", runs[0].Run)

	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--state", "running,waiting-for-parent")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "no running or waiting-for-parent runs in ")
	require.Contains(t, r.stdout, "(3 in other states)")

	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--state", "done")
	require.Equal(t, 64, r.code, r.stderr)
	require.Contains(t, r.stderr, `unknown run state "done"; want one or more of running, waiting-for-parent, final, cancelled`)
	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--limit", "-1")
	require.Equal(t, 64, r.code, r.stderr)
	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--run", "c-third", "--limit", "2")
	require.Equal(t, 64, r.code, r.stderr)
	require.Contains(t, r.stderr, "--limit applies to the run list")
}

// TestStatusWatchAndWorkerPresence, under a serve: run's worker hint
// appears only while no worker of the waiting provider is live; status
// lists live workers (a stopped one disappears at once) and says which
// waiting provider has none; status --watch prints each change as a line,
// never the table again.
func TestStatusWatchAndWorkerPresence(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	srv := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	waitServeInfo(t, s.data, srv)
	watch := s.start(t, "status", "--data-dir", s.data, "--watch")
	waitOutput(t, watch, "no runs in ")

	hint := "  waiting for a grok worker (none running? start one: `switchyard worker --provider grok --data-dir " + s.data + "`)\n"
	first := s.start(t, s.runArgs("hillclimb", "--run-id", "no-worker")...)
	waitOutput(t, first, hint)

	r := s.run(t, 30*time.Second, "status", "--data-dir", s.data)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "workers: none live\n")
	require.Contains(t, r.stdout, "no live worker for grok, which a lane waits for; start one: switchyard worker --provider grok --data-dir "+s.data+"\n")

	wk := s.start(t, "worker", "--data-dir", s.data, "--provider", "grok")
	require.Equal(t, 0, waitExit(t, first, 60*time.Second))

	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "workers: 1 live, for grok (1)\n")
	require.NotContains(t, r.stdout, "no live worker")

	r = s.run(t, 60*time.Second, s.runArgs("hillclimb", "--run-id", "with-worker")...)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.NotContains(t, r.stdout, "none running")

	// A run that ends within one settle window shows as new and final at
	// once; one that waited shows both changes.
	withWorker := regexp.MustCompile(`run with-worker \(hillclimb\): (new, |running -> )final; 1 complete\n`)
	require.NoError(t, waitFor(20*time.Second, "the watch's line for with-worker", func() (bool, error) {
		out, _ := watch.output()
		return withWorker.MatchString(out), nil
	}), "watch output: %s", func() string { out, _ := watch.output(); return out }())
	out, _ := watch.output()
	require.Contains(t, out, "run no-worker (hillclimb): new, running; ")
	require.Contains(t, out, "run no-worker (hillclimb): running -> final; 1 complete\n")
	require.NotContains(t, out, "RUN ", "the watch prints changes, not the table again:\n%s", out)

	require.Equal(t, 0, wk.stop(t))
	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "workers: none live\n", "a stopped worker withdraws")
}

// TestStatusSaysNothingServesAnInterruptedRun: a self-contained run
// interrupted while one lane's job is still queued leaves that lane
// waiting for a worker; status says nothing serves the data directory and
// prints the commands that resume it, and those commands do.
func TestStatusSaysNothingServesAnInterruptedRun(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, map[string]string{"grok": "long-running"}, interruptSheet)
	interruptRun(t, s, "cut")

	r := s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--run", "cut")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "nothing serves "+s.data+": no engine drives run cut (its `switchyard run` was interrupted or stopped) and no worker runs its attempts; resume with:\n"+
		"  switchyard serve --data-dir "+s.data+"\n"+
		"  switchyard worker --provider grok --data-dir "+s.data+"   (in another shell)\n")
	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "nothing serves "+s.data+": 1 unfinished run(s) do not move; resume with:\n")

	// The printed commands resume it.
	srv := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	waitServeInfo(t, s.data, srv)
	withScenarios(t, s, map[string]string{"grok": "success"}).start(t, "worker", "--provider", "grok", "--data-dir", s.data)
	r = s.run(t, 90*time.Second, "status", "--data-dir", s.data, "--run", "cut", "--watch")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "run cut: role \"swarm workers\", parent claude, read-only, final\n")
}
