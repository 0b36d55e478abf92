// Package metrics provides Switchyard's Prometheus metrics: one registry
// per process, fed from the event log (lane transitions, attempts, audits),
// from samples of the deployment (lanes by state, queued jobs, live
// workers, JetStream reachability) and by workers (claim and lease
// failures). Every name carries the switchyard_ prefix and no label holds
// an unbounded value such as a run or execution id.
package metrics

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// Metrics is one process's metrics. The zero value is not usable; call
// New. Its methods are safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	transitions   *prometheus.CounterVec
	attempts      *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	audits        *prometheus.CounterVec
	claimFailures *prometheus.CounterVec
	leaseFailures *prometheus.CounterVec
	divergences   prometheus.Counter
	replays       prometheus.Counter

	mu       sync.Mutex
	launched map[string]time.Time // execution id → launch time, until its finish
	sampler  Sampler
}

// Snapshot is what a Sampler reports at scrape time.
type Snapshot struct {
	// LanesByState counts the lanes of every run by lane state.
	LanesByState map[string]int
	// JobsWaiting counts the jobs queued per provider and not yet handed
	// to a worker.
	JobsWaiting map[policy.Provider]int
	// WorkersLive counts the live workers per provider (a worker serving
	// several providers counts for each).
	WorkersLive map[policy.Provider]int
	// JetStreamUp says whether the process's NATS connection and streams
	// answered.
	JetStreamUp bool
}

// Sampler reads the deployment's current state for a scrape. A sampler
// that fails reports JetStreamUp false and whatever it could read.
type Sampler func(ctx context.Context) Snapshot

// SampleTimeout bounds one Sampler call during a scrape.
const SampleTimeout = 5 * time.Second

// New returns metrics registered in a fresh registry, with the Go runtime
// and process collectors.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), launched: map[string]time.Time{}}
	m.transitions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "switchyard_lane_transitions_total",
		Help: "Lane and run events recorded in the event log, by event type.",
	}, []string{"type"})
	m.attempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "switchyard_attempts_total",
		Help: "Attempts that finished, by provider and normalized outcome.",
	}, []string{"provider", "outcome"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "switchyard_attempt_duration_seconds",
		Help:    "Time from an attempt's launch to its finish, by provider and outcome.",
		Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200},
	}, []string{"provider", "outcome"})
	m.audits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "switchyard_audited_deliveries_total",
		Help: "Deliveries that changed nothing (late, duplicate, stale or malformed reports, redelivered jobs), by reason.",
	}, []string{"reason"})
	m.claimFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "switchyard_claim_failures_total",
		Help: "Jobs a worker could not claim (the execution id was held, or the claim store failed), by provider.",
	}, []string{"provider"})
	m.leaseFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "switchyard_lease_failures_total",
		Help: "Lease refreshes a worker could not make for a running attempt, by provider.",
	}, []string{"provider"})
	m.divergences = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "switchyard_replay_divergences_total",
		Help: "Replays whose recomputed decision differed from the recorded one.",
	})
	m.replays = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "switchyard_replays_total",
		Help: "Final runs whose event log was replayed and every decision recomputed.",
	})
	m.reg.MustRegister(m.transitions, m.attempts, m.duration, m.audits, m.claimFailures, m.leaseFailures, m.divergences, m.replays,
		&sampled{m: m}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// SetSampler sets the function read at every scrape for the gauges (lanes
// by state, jobs waiting, workers live, JetStream reachability). Without
// one those gauges are absent.
func (m *Metrics) SetSampler(s Sampler) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sampler = s
}

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Gatherer is the registry, for tests and embedding.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }

// Observe counts one event of the log. Feed every event once, in store
// order (a watch of every run from the start): a finish is timed from its
// launch or continue seen earlier.
func (m *Metrics) Observe(env events.Envelope) {
	m.transitions.WithLabelValues(string(env.Type)).Inc()
	switch p := env.Payload.(type) {
	case events.Launch:
		m.started(p.ExecutionID, env.Time)
	case events.Continue:
		m.started(p.ExecutionID, env.Time)
	case events.Finish:
		provider := providerOf(p)
		outcome := string(p.Event.Status)
		if outcome == "" {
			outcome = "unknown"
		}
		m.attempts.WithLabelValues(provider, outcome).Inc()
		m.mu.Lock()
		at, ok := m.launched[p.ExecutionID]
		delete(m.launched, p.ExecutionID)
		m.mu.Unlock()
		if ok && !env.Time.Before(at) {
			m.duration.WithLabelValues(provider, outcome).Observe(env.Time.Sub(at).Seconds())
		}
	case events.Audit:
		m.audits.WithLabelValues(string(p.Reason)).Inc()
	}
}

func (m *Metrics) started(id string, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.launched[id] = at
}

// providerOf is the provider a finished attempt ran on: its receipt's
// provider, else "native" for a native lane's host metadata, else
// "unknown".
func providerOf(p events.Finish) string {
	switch {
	case p.Receipt != nil && p.Receipt.Provider != "":
		return string(p.Receipt.Provider)
	case p.Host != nil:
		return "native"
	}
	return "unknown"
}

// WatchProviders starts the claim and lease failure counters of ps at
// zero, so an alert on their rate sees a series before the first failure.
func (m *Metrics) WatchProviders(ps []policy.Provider) {
	for _, p := range ps {
		m.claimFailures.WithLabelValues(string(p))
		m.leaseFailures.WithLabelValues(string(p))
	}
}

// ClaimFailed counts a job of provider a worker could not claim.
func (m *Metrics) ClaimFailed(provider policy.Provider) {
	m.claimFailures.WithLabelValues(string(provider)).Inc()
}

// LeaseFailed counts a lease refresh a worker could not make.
func (m *Metrics) LeaseFailed(provider policy.Provider) {
	m.leaseFailures.WithLabelValues(string(provider)).Inc()
}

// Replayed counts one replay of a final run, and a divergence when it did
// not verify.
func (m *Metrics) Replayed(verified bool) {
	m.replays.Inc()
	if !verified {
		m.divergences.Inc()
	}
}

// sampled collects the sampler's gauges at scrape time.
type sampled struct{ m *Metrics }

var (
	descLanes = prometheus.NewDesc("switchyard_lanes",
		"Lanes of every run in the store, by lane state.", []string{"state"}, nil)
	descJobs = prometheus.NewDesc("switchyard_jobs_waiting",
		"Jobs queued per provider and not yet handed to a worker.", []string{"provider"}, nil)
	descWorkers = prometheus.NewDesc("switchyard_workers_live",
		"Workers that announced themselves within the presence TTL, per provider.", []string{"provider"}, nil)
	descUp = prometheus.NewDesc("switchyard_jetstream_up",
		"1 when the process's NATS connection and streams answered at the last scrape, else 0.", nil, nil)
)

func (s *sampled) Describe(ch chan<- *prometheus.Desc) {
	ch <- descLanes
	ch <- descJobs
	ch <- descWorkers
	ch <- descUp
}

func (s *sampled) Collect(ch chan<- prometheus.Metric) {
	s.m.mu.Lock()
	sample := s.m.sampler
	s.m.mu.Unlock()
	if sample == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), SampleTimeout)
	defer cancel()
	snap := sample(ctx)
	for state, n := range snap.LanesByState {
		ch <- prometheus.MustNewConstMetric(descLanes, prometheus.GaugeValue, float64(n), state)
	}
	for p, n := range snap.JobsWaiting {
		ch <- prometheus.MustNewConstMetric(descJobs, prometheus.GaugeValue, float64(n), string(p))
	}
	for p, n := range snap.WorkersLive {
		ch <- prometheus.MustNewConstMetric(descWorkers, prometheus.GaugeValue, float64(n), string(p))
	}
	up := 0.0
	if snap.JetStreamUp {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, up)
}
