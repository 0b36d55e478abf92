package main

import (
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestWorkersCommand: `switchyard workers` lists the live workers from
// their presence records: none before a worker starts (and says how to
// start one), then the worker with its providers, concurrency, host and
// pid, in text and in --json; none again once it stopped (it withdraws).
func TestWorkersCommand(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	srv := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	waitServeInfo(t, s.data, srv)

	r := s.run(t, 30*time.Second, "workers", "--data-dir", s.data)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "no live workers on the serve of "+s.data)
	require.Contains(t, r.stdout, "start one with `switchyard worker --provider P --data-dir "+s.data+"`\n")

	wk := s.start(t, "worker", "--data-dir", s.data, "--provider", "grok,devin", "--concurrency", "3")
	waitOutput(t, wk, "switchyard worker: grok,devin")
	var live []events.WorkerPresence
	require.NoError(t, waitFor(30*time.Second, "the worker's presence", func() (bool, error) {
		r = s.run(t, 30*time.Second, "workers", "--data-dir", s.data, "--json")
		if r.code != 0 {
			return false, nil
		}
		live = nil
		if err := json.Unmarshal([]byte(r.stdout), &live); err != nil {
			return false, err
		}
		return len(live) == 1, nil
	}), "stdout: %s stderr: %s", r.stdout, r.stderr)
	requireJSONDoc(t, "workers --json", r.stdout)
	host, _ := os.Hostname()
	require.Equal(t, []policy.Provider{policy.Grok, policy.Devin}, live[0].Providers)
	require.Equal(t, 3, live[0].Concurrency)
	require.Equal(t, wk.cmd.Process.Pid, live[0].PID)
	require.Equal(t, host, live[0].Host)
	require.False(t, live[0].Seen.IsZero())

	r = s.run(t, 30*time.Second, "workers", "--data-dir", s.data)
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^WORKER\s+PROVIDERS\s+CONCURRENCY\s+HOST\s+PID\s+UP\s+SEEN\n`+
		live[0].WorkerID+`\s+grok,devin\s+3\s+\S+\s+`+strconv.Itoa(live[0].PID)+`\s+\S+\s+\S+ ago\n$`, r.stdout)

	require.Equal(t, 0, wk.stop(t))
	r = s.run(t, 30*time.Second, "workers", "--data-dir", s.data, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.JSONEq(t, "[]", r.stdout, "a stopped worker withdraws")
}
