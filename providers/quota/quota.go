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
	"time"

	"github.com/switchyard-dev/switchyard/policy"
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
	// Timeout.
	HTTPClient *http.Client
}

// Acquire returns provider's current report. It never fails: a failure is
// an UNKNOWN snapshot (and an unknown eligibility where the provider has
// one) with a reason code.
func Acquire(ctx context.Context, provider policy.Provider, cfg Config) policy.CapacityReport {
	panic("quota.Acquire: not implemented yet")
}
