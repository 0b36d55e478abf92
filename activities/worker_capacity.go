package activities

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
	"github.com/switchyard-dev/switchyard/providers/quota"
)

// This file holds the worker's capacity acquisition: where the CLIs and
// their logins live, the worker acquires each of its providers' capacity
// reports (quota.Acquire) and puts them into the deployment's capacity
// store, so engines and commands read the same report. It runs beside the
// job slots and never blocks them: one goroutine per provider, one
// acquisition per provider at a time, each bounded by quota's timeout.

// capacityPutTimeout bounds one Get or Put on the capacity store.
const capacityPutTimeout = 10 * time.Second

// acquisition is a request for one provider's acquisition; exhaustedAt,
// when set, is when an attempt of the provider ended usage-exhausted.
type acquisition struct {
	why         string
	exhaustedAt time.Time
}

// capacityLoop acquires and puts the reports of a worker's providers.
type capacityLoop struct {
	w *Worker
	// wake holds one pending request per provider (buffered 1): requests
	// that arrive while one is pending or running fold into it.
	wake map[policy.Provider]chan struct{}

	mu      sync.Mutex
	pending map[policy.Provider]acquisition
}

func newCapacityLoop(w *Worker) *capacityLoop {
	l := &capacityLoop{w: w, wake: map[policy.Provider]chan struct{}{}, pending: map[policy.Provider]acquisition{}}
	for _, p := range w.cfg.Providers {
		l.wake[p] = make(chan struct{}, 1)
	}
	return l
}

// request asks for an acquisition of p. It never blocks. A request with
// an exhaustion keeps it through later requests until it is acquired.
func (l *capacityLoop) request(p policy.Provider, why string, exhaustedAt time.Time) {
	ch, ok := l.wake[p]
	if !ok {
		return
	}
	l.mu.Lock()
	cur, had := l.pending[p]
	next := acquisition{why: why, exhaustedAt: exhaustedAt}
	if had && !cur.exhaustedAt.IsZero() && (exhaustedAt.IsZero() || cur.exhaustedAt.After(exhaustedAt)) {
		next.exhaustedAt, next.why = cur.exhaustedAt, cur.why
	}
	l.pending[p] = next
	l.mu.Unlock()
	select {
	case ch <- struct{}{}:
	default:
	}
}

// take returns and clears p's pending request.
func (l *capacityLoop) take(p policy.Provider) acquisition {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.pending[p]
	delete(l.pending, p)
	return a
}

// run acquires at start, every QuotaRefresh and on every request (refresh
// requests from the store included) until ctx ends; it returns once every
// goroutine it started has.
func (l *capacityLoop) run(ctx context.Context) {
	var wg sync.WaitGroup
	stop := l.subscribe(ctx)
	defer stop()
	for _, p := range l.w.cfg.Providers {
		l.request(p, "start", time.Time{})
		wg.Go(func() { l.provider(ctx, p) })
	}
	wg.Wait()
}

// subscribe follows the store's refresh requests for the worker's
// providers, retrying a failed subscription with backoff until ctx ends.
// The returned stop ends it and waits for it.
func (l *capacityLoop) subscribe(ctx context.Context) (stop func()) {
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		bo := events.Backoff{Min: retryMin, Max: retryMax}
		for {
			unsub, err := l.w.cfg.Capacity.SubscribeRefresh(sctx, l.w.cfg.Providers, func(p policy.Provider) {
				l.request(p, "refresh request", time.Time{})
			})
			if err == nil {
				<-sctx.Done()
				unsub()
				return
			}
			if sctx.Err() != nil {
				return
			}
			l.w.retrying(l.w.log, "cannot subscribe to capacity refresh requests; retrying", "err", err, "in", bo.Current())
			if !bo.Wait(sctx) {
				return
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// provider is p's acquisition loop.
func (l *capacityLoop) provider(ctx context.Context, p policy.Provider) {
	tick := time.NewTicker(l.w.quotaRefresh())
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			// An exhaustion an attempt just proved is still recorded: the
			// next run must not launch the provider to fail again.
			if a := l.take(p); l.mustRecord(p, a) {
				l.acquire(ctx, p, a)
			}
			return
		case <-tick.C:
			l.request(p, "periodic", time.Time{})
		case <-l.wake[p]:
		}
		// A periodic tick lands in wake too; drain it so the same round
		// is not acquired twice.
		select {
		case <-l.wake[p]:
		default:
		}
		l.acquire(ctx, p, l.take(p))
	}
}

// acquire acquires p's report, carries over an unexpired learned
// exhaustion (or records the one a, an attempt's usage exhaustion,
// proved) and puts it. Failures are logged; the next round tries again.
func (l *capacityLoop) acquire(ctx context.Context, p policy.Provider, a acquisition) {
	if l.mustRecord(p, a) {
		// Past a stop too: an UNSUPPORTED source reads nothing, and the
		// store's calls below are bounded.
		ctx = context.WithoutCancel(ctx)
	}
	if ctx.Err() != nil {
		return
	}
	log := l.w.log.With("provider", p)
	rep := quota.Acquire(ctx, p, l.quotaConfig(p))
	if ctx.Err() != nil {
		return // stopping: a report cut short by the stop is not put
	}
	now := l.w.cfg.Now()
	gctx, cancel := context.WithTimeout(ctx, capacityPutTimeout)
	prev, err := l.w.cfg.Capacity.Get(gctx, p)
	cancel()
	var carried *policy.LearnedExhaustion
	switch {
	case err == nil:
		if le := prev.LearnedExhaustion; le != nil && le.Until.After(now) {
			carried = le
		}
	case errors.Is(err, events.ErrNoCapacityReport):
	default:
		log.Debug("cannot read the current capacity report; no learned exhaustion carried", "err", err)
	}
	rep.LearnedExhaustion = learnedExhaustion(carried, rep.Snapshot.Source, a.exhaustedAt, l.w.exhaustionCooldown())
	pctx, cancel := context.WithTimeout(ctx, capacityPutTimeout)
	err = l.w.cfg.Capacity.Put(pctx, rep)
	cancel()
	attrs := []any{"why", a.why, "source", rep.Snapshot.Source, "state", rep.Snapshot.State}
	if rep.Snapshot.Reason != "" {
		attrs = append(attrs, "reason", rep.Snapshot.Reason)
	}
	if rep.Eligibility != nil {
		attrs = append(attrs, "eligibility", rep.Eligibility.State)
	}
	if rep.LearnedExhaustion != nil {
		attrs = append(attrs, "exhaustedUntil", rep.LearnedExhaustion.Until)
	}
	if err != nil {
		if ctx.Err() == nil {
			l.w.retrying(log, "capacity report not stored; the next round tries again", append(attrs, "err", err)...)
		}
		return
	}
	log.Debug("capacity acquired", attrs...)
	l.w.emit(evCapacityPut, string(p))
}

// mustRecord reports whether a carries an exhaustion that only this
// acquisition can record: one an attempt of an UNSUPPORTED provider proved
// (such a provider has no source to measure it again later).
func (l *capacityLoop) mustRecord(p policy.Provider, a acquisition) bool {
	if a.exhaustedAt.IsZero() {
		return false
	}
	spec, err := providers.Lookup(p)
	return err == nil && spec.QuotaSource == policy.QuotaUnsupported
}

// learnedExhaustion is the learned exhaustion a new report carries: the
// unexpired one carried from the current report, or, when an attempt of
// an UNSUPPORTED provider just proved usage exhaustion at exhaustedAt, one
// until exhaustedAt+cooldown (whichever lasts longer). A provider with a
// live source is measured instead: its windows say when it resets.
func learnedExhaustion(carried *policy.LearnedExhaustion, source policy.QuotaSource, exhaustedAt time.Time, cooldown time.Duration) *policy.LearnedExhaustion {
	if exhaustedAt.IsZero() || source != policy.QuotaUnsupported {
		return carried
	}
	learned := &policy.LearnedExhaustion{At: exhaustedAt, Until: exhaustedAt.Add(cooldown)}
	if carried != nil && carried.Until.After(learned.Until) {
		return carried
	}
	return learned
}

// quotaConfig is quota's configuration for p: the binary the runner
// would launch (resolved from the worker's environment the same way:
// SWITCHYARD_<PROVIDER>_BIN, which worker --bin sets, else PATH), the
// worker's environment and clock.
func (l *capacityLoop) quotaConfig(p policy.Provider) quota.Config {
	cfg := quota.Config{Env: envList(l.w.cfg.Env), Now: l.w.cfg.Now}
	if spec, err := providers.Lookup(p); err == nil {
		if exe, err := providers.Discover(spec, l.w.cfg.Env); err == nil {
			cfg.Binary = exe
		}
	}
	return cfg
}

// envList renders env as KEY=VALUE entries, sorted by key.
func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// noteAttemptEnd asks for an acquisition of p when its attempt ended
// usage-exhausted. It never blocks.
func (w *Worker) noteAttemptEnd(log *slog.Logger, p policy.Provider, status policy.ReceiptStatus) {
	if w.capacity == nil || status != policy.StatusUsageExhausted {
		return
	}
	log.Debug("attempt ended usage-exhausted; acquiring the provider's capacity")
	w.capacity.request(p, "usage exhausted", w.cfg.Now())
}

func (w *Worker) quotaRefresh() time.Duration {
	if w.cfg.QuotaRefresh > 0 {
		return w.cfg.QuotaRefresh
	}
	return DefaultQuotaRefresh
}

func (w *Worker) exhaustionCooldown() time.Duration {
	if w.cfg.ExhaustionCooldown > 0 {
		return w.cfg.ExhaustionCooldown
	}
	return DefaultExhaustionCooldown
}
