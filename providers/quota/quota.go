// Package quota acquires each provider's capacity snapshot (and, for Codex,
// its execution eligibility) where the CLI and its login live: Codex through
// `codex app-server` (account/rateLimits/read), Claude through its OAuth
// usage endpoint, Gemini through retrieveUserQuota; every other provider is
// UNSUPPORTED. Each source is a pure parser plus an acquirer with a bounded
// deadline and a kill switch (SWITCHYARD_<PROVIDER>_USAGE_API=0). Nothing
// it returns carries an account id, e-mail, balance, token or raw payload
// text. See ../../../shared/QUOTA-PROTOCOLS.md.
package quota

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// DefaultTimeout bounds one acquisition.
const DefaultTimeout = 15 * time.Second

// Config is what an acquisition needs.
type Config struct {
	// Binary is the resolved provider executable (Codex's app-server).
	Binary string
	// Env is the environment the provider's login lives in (HOME,
	// CODEX_HOME, CLAUDE_CONFIG_DIR, ...) and the kill switches; a child
	// gets a constructed environment derived from it, never all of it.
	Env []string
	// Timeout bounds the acquisition; 0 means DefaultTimeout.
	Timeout time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// HTTPClient is used by the HTTP sources; nil means a client with
	// Timeout that follows no redirects and keeps no idle connections.
	HTTPClient *http.Client
}

// withDefaults fills the zero fields with their documented defaults.
func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.HTTPClient == nil {
		c.HTTPClient = newHTTPClient(c.Timeout)
	}
	return c
}

// acquirer reads one provider's live source. ctx carries the acquisition's
// deadline; cfg has its defaults filled. It never fails: a failure is an
// UNKNOWN snapshot with a reason.
type acquirer func(ctx context.Context, cfg Config) policy.CapacityReport

// readers are the live sources this package reads, by the name a
// provider spec gives in its QuotaReader (the spec names the reader, since
// this package imports providers and not the other way round).
var readers = map[string]acquirer{
	"codex-app-server":   acquireCodex,  // codex.go: account/rateLimits/read
	"claude-oauth-usage": acquireClaude, // claude.go: the OAuth usage endpoint
	"gemini-code-assist": acquireGemini, // gemini.go: retrieveUserQuota
}

// acquirers are the providers with a live source, derived from the specs:
// a spec that names a live source and a reader registered here has an
// entry; a live source naming no reader, or one this package does not
// register, has none and reads unknown/no_source (Acquire).
var acquirers = specAcquirers()

// specAcquirers maps each registered provider to the reader its spec
// names.
func specAcquirers() map[policy.Provider]acquirer {
	out := map[policy.Provider]acquirer{}
	for _, p := range providers.Names() {
		spec, err := providers.Lookup(p)
		if err != nil || spec.QuotaSource == policy.QuotaUnsupported {
			continue
		}
		if read, ok := readers[spec.QuotaReader]; ok {
			out[p] = read
		}
	}
	return out
}

// KillSwitch is the environment variable that turns provider's live source
// off when set to 0 (also accepted: false, off, no): the report is then
// UNKNOWN with reason disabled, and no file, process or network is touched.
func KillSwitch(p policy.Provider) string {
	return "SWITCHYARD_" + strings.ToUpper(string(p)) + "_USAGE_API"
}

// killed reports whether env turns provider's source off.
func killed(p policy.Provider, env []string) bool {
	v, ok := lookupEnv(env, KillSwitch(p))
	if !ok {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "false", "off", "no":
		return true
	}
	return false
}

// Acquire returns provider's current report. It never fails: a failure is
// an UNKNOWN snapshot (and an unknown eligibility where the provider has
// one) with a reason code.
//
// The snapshot's source is the provider spec's quota source class. A
// provider whose spec says UNSUPPORTED gets an unsupported snapshot (reason
// no_source) without any I/O, whatever its kill switch says: UNSUPPORTED is
// opaque capacity, not a failure. A provider with a live source whose kill
// switch is off gets unknown/disabled without any I/O. A provider without a
// spec, or whose spec names a live source this package does not read, gets
// unknown/no_source: fail closed, never "go ahead".
func Acquire(ctx context.Context, provider policy.Provider, cfg Config) policy.CapacityReport {
	cfg = cfg.withDefaults()
	spec, err := providers.Lookup(provider)
	if err != nil {
		return unknownReport(provider, policy.QuotaUnsupported, policy.CapacityReasonNoSource, cfg.Now())
	}
	source := spec.QuotaSource
	if source == policy.QuotaUnsupported {
		return finish(policy.CapacityReport{Snapshot: policy.CapacitySnapshot{
			State: policy.CapacityUnsupported, Reason: policy.CapacityReasonNoSource,
		}}, provider, source, cfg.Now)
	}
	acquire, ok := acquirers[provider]
	if !ok {
		return unknownReport(provider, source, policy.CapacityReasonNoSource, cfg.Now())
	}
	if killed(provider, cfg.Env) {
		return unknownReport(provider, source, policy.CapacityReasonDisabled, cfg.Now())
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	return finish(acquire(ctx, cfg), provider, source, cfg.Now)
}

// finish fills what every report carries: schema versions, the provider,
// the source and the acquisition time. A snapshot without a state (an
// acquirer bug) becomes unknown/backend_error rather than passing as
// anything else.
func finish(r policy.CapacityReport, p policy.Provider, source policy.QuotaSource, now func() time.Time) policy.CapacityReport {
	r.SchemaVersion = policy.CapacitySchemaVersion
	r.Provider = p
	s := &r.Snapshot
	s.SchemaVersion = policy.CapacitySchemaVersion
	s.Provider = p
	if s.Source == "" {
		s.Source = source
	}
	if s.AcquiredAt.IsZero() {
		s.AcquiredAt = now().UTC()
	}
	if s.State == "" {
		s.State, s.Reason, s.Windows = policy.CapacityUnknown, policy.CapacityReasonBackendError, nil
	}
	if e := r.Eligibility; e != nil {
		e.SchemaVersion = policy.EligibilitySchemaVersion
		e.Provider = p
		if e.ObservedAt.IsZero() {
			e.ObservedAt = s.AcquiredAt
		}
	}
	return r
}

// unknownSnapshot is a snapshot that knows nothing, and why.
func unknownSnapshot(p policy.Provider, source policy.QuotaSource, reason policy.CapacityReason, at time.Time) policy.CapacitySnapshot {
	return policy.CapacitySnapshot{
		SchemaVersion: policy.CapacitySchemaVersion,
		Provider:      p,
		Source:        source,
		State:         policy.CapacityUnknown,
		Reason:        reason,
		AcquiredAt:    at.UTC(),
	}
}

// unknownReport wraps an unknown snapshot in a complete report.
func unknownReport(p policy.Provider, source policy.QuotaSource, reason policy.CapacityReason, at time.Time) policy.CapacityReport {
	return reportOf(unknownSnapshot(p, source, reason, at))
}

// reportOf wraps a snapshot in a report.
func reportOf(s policy.CapacitySnapshot) policy.CapacityReport {
	return policy.CapacityReport{SchemaVersion: policy.CapacitySchemaVersion, Provider: s.Provider, Snapshot: s}
}
