package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simconfig"
)

// roleClient connects the test to the serve at url as role, with the
// secret the serve wrote in dataDir, like a command of that role.
func roleClient(t *testing.T, url, dataDir string, role events.Role) *events.JetStream {
	t.Helper()
	opts := append(events.FileClientOptions(filepath.Join(dataDir, authFileName), role), nats.MaxReconnects(0))
	nc, err := events.Connect([]string{url}, opts...)
	require.NoError(t, err, "connect as %s", role)
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, err := events.OpenJetStream(ctx, nc, events.JetStreamConfig{Replicas: 1})
	require.NoError(t, err, "open the streams as %s", role)
	return js
}

// TestSecurityServeAdmitsOnlyItsUser runs a real serve, worker, run and
// cancel: the serve's credentials file is private; a process without it
// cannot connect (and the serve logs the refusal with the peer address);
// a worker's credentials cannot cancel a run (the intrusion the issue
// measured) while the parent's `switchyard cancel` can; and a job the
// engine never launched, forged with the engine's own credentials, is
// refused by the worker without a claim or a CLI process.
func TestSecurityServeAdmitsOnlyItsUser(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, map[string]string{"grok": simconfig.ScenarioLongRunning}, singleLaneSheet)
	serve := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	info := waitServeInfo(t, s.data, serve)
	st, err := os.Stat(filepath.Join(s.data, authFileName))
	require.NoError(t, err, "serve writes its credentials file")
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "only the owner can read the credentials")

	// A stranger holding nothing is refused, and the serve says so once,
	// with the peer's address.
	for range 3 {
		_, err = nats.Connect(info.URL, nats.MaxReconnects(0))
		require.ErrorContains(t, err, "Authorization Violation")
	}
	require.NoError(t, waitFor(20*time.Second, "the refusal in serve's log", func() (bool, error) {
		_, errOut := serve.output()
		return strings.Contains(errOut, "refused a connection") && strings.Contains(errOut, "peer=127.0.0.1:"), nil
	}))
	_, errOut := serve.output()
	require.Equal(t, 1, strings.Count(errOut, "refused a connection"), "refusals from one host are logged once:\n%s", errOut)

	s.start(t, "worker", "--data-dir", s.data, "--provider", "grok")
	run := s.start(t, append(s.runArgs("hillclimb"), "--run-id", "sec")...)
	reader := roleClient(t, info.URL, s.data, events.RoleReader)
	ctx := context.Background()
	require.NoError(t, waitFor(60*time.Second, "the attempt to be claimed", func() (bool, error) {
		envs, err := reader.Store().Load(ctx, "sec", 0)
		if err != nil {
			return false, nil
		}
		for _, env := range envs {
			if env.Type == events.TypeClaim {
				return true, nil
			}
		}
		return false, nil
	}))

	// A worker's credentials cannot act as a parent.
	worker := roleClient(t, info.URL, s.data, events.RoleWorker)
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = worker.Queue().PublishControl(cctx, events.Control{ID: "forged", Kind: events.ControlCancel, Run: "sec", Lane: events.RunLane,
		Cancel: &events.Cancel{Reason: "cancelled by intruder", By: "intruder"}, Time: time.Now()})
	require.True(t, events.IsPermissionDenied(err), "a worker publishing a cancel is refused by the server: %v", err)

	// A job nobody launched, published with the engine's credentials, is
	// refused by the worker: reported, never claimed, never run.
	engineJS := roleClient(t, info.URL, s.data, events.RoleEngine)
	forged := eventstest.SampleJob("sec", 0, eventstest.NewExecutionID())
	forged.Descriptor, forged.Provider, forged.Model, forged.Effort = "grok:grok-4.7@xhigh", policy.Grok, "grok-4.7", policy.EffortXHigh
	require.NoError(t, engineJS.Queue().PublishJob(ctx, events.JobSubject("grok"), forged))
	reports, err := reader.Queue().SubscribeReports(ctx, "sec", 0)
	require.NoError(t, err)
	var refused *events.Report
	deadline := time.After(60 * time.Second)
	for refused == nil {
		select {
		case rd := <-reports:
			if rd.Err == nil && rd.Report.ExecutionID == forged.ExecutionID {
				require.Equal(t, events.ReportRefused, rd.Report.Kind, "the forged job's only report is its refusal")
				refused = &rd.Report
			}
		case <-deadline:
			t.Fatal("no refused report for the forged job within 60s")
		}
	}
	require.Equal(t, events.RefusalNoLaunch, refused.Refusal)
	_, err = reader.Claims().Inspect(ctx, forged.ExecutionID)
	require.True(t, errors.Is(err, events.ErrNotFound), "the forged execution was never claimed: %v", err)

	// The parent's cancel goes through, and it is the only cancel.
	res := s.run(t, 60*time.Second, "cancel", "--data-dir", s.data, "--run", "sec", "--reason", "the parent's cancel")
	require.Zero(t, res.code, "cancel: %s", res.stderr)
	select {
	case <-run.done:
	case <-time.After(90 * time.Second):
		t.Fatal("the run did not end after its cancel")
	}
	envs, err := reader.Store().Load(ctx, "sec", events.RunLane)
	require.NoError(t, err)
	var reasons []string
	for _, env := range envs {
		if c, ok := env.Payload.(events.Cancel); ok {
			reasons = append(reasons, c.Reason)
		}
	}
	require.Equal(t, []string{"the parent's cancel"}, reasons, "only the parent's cancel is recorded")

	// The refusal is audited in the lane's log.
	lane, err := reader.Store().Load(ctx, "sec", 0)
	require.NoError(t, err)
	var audited []string
	for _, env := range lane {
		if a, ok := env.Payload.(events.Audit); ok && a.Reason == events.AuditRefusedJob {
			audited = append(audited, a.ExecutionID)
		}
	}
	require.Equal(t, []string{forged.ExecutionID}, audited, "the engine records the worker's refusal")
}
