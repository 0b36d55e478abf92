package eventstest

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// SampleCapacityReport is a valid measured report of provider acquired at
// at (UTC, no monotonic reading, so it compares equal after a round trip):
// a 5h window at 42% and a 7d window at 17.5%, with an eligible execution
// eligibility for codex, the provider that has one.
func SampleCapacityReport(provider policy.Provider, at time.Time) policy.CapacityReport {
	at = at.UTC().Round(0)
	reset := at.Add(3 * time.Hour)
	r := policy.CapacityReport{
		SchemaVersion: policy.CapacitySchemaVersion,
		Provider:      provider,
		Snapshot: policy.CapacitySnapshot{
			SchemaVersion: policy.CapacitySchemaVersion, Provider: provider, Source: policy.QuotaLiveHTTP,
			State: policy.CapacityMeasured, SignedIn: ptr(true),
			Windows: []policy.CapacityWindow{
				{Name: "5h", UsedPercent: ptr(42.0), WindowMinutes: ptr(300), ResetsAt: &reset},
				{Name: "7d", UsedPercent: ptr(17.5), WindowMinutes: ptr(10080)},
			},
			AcquiredAt: at,
		},
	}
	if provider == policy.Codex {
		r.Snapshot.Source = policy.QuotaLiveRPC
		r.Eligibility = &policy.ExecutionEligibility{SchemaVersion: policy.EligibilitySchemaVersion,
			Provider: provider, State: policy.EligibilityEligible, ObservedAt: at}
	}
	return r
}

// RunCapacityConformance checks the Capacity contract. newCapacity must
// return a store holding no report (a fresh one, or the shared bucket
// emptied). A store has only one key per provider, so the subtests run one
// after another.
func RunCapacityConformance(t *testing.T, newCapacity func(t *testing.T) events.Capacity) {
	t.Run("put, get and list in provider order", func(t *testing.T) { capacityPutGetList(t, newCapacity(t)) })
	t.Run("a newer report replaces; an older or equally old one is ignored", func(t *testing.T) { capacityNewerWins(t, newCapacity(t)) })
	t.Run("racing puts end with the newest report", func(t *testing.T) { capacityRacingPuts(t, newCapacity(t)) })
	t.Run("bad reports are refused and change nothing", func(t *testing.T) { capacityRejects(t, newCapacity(t)) })
	t.Run("a refresh request reaches that provider's subscribers only", func(t *testing.T) { capacityRefreshRouting(t, newCapacity(t)) })
	t.Run("stop and a done context end a subscription", func(t *testing.T) { capacityRefreshStop(t, newCapacity(t)) })
	t.Run("invalid arguments", func(t *testing.T) { capacityInvalidArgs(t, newCapacity(t)) })
}

var capT0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func capacityPutGetList(t *testing.T, c events.Capacity) {
	ctx := testCtx(t)
	_, err := c.Get(ctx, policy.Codex)
	require.ErrorIs(t, err, events.ErrNoCapacityReport)
	require.ErrorContains(t, err, "codex", "the error names the provider")
	list, err := c.List(ctx)
	require.NoError(t, err)
	require.Empty(t, list)

	var put []policy.CapacityReport
	for i, p := range []policy.Provider{policy.Gemini, policy.OpenCode, policy.Codex, policy.Claude} {
		r := SampleCapacityReport(p, capT0.Add(time.Duration(i)*time.Minute))
		require.NoError(t, c.Put(ctx, r))
		put = append(put, r)
	}
	got, err := c.Get(ctx, policy.Codex)
	require.NoError(t, err)
	require.Equal(t, put[2], got)
	_, err = c.Get(ctx, policy.Grok)
	require.ErrorIs(t, err, events.ErrNoCapacityReport)

	list, err = c.List(ctx)
	require.NoError(t, err)
	require.Equal(t, []policy.CapacityReport{put[3], put[2], put[1], put[0]}, list,
		"events.CapacityProviders order: claude, codex, opencode, then gemini")

	// Unknown and unsupported reports are kept as they are, never turned
	// into a measurement.
	unknown := SampleCapacityReport(policy.Claude, capT0.Add(time.Hour))
	unknown.Snapshot.State, unknown.Snapshot.Reason, unknown.Snapshot.Windows, unknown.Snapshot.SignedIn = policy.CapacityUnknown, "token_expired", nil, nil
	unsupported := SampleCapacityReport(policy.Cursor, capT0)
	unsupported.Snapshot.Source, unsupported.Snapshot.State, unsupported.Snapshot.Reason, unsupported.Snapshot.Windows = policy.QuotaUnsupported, policy.CapacityUnsupported, "no_source", nil
	unsupported.LearnedExhaustion = &policy.LearnedExhaustion{At: capT0, Until: capT0.Add(time.Hour)}
	for _, r := range []policy.CapacityReport{unknown, unsupported} {
		require.NoError(t, c.Put(ctx, r))
		got, err := c.Get(ctx, r.Provider)
		require.NoError(t, err)
		require.Equal(t, r, got)
	}
}

func capacityNewerWins(t *testing.T, c events.Capacity) {
	ctx := testCtx(t)
	first := SampleCapacityReport(policy.Grok, capT0)
	require.NoError(t, c.Put(ctx, first))
	newer := SampleCapacityReport(policy.Grok, capT0.Add(time.Second))
	*newer.Snapshot.Windows[0].UsedPercent = 99
	require.NoError(t, c.Put(ctx, newer))
	get := func() policy.CapacityReport {
		t.Helper()
		r, err := c.Get(ctx, policy.Grok)
		require.NoError(t, err)
		return r
	}
	require.Equal(t, newer, get())

	older := SampleCapacityReport(policy.Grok, capT0.Add(-time.Hour))
	older.Snapshot.State, older.Snapshot.Reason, older.Snapshot.Windows = policy.CapacityUnknown, "timeout", nil
	require.NoError(t, c.Put(ctx, older), "an older report is no error")
	require.Equal(t, newer, get(), "an older report never rolls the state back")

	same := SampleCapacityReport(policy.Grok, capT0.Add(time.Second))
	*same.Snapshot.Windows[0].UsedPercent = 1
	require.NoError(t, c.Put(ctx, same))
	require.Equal(t, newer, get(), "only a strictly later acquisition replaces")

	// The same instant in another zone is the same instant; a newer report
	// written from another zone reads back in UTC.
	cet := time.FixedZone("CET", 3600)
	zoned := SampleCapacityReport(policy.Grok, capT0.Add(time.Second))
	zoned.Snapshot.AcquiredAt = zoned.Snapshot.AcquiredAt.In(cet)
	require.NoError(t, c.Put(ctx, zoned))
	require.Equal(t, newer, get())
	later := SampleCapacityReport(policy.Grok, capT0.Add(2*time.Second))
	zoned = SampleCapacityReport(policy.Grok, capT0.Add(2*time.Second))
	zoned.Snapshot.AcquiredAt = zoned.Snapshot.AcquiredAt.In(cet)
	reset := zoned.Snapshot.Windows[0].ResetsAt.In(cet)
	zoned.Snapshot.Windows[0].ResetsAt = &reset
	require.NoError(t, c.Put(ctx, zoned))
	require.Equal(t, later, get())
}

func capacityRacingPuts(t *testing.T, c events.Capacity) {
	const writers, each = 6, 5
	var reports []policy.CapacityReport
	for i := range writers * each {
		r := SampleCapacityReport(policy.Devin, capT0.Add(time.Duration(i)*time.Second))
		*r.Snapshot.Windows[0].UsedPercent = float64(i)
		reports = append(reports, r)
	}
	newest := reports[len(reports)-1]
	rand.Shuffle(len(reports), func(a, b int) { reports[a], reports[b] = reports[b], reports[a] })
	var wg sync.WaitGroup
	errs := make([]error, writers)
	start := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for _, r := range reports[w*each : (w+1)*each] {
				if err := c.Put(context.Background(), r); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	for w, err := range errs {
		require.NoError(t, err, "writer %d", w)
	}
	got, err := c.Get(testCtx(t), policy.Devin)
	require.NoError(t, err)
	require.Equal(t, newest, got, "whatever the order of the writes, the latest acquisition is current")
}

func capacityRejects(t *testing.T, c events.Capacity) {
	ctx := testCtx(t)
	good := SampleCapacityReport(policy.Codex, capT0)
	require.NoError(t, c.Put(ctx, good))
	// Each row breaks one rule; the refusal is ErrInvalid and names the
	// field at fault.
	for _, tc := range []struct {
		name, field string
		edit        func(r *policy.CapacityReport)
	}{
		{"unknown provider", "provider", func(r *policy.CapacityReport) {
			r.Provider, r.Snapshot.Provider, r.Eligibility.Provider = "openai", "openai", "openai"
		}},
		{"no schema version", "schema_version", func(r *policy.CapacityReport) { r.SchemaVersion = 0 }},
		{"future snapshot schema", "schema_version", func(r *policy.CapacityReport) { r.Snapshot.SchemaVersion = 2 }},
		{"snapshot of another provider", "provider", func(r *policy.CapacityReport) { r.Snapshot.Provider = policy.Claude }},
		{"unknown source", "source", func(r *policy.CapacityReport) { r.Snapshot.Source = "LIVE_GUESS" }},
		{"unknown state", "state", func(r *policy.CapacityReport) { r.Snapshot.State = "fine" }},
		{"unknown without a reason", "reason", func(r *policy.CapacityReport) {
			r.Snapshot.State, r.Snapshot.Windows = policy.CapacityUnknown, nil
		}},
		{"unknown with a reason outside the vocabulary", "reason", func(r *policy.CapacityReport) {
			r.Snapshot.State, r.Snapshot.Reason, r.Snapshot.Windows = policy.CapacityUnknown, "flaky", nil
		}},
		{"measured with a reason", "reason", func(r *policy.CapacityReport) { r.Snapshot.Reason = "timeout" }},
		{"unsupported state of a live source", "state", func(r *policy.CapacityReport) {
			r.Snapshot.State, r.Snapshot.Reason, r.Snapshot.Windows = policy.CapacityUnsupported, "no_source", nil
		}},
		{"percentage over 100", "used_percent", func(r *policy.CapacityReport) { *r.Snapshot.Windows[0].UsedPercent = 100.5 }},
		{"negative percentage", "used_percent", func(r *policy.CapacityReport) { *r.Snapshot.Windows[0].UsedPercent = -1 }},
		{"window without a name", "name", func(r *policy.CapacityReport) { r.Snapshot.Windows[1].Name = "" }},
		{"window of no length", "window_minutes", func(r *policy.CapacityReport) { *r.Snapshot.Windows[0].WindowMinutes = 0 }},
		{"no acquisition time", "acquired_at", func(r *policy.CapacityReport) { r.Snapshot.AcquiredAt = time.Time{} }},
		{"eligibility of another provider", "provider", func(r *policy.CapacityReport) { r.Eligibility.Provider = policy.Claude }},
		{"unknown eligibility state", "state", func(r *policy.CapacityReport) { r.Eligibility.State = "maybe" }},
		{"unknown eligibility reason", "reasons", func(r *policy.CapacityReport) {
			r.Eligibility.State, r.Eligibility.Reasons = policy.EligibilityUnknown, []policy.EligibilityReason{"vibes"}
		}},
		{"repeated eligibility reason", "reasons", func(r *policy.CapacityReport) {
			r.Eligibility.State, r.Eligibility.Reasons = policy.EligibilityPolicyBlocked, []policy.EligibilityReason{"credits_present", "credits_present"}
		}},
		{"eligibility without observation time", "observed_at", func(r *policy.CapacityReport) { r.Eligibility.ObservedAt = time.Time{} }},
		{"learned exhaustion ending before it began", "until", func(r *policy.CapacityReport) {
			r.LearnedExhaustion = &policy.LearnedExhaustion{At: capT0, Until: capT0.Add(-time.Minute)}
		}},
	} {
		r := SampleCapacityReport(policy.Codex, capT0.Add(time.Hour))
		tc.edit(&r)
		err := c.Put(ctx, r)
		require.ErrorIs(t, err, events.ErrInvalid, tc.name)
		require.ErrorContains(t, err, tc.field, tc.name)
	}
	got, err := c.Get(ctx, policy.Codex)
	require.NoError(t, err)
	require.Equal(t, good, got, "no refused report was stored")
}

// refreshRecorder records the providers a subscription's fn receives.
type refreshRecorder struct {
	mu   sync.Mutex
	got  []policy.Provider
	seen chan policy.Provider
}

func newRefreshRecorder() *refreshRecorder {
	return &refreshRecorder{seen: make(chan policy.Provider, 100)}
}

func (r *refreshRecorder) fn(p policy.Provider) {
	r.mu.Lock()
	r.got = append(r.got, p)
	r.mu.Unlock()
	r.seen <- p
}

func (r *refreshRecorder) received() []policy.Provider {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// await waits (generously: a busy machine) until want has been received.
func (r *refreshRecorder) await(t *testing.T, want policy.Provider) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case p := <-r.seen:
			if p == want {
				return
			}
		case <-deadline:
			t.Fatalf("no refresh request for %s arrived in 30s; got %v", want, r.received())
		}
	}
}

// quiet is how long a test watches for a request that must not arrive,
// after everything that was sent before it has arrived.
const quiet = 300 * time.Millisecond

func capacityRefreshRouting(t *testing.T, c events.Capacity) {
	ctx := context.Background() // no deadline: subscribing and asking need none
	codex, others := newRefreshRecorder(), newRefreshRecorder()
	stopA, err := c.SubscribeRefresh(ctx, []policy.Provider{policy.Codex}, codex.fn)
	require.NoError(t, err)
	t.Cleanup(stopA)
	stopB, err := c.SubscribeRefresh(ctx, []policy.Provider{policy.Claude, policy.Grok, policy.Claude}, others.fn)
	require.NoError(t, err)
	t.Cleanup(stopB)

	require.NoError(t, c.RequestRefresh(ctx, policy.Codex))
	codex.await(t, policy.Codex)
	require.NoError(t, c.RequestRefresh(ctx, policy.Grok))
	others.await(t, policy.Grok)
	require.NoError(t, c.RequestRefresh(ctx, policy.Claude))
	others.await(t, policy.Claude)
	require.NoError(t, c.RequestRefresh(ctx, policy.Devin), "a request nobody listens to is no error")
	time.Sleep(quiet)
	require.Equal(t, []policy.Provider{policy.Codex}, codex.received(), "the codex subscriber hears codex only")
	require.ElementsMatch(t, []policy.Provider{policy.Grok, policy.Claude}, others.received(), "the other subscriber hears its own providers only")
}

func capacityRefreshStop(t *testing.T, c events.Capacity) {
	ctx := testCtx(t)
	stopped, cancelled, live := newRefreshRecorder(), newRefreshRecorder(), newRefreshRecorder()
	stop, err := c.SubscribeRefresh(ctx, []policy.Provider{policy.Antigravity}, stopped.fn)
	require.NoError(t, err)
	require.NoError(t, c.RequestRefresh(ctx, policy.Antigravity))
	stopped.await(t, policy.Antigravity)
	stop()
	stop() // idempotent

	sctx, cancel := context.WithCancel(ctx)
	stop2, err := c.SubscribeRefresh(sctx, []policy.Provider{policy.Antigravity}, cancelled.fn)
	require.NoError(t, err)
	t.Cleanup(stop2)
	require.NoError(t, c.RequestRefresh(ctx, policy.Antigravity))
	cancelled.await(t, policy.Antigravity)
	cancel()
	stop2() // returns at once after the context ended

	stop3, err := c.SubscribeRefresh(ctx, []policy.Provider{policy.Antigravity}, live.fn)
	require.NoError(t, err)
	t.Cleanup(stop3)
	require.NoError(t, c.RequestRefresh(ctx, policy.Antigravity))
	live.await(t, policy.Antigravity)
	time.Sleep(quiet)
	require.Len(t, stopped.received(), 1, "a stopped subscription hears nothing more")
	require.Len(t, cancelled.received(), 1, "a subscription whose context ended hears nothing more")
}

func capacityInvalidArgs(t *testing.T, c events.Capacity) {
	ctx := testCtx(t)
	_, err := c.Get(ctx, "Codex")
	require.ErrorIs(t, err, events.ErrInvalid)
	_, err = c.Get(ctx, "")
	require.ErrorIs(t, err, events.ErrInvalid)
	require.ErrorIs(t, c.RequestRefresh(ctx, "codex.>"), events.ErrInvalid)
	fn := func(policy.Provider) {}
	for _, ps := range [][]policy.Provider{nil, {}, {"openai"}, {policy.Codex, "*"}} {
		_, err = c.SubscribeRefresh(ctx, ps, fn)
		require.ErrorIs(t, err, events.ErrInvalid, "%v", ps)
	}
	_, err = c.SubscribeRefresh(ctx, []policy.Provider{policy.Codex}, nil)
	require.ErrorIs(t, err, events.ErrInvalid)
}
