package events

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
}
