package engine_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/machines"
	"github.com/switchyard-dev/switchyard/policy"
)

// flakyWatchStore is a Store whose watches fail the way they do while the
// server is down: the first Watch is refused, the second ends after one
// event (the connection dropped), later ones work. Each Watch records the
// sequence it resumed after.
type flakyWatchStore struct {
	events.Store
	calls  atomic.Int32
	afters []uint64
}

func (s *flakyWatchStore) Watch(ctx context.Context, run string, after uint64) (<-chan events.Envelope, error) {
	s.afters = append(s.afters, after)
	switch s.calls.Add(1) {
	case 1:
		return nil, errors.New("nats: connection closed")
	case 2:
		in, err := s.Store.Watch(ctx, run, after)
		if err != nil {
			return nil, err
		}
		out := make(chan events.Envelope, 1)
		go func() {
			defer close(out)
			if env, ok := <-in; ok {
				out <- env
			}
		}()
		return out, nil
	}
	return s.Store.Watch(ctx, run, after)
}

// TestFaultsWaitResumesItsWatch proves that Wait (which `switchyard run`
// uses to follow a run on a serve) rides out a server that goes away: a
// refused watch and a watch that ends early are retried, resuming after
// the last event seen, and Wait returns the final report with every lane
// change reported once. (Found by TestFaultsEngineCrash: a SIGKILLed serve
// made a waiting `switchyard run --nats` exit 1.)
func TestFaultsWaitResumesItsWatch(t *testing.T) {
	t.Parallel()
	h := newHarness(t, memory)
	h.run()
	run := h.submit(sheet("", "bug-fix: codex:gpt-5.6-sol@high"), "bug-fix", policy.ReadOnly)
	job := h.nextJob(events.JobSubject("codex"))
	h.execute(job, "success")
	h.report(job, events.ReportClaimed)
	h.report(job, events.ReportFinished)
	h.waitFinal(run)

	flaky := &flakyWatchStore{Store: h.store}
	cfg := h.cfg
	cfg.Store = flaky
	client, err := engine.New(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	var to []machines.State
	rep, err := client.Wait(ctx, run, func(c engine.LaneChange) { to = append(to, c.To) })
	require.NoError(t, err)
	require.True(t, rep.Final)
	require.Equal(t, []machines.State{machines.StateLaunching, machines.StateRunning, machines.StateTerminal, machines.StateComplete}, to)
	require.GreaterOrEqual(t, len(flaky.afters), 3)
	require.Equal(t, uint64(0), flaky.afters[0])
	require.Equal(t, uint64(0), flaky.afters[1])
	require.NotZero(t, flaky.afters[2], "the third watch resumes after the event the second delivered")
	h.verifyReplay(run)
}
