package activities

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// startCommandWorker runs a worker that answers commands on its own
// connection to e's server, counting its provider lookups.
func startCommandWorker(t *testing.T, e *workerEnv, id string, lookups *atomic.Int32) (*testWorker, *nats.Conn) {
	t.Helper()
	nc, err := e.srv.Connect()
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	cfg := e.workerConfig(id)
	cfg.Commands = nc
	cfg.Concurrency = 3
	w, err := NewWorker(cfg)
	require.NoError(t, err)
	w.lookup = func(p policy.Provider) (*providers.Spec, error) {
		lookups.Add(1)
		return providers.Lookup(p)
	}
	tw := &testWorker{Worker: w, events: newObserved[workerEvent](), done: make(chan error, 1)}
	w.trace = tw.events.add
	ctx, cancel := context.WithCancel(context.Background())
	tw.cancel = cancel
	go func() { tw.done <- w.Run(ctx) }()
	t.Cleanup(func() { tw.stop(t) })
	return tw, nc
}

// askWorker retries until the worker's subscription is up (Run subscribes
// asynchronously), then returns its reply.
func askWorker(t *testing.T, nc *nats.Conn, id, command string, p policy.Provider) events.CommandReply {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for {
		r, err := events.RequestCommand(context.Background(), nc, id, command, p, 2*time.Second)
		if err == nil {
			return r
		}
		require.ErrorIs(t, err, events.ErrNoCommandReply)
		require.True(t, time.Now().Before(deadline), "worker %s never answered %s: %v", id, command, err)
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWorkerCommandsCapabilitiesAndTransport: a real worker answers
// capabilities (spec, resolved binary, containment per mode, quota source,
// its concurrency) and transport_status (connected, the execution it runs
// with its lease), and stops answering once it stops.
func TestWorkerCommandsCapabilitiesAndTransport(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, "long-running", false)
	var lookups atomic.Int32
	tw, nc := startCommandWorker(t, e, "cmd-w1", &lookups)

	r := askWorker(t, nc, "cmd-w1", events.CommandCapabilities, policy.Codex)
	require.Empty(t, r.Error)
	require.Equal(t, "cmd-w1", r.WorkerID)
	caps := r.Capabilities
	require.NotNil(t, caps)
	spec, err := providers.Lookup(policy.Codex)
	require.NoError(t, err)
	require.Equal(t, policy.Codex, caps.Provider)
	require.Equal(t, spec.Binaries, caps.Binaries)
	require.Equal(t, e.bin+"/codex", caps.BinaryPath, "the binary resolved on the worker's PATH")
	require.Equal(t, spec.QuotaSource, caps.QuotaSource)
	require.Equal(t, 3, caps.Concurrency)
	require.Len(t, caps.Containment, 2)
	for i, m := range AccessModes {
		require.Equal(t, m, caps.Containment[i].Mode)
		want := string(providers.ContainmentUnverified)
		if c, ok := spec.Containment[m]; ok && c.Class != "" {
			want = string(c.Class)
		}
		require.Equal(t, want, caps.Containment[i].Class)
	}
	require.Equal(t, int32(1), lookups.Load())

	// A provider this worker does not run is refused before any lookup.
	r = askWorker(t, nc, "cmd-w1", events.CommandCapabilities, policy.Grok)
	require.Contains(t, r.Error, "does not run provider grok")
	require.Equal(t, int32(1), lookups.Load())

	// Idle: connected, no lease, nothing running.
	r = askWorker(t, nc, "cmd-w1", events.CommandTransportStatus, "")
	require.NotNil(t, r.Transport)
	require.True(t, r.Transport.Connected)
	require.Equal(t, 0, r.Transport.Leases)
	require.Empty(t, r.Transport.Running)

	job := e.newJob(0)
	e.publish(job)
	tw.waitEvent(t, evClaimed, job.ExecutionID, 1)
	r = askWorker(t, nc, "cmd-w1", events.CommandTransportStatus, "")
	require.NotNil(t, r.Transport)
	require.Equal(t, 1, r.Transport.Leases)
	require.Equal(t, []events.RunningAttempt{{ExecutionID: job.ExecutionID}}, r.Transport.Running)
	require.Equal(t, []policy.Provider{policy.Codex}, r.Transport.Providers)

	tw.stop(t)
	_, err = events.RequestCommand(context.Background(), nc, "cmd-w1", events.CommandTransportStatus, "", 500*time.Millisecond)
	require.ErrorIs(t, err, events.ErrNoCommandReply, "a stopped worker no longer answers")
}

// TestWorkerCommandsRefuseUnknownBeforeLookup: a command outside the
// allowlist gets an error reply, and the worker never looked a provider up
// for it.
func TestWorkerCommandsRefuseUnknownBeforeLookup(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, "success", false)
	var lookups atomic.Int32
	_, nc := startCommandWorker(t, e, "cmd-w2", &lookups)
	askWorker(t, nc, "cmd-w2", events.CommandTransportStatus, "") // subscribed

	for _, cmd := range []string{"exec", "env", "run_prompt", "Capabilities"} {
		m, err := nc.Request(events.CommandSubjectPrefix+commandToken(t, "cmd-w2")+"."+cmd,
			[]byte(`{"schema":1,"provider":"codex"}`), waitLong)
		require.NoError(t, err, cmd)
		r, err := events.DecodeCommandReply(m.Data)
		require.NoError(t, err, cmd)
		require.Contains(t, r.Error, "unknown worker command", cmd)
		require.Nil(t, r.Capabilities, cmd)
	}
	require.Zero(t, lookups.Load(), "an unknown command reached the provider lookup")
	// The request helper refuses it before sending.
	_, err := events.RequestCommand(context.Background(), nc, "cmd-w2", "exec", policy.Codex, time.Second)
	require.ErrorIs(t, err, events.ErrInvalid)
}

// commandToken is the subject token of a worker id (derived from a built
// subject, so the test does not restate the digest).
func commandToken(t *testing.T, id string) string {
	s := events.CommandSubject(id, "x")
	tok := s[len(events.CommandSubjectPrefix) : len(s)-2]
	require.Len(t, tok, 32)
	return tok
}
