package events_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestWorkerCommandServeAndRequest: over a real embedded server, an
// allowlisted command reaches the handler and its reply decodes strictly;
// a command outside the allowlist, a malformed body and another schema are
// refused without calling the handler; after stop nobody answers.
func TestWorkerCommandServeAndRequest(t *testing.T) {
	t.Parallel()
	srv := eventstest.StartServer(t)
	nc := srv.Conn()
	var calls atomic.Int32
	stop, err := events.ServeCommands(nc, "wk-1", func(_ context.Context, cmd string, req events.CommandRequest) events.CommandReply {
		calls.Add(1)
		if cmd == events.CommandTransportStatus {
			return events.CommandReply{Transport: &events.TransportStatus{WorkerID: "wk-1", Connected: true,
				Providers: []policy.Provider{policy.Codex}, Running: []events.RunningAttempt{}}}
		}
		return events.CommandReply{Capabilities: &events.Capabilities{Provider: req.Provider, Binaries: []string{"codex"},
			KnownVersions: []string{}, Containment: []events.ContainmentEntry{}, QuotaSource: policy.QuotaLiveRPC, Concurrency: 2}}
	})
	require.NoError(t, err)

	ctx := context.Background()
	r, err := events.RequestCommand(ctx, nc, "wk-1", events.CommandCapabilities, policy.Codex, 0)
	require.NoError(t, err)
	require.Equal(t, events.CommandSchemaVersion, r.Schema)
	require.Equal(t, "wk-1", r.WorkerID)
	require.Equal(t, policy.Codex, r.Capabilities.Provider)
	r, err = events.RequestCommand(ctx, nc, "wk-1", events.CommandTransportStatus, "", time.Second)
	require.NoError(t, err)
	require.True(t, r.Transport.Connected)
	require.Equal(t, int32(2), calls.Load())

	raw := func(cmd, body string) events.CommandReply {
		m, err := nc.Request(events.CommandSubject("wk-1", cmd), []byte(body), 10*time.Second)
		require.NoError(t, err)
		r, err := events.DecodeCommandReply(m.Data)
		require.NoError(t, err)
		return r
	}
	require.Contains(t, raw("shell", `{"schema":1}`).Error, "unknown worker command")
	require.Contains(t, raw(events.CommandCapabilities, `{"schema":1,"provider":"codex","env":"x"}`).Error, "malformed request")
	require.Contains(t, raw(events.CommandCapabilities, `{"schema":2,"provider":"codex"}`).Error, "schema 2")
	require.Contains(t, raw(events.CommandCapabilities, `{"schema":1}`).Error, "needs a provider")
	require.Contains(t, raw(events.CommandCapabilities, `{"schema":1,"provider":"a.b"}`).Error, "not a provider name")
	require.Equal(t, int32(2), calls.Load(), "a refused request reached the handler")

	_, err = events.RequestCommand(ctx, nc, "wk-1", "shell", "", time.Second)
	require.ErrorIs(t, err, events.ErrInvalid)

	stop()
	_, err = events.RequestCommand(ctx, nc, "wk-1", events.CommandTransportStatus, "", 300*time.Millisecond)
	require.ErrorIs(t, err, events.ErrNoCommandReply)
}

// TestDecodeCommandReplyStrict: unknown keys, another schema, and replies
// with zero or two answers are refused.
func TestDecodeCommandReplyStrict(t *testing.T) {
	t.Parallel()
	for _, b := range []string{
		`{"schema":1,"workerId":"w","command":"capabilities"}`,
		`{"schema":1,"workerId":"w","command":"x","error":"e","token":"t"}`,
		`{"schema":9,"workerId":"w","command":"x","error":"e"}`,
		`{"schema":1,"workerId":"w","command":"x","error":"e","transport":{"workerId":"w","connected":true,"providers":[],"leases":0,"running":[]}}`,
		`not json`,
		strings.Repeat(" ", 70<<10),
	} {
		_, err := events.DecodeCommandReply([]byte(b))
		require.Error(t, err, b[:min(len(b), 60)])
	}
	r, err := events.DecodeCommandReply([]byte(`{"schema":1,"workerId":"w","command":"x","error":"e"}`))
	require.NoError(t, err)
	require.Equal(t, "e", r.Error)
}
