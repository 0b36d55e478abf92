package events

import (
	"math"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/switchyard-dev/switchyard/policy"
)

// DefaultStallTimeoutMs is the execution-runtime contract's
// DefaultResponseStallTimeoutMS: an engine attempt whose provider stream
// shows no progress for this long ends response_stalled.
const DefaultStallTimeoutMs = 300000

// Stall is the allowlisted metadata of an attempt that ended
// response_stalled (seeds/execution-runtime-contract.md): how long the
// stream was idle, the effective timeout, and the joined outcome of the
// close-grace fence and the bounded health probe. It never carries provider
// output, credentials or environment values.
type Stall struct {
	// Failure is always "response_stalled".
	Failure   string `json:"failure"`
	IdleMs    int64  `json:"idleMs"`
	TimeoutMs int64  `json:"timeoutMs"`
	// ProviderHealth and Liveness are exactly one of the pairs
	// request_stalled/available, provider_unhealthy/unavailable,
	// health_unknown/unknown.
	ProviderHealth string `json:"providerHealth"`
	Liveness       string `json:"liveness"`
	// Probe is the probe's own classification (available, unavailable,
	// timeout, error, unsupported, unknown, identity_mismatch).
	Probe string `json:"probe"`
	// FenceClosed: the child was stopped and reaped within the close grace.
	FenceClosed bool `json:"fenceClosed"`
	// Adapter and Target are the exact identity the stalled attempt ran
	// and the health probe was checked against: the provider (the
	// adapter) and the model its argv pins (the target). A probe outcome
	// for any other identity reads identity_mismatch, health_unknown.
	// Empty only on metadata recorded before they were carried.
	Adapter string `json:"adapter,omitempty"`
	Target  string `json:"target,omitempty"`
	// HealthObservationSeq is the contract's connection-scoped
	// health_observation_seq: the worker that ran the attempt numbers the
	// stall observations it reports over its one connection 1, 2, 3, …
	// (unique and increasing under concurrency; a new connection starts
	// over). An attempt run outside a worker (switchyard runner, doctor)
	// is bound to no connection and omits it.
	HealthObservationSeq *uint64 `json:"healthObservationSeq,omitempty"`
}

// MaxStallTimeoutMs is the largest stall timeout accepted: the most
// milliseconds a time.Duration holds, so the effective timeout never
// overflows when the runner turns it into a deadline (the contract's
// maxSafeStallTimeoutMS).
const MaxStallTimeoutMs = math.MaxInt64 / int64(time.Millisecond)

// StallFailure is Stall.Failure, the contract's typed stall terminal.
const StallFailure = "response_stalled"

// Provider health after a stall (Stall.ProviderHealth).
const (
	HealthRequestStalled    = "request_stalled"
	HealthProviderUnhealthy = "provider_unhealthy"
	HealthUnknown           = "health_unknown"
)

// Liveness classifications after a stall (Stall.Liveness).
const (
	LivenessAvailable   = "available"
	LivenessUnavailable = "unavailable"
	LivenessUnknown     = "unknown"
)

// StallHealthPairs maps each provider health to the one liveness it is
// recorded with.
var StallHealthPairs = map[string]string{
	HealthRequestStalled:    LivenessAvailable,
	HealthProviderUnhealthy: LivenessUnavailable,
	HealthUnknown:           LivenessUnknown,
}

// StallProbes lists the health probe's own classifications (Stall.Probe).
var StallProbes = []string{"available", "unavailable", "timeout", "error", "unsupported", "unknown", "identity_mismatch"}

// ValidateStallTimeoutMs checks a stall timeout in milliseconds: zero
// (the default) through MaxStallTimeoutMs. Errors match ErrInvalid.
func ValidateStallTimeoutMs(ms int64) error {
	if ms < 0 {
		return invalidf("stall timeout %d ms must not be negative", ms)
	}
	if ms > MaxStallTimeoutMs {
		return invalidf("stall timeout %d ms is over the maximum %d ms", ms, MaxStallTimeoutMs)
	}
	return nil
}

// ResolveStallTimeoutMs validates ms and maps zero to
// DefaultStallTimeoutMs.
func ResolveStallTimeoutMs(ms int64) (int64, error) {
	if err := ValidateStallTimeoutMs(ms); err != nil {
		return 0, err
	}
	if ms == 0 {
		return DefaultStallTimeoutMs, nil
	}
	return ms, nil
}

// Validate checks the closed vocabularies of a stall: failure
// response_stalled, one of the three health/liveness pairs, a known probe
// outcome, and non-negative durations. Errors match ErrInvalid.
func (s Stall) Validate() error {
	if s.Failure != StallFailure {
		return invalidf("stall.failure %q: want %s", s.Failure, StallFailure)
	}
	if s.IdleMs < 0 {
		return invalidf("stall.idleMs %d must not be negative", s.IdleMs)
	}
	if s.TimeoutMs < 0 || s.TimeoutMs > MaxStallTimeoutMs {
		return invalidf("stall.timeoutMs %d: want 0..%d", s.TimeoutMs, MaxStallTimeoutMs)
	}
	want, ok := StallHealthPairs[s.ProviderHealth]
	if !ok {
		return invalidf("stall.providerHealth %q: want request_stalled, provider_unhealthy or health_unknown", s.ProviderHealth)
	}
	if s.Liveness != want {
		return invalidf("stall.liveness %q with providerHealth %s: want %s", s.Liveness, s.ProviderHealth, want)
	}
	if !slices.Contains(StallProbes, s.Probe) {
		return invalidf("stall.probe %q: want one of %v", s.Probe, StallProbes)
	}
	if (s.Adapter == "") != (s.Target == "") {
		return invalidf("stall.adapter %q and stall.target %q: want both or neither", s.Adapter, s.Target)
	}
	if s.Adapter != "" && !slices.Contains(CapacityProviders, policy.Provider(s.Adapter)) {
		return invalidf("stall.adapter %q is not a provider", s.Adapter)
	}
	if len(s.Target) > maxStallTarget || strings.ContainsFunc(s.Target, unicode.IsControl) {
		return invalidf("stall.target: want at most %d characters without control characters", maxStallTarget)
	}
	if s.HealthObservationSeq != nil && *s.HealthObservationSeq == 0 {
		return invalidf("stall.healthObservationSeq 0: a connection's first observation is 1")
	}
	return nil
}

// maxStallTarget bounds Stall.Target (a model id).
const maxStallTarget = 200
