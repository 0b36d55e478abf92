package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/machines"
)

// TestServeWorkerRunInSeparateProcesses: serve on a free loopback port,
// a worker and a run pointed at it with --nats, status finding the serve
// through serve.json, and a clean SIGTERM shutdown of both.
func TestServeWorkerRunInSeparateProcesses(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, map[string]string{"codex": "usage-exhausted"}, panelSheet3)

	serve := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	info := waitServeInfo(t, s.data, serve)
	require.Equal(t, "serve", info.Kind)
	require.Equal(t, s.data, info.DataDir)
	require.Equal(t, serve.cmd.Process.Pid, info.PID)
	waitOutput(t, serve, "switchyard serve: data directory "+s.data+" on "+info.URL)

	// A second serve of the same directory is refused, naming the first.
	r := s.run(t, 30*time.Second, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	require.Equal(t, 1, r.code, r.stdout)
	require.Contains(t, r.stderr, "is already served by serve (pid")

	// The worker finds the serve through serve.json; run is pointed at it
	// with --nats.
	worker := s.start(t, "worker", "--provider", "codex,grok,devin", "--data-dir", s.data)
	waitOutput(t, worker, fmt.Sprintf("switchyard worker: codex,grok,devin (concurrency 2) on the serve of %s (pid %d, %s)", s.data, info.PID, info.URL))

	r = s.run(t, 60*time.Second, s.runArgs("swarm workers", "--run-id", "served", "--nats", info.URL, "--json")...)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.Contains(t, r.stderr, "on NATS "+info.URL+"\n")
	var rep engine.RunReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), r.stdout)
	require.True(t, rep.Final)
	require.Equal(t, "grok:grok-4.7@xhigh", rep.Lanes[0].Success)

	// Without --nats, commands find the serve through serve.json.
	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--run", "served", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var st engine.RunStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st), r.stdout)
	require.True(t, st.Final)

	// status --watch --run follows the served run: its lane changes, then
	// its status, and it exits because the run is final.
	r = s.run(t, 30*time.Second, "status", "--data-dir", s.data, "--run", "served", "--watch")
	require.Equal(t, 0, r.code, r.stderr)
	require.True(t, strings.HasPrefix(r.stdout, "swarm workers#"), r.stdout)
	require.Contains(t, r.stdout, "swarm workers#1 (lane 0): terminal codex:gpt-5.6-sol@high (usage-exhausted)\n")
	require.Contains(t, r.stdout, "\nrun served: role \"swarm workers\", parent claude, read-only, final\n")

	// An answer to a lane that waits for nothing says where it stands.
	r = s.run(t, 30*time.Second, "inspect", "--data-dir", s.data, "--run", "served", "--lane", "0", "--state", "clear", "--evidence", "x")
	require.Equal(t, 1, r.code, r.stdout)
	require.Contains(t, r.stderr, "run served lane 0 is "+string(machines.StateComplete))

	r = s.run(t, 30*time.Second, "replay", "--nats", info.URL, "--data-dir", s.data, "--run", "served", "--verify")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)

	require.Equal(t, 0, worker.stop(t))
	require.Equal(t, 0, serve.stop(t))
	out, _ := serve.output()
	require.Contains(t, out, "switchyard serve: stopped\n")
	_, err := os.Stat(filepath.Join(s.data, serveInfoName))
	require.True(t, os.IsNotExist(err), "serve.json left behind: %v", err)
}
