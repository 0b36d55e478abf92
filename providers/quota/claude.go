package quota

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"time"

	"github.com/switchyard-dev/switchyard/policy"
)

// Claude's usage endpoint (QUOTA-PROTOCOLS.md §2 A; undocumented by
// Anthropic, read by third parties).
const (
	claudeUsageURL = "https://api.anthropic.com/api/oauth/usage"
	claudeBeta     = "oauth-2025-04-20"
	// claudeProfileScope is the OAuth scope the usage endpoint needs;
	// inference-only tokens (claude setup-token) lack it.
	claudeProfileScope = "user:profile"
)

// TestClaudeUsageURLEnv overrides the Claude usage URL. Test-only: it
// exists so tests reach a local stand-in (testdata/simquota); only a
// loopback URL is accepted, anything else fails the acquisition closed.
const TestClaudeUsageURLEnv = "SWITCHYARD_TEST_CLAUDE_USAGE_URL"

// claudeCredentials is the part of .credentials.json the acquirer reads.
type claudeCredentials struct {
	OAuth *struct {
		AccessToken string       `json:"accessToken"`
		ExpiresAt   *json.Number `json:"expiresAt"` // unix ms
		Scopes      *[]string    `json:"scopes"`
	} `json:"claudeAiOauth"`
}

// claudeCredentialsPath is $CLAUDE_CONFIG_DIR/.credentials.json when that
// is set in env, else $HOME/.claude/.credentials.json; "" when neither is.
func claudeCredentialsPath(env []string) string {
	if dir, _ := lookupEnv(env, "CLAUDE_CONFIG_DIR"); dir != "" {
		return filepath.Join(dir, ".credentials.json")
	}
	if home, _ := lookupEnv(env, "HOME"); home != "" {
		return filepath.Join(home, ".claude", ".credentials.json")
	}
	return ""
}

// readClaudeToken returns the OAuth access token of the CLI's login, or
// why it cannot be used: no file, no token or an unreadable file is
// no_credentials (that does not prove the user is signed out: the login
// may live in a keychain), an expiry in the past token_expired, a scope
// list without user:profile token_lacks_scope. It never refreshes: a
// refresh rotates the refresh token and breaks the CLI's login.
func readClaudeToken(env []string, now time.Time) (string, policy.CapacityReason) {
	path := claudeCredentialsPath(env)
	if path == "" {
		return "", policy.CapacityReasonNoCredentials
	}
	b, err := readCapped(path)
	if err != nil {
		return "", policy.CapacityReasonNoCredentials
	}
	var c claudeCredentials
	if err := strictObject(b, &c); err != nil || c.OAuth == nil || c.OAuth.AccessToken == "" {
		return "", policy.CapacityReasonNoCredentials
	}
	if c.OAuth.ExpiresAt != nil {
		if ms, err := c.OAuth.ExpiresAt.Int64(); err == nil && !time.UnixMilli(ms).After(now) {
			return "", policy.CapacityReasonTokenExpired
		}
	}
	if c.OAuth.Scopes != nil && !slices.Contains(*c.OAuth.Scopes, claudeProfileScope) {
		return "", policy.CapacityReasonTokenLacksScope
	}
	return c.OAuth.AccessToken, ""
}

// acquireClaude reads Claude's usage endpoint with the CLI's own OAuth
// token. 401 is token_expired (not refreshed, see readClaudeToken), 403
// token_lacks_scope, 429 throttled (the usage API's limit, not the quota).
func acquireClaude(ctx context.Context, cfg Config) policy.CapacityReport {
	unknown := func(r policy.CapacityReason) policy.CapacityReport {
		return unknownReport(policy.Claude, policy.QuotaLiveHTTP, r, cfg.Now())
	}
	token, reason := readClaudeToken(cfg.Env, cfg.Now())
	if reason != "" {
		return unknown(reason)
	}
	u, ok := testURL(cfg.Env, TestClaudeUsageURLEnv, claudeUsageURL)
	if !ok {
		return unknown(policy.CapacityReasonBackendError)
	}
	body, reason := do(ctx, cfg.HTTPClient, request{
		Method: http.MethodGet,
		URL:    u,
		Token:  token,
		Header: map[string]string{"anthropic-beta": claudeBeta},
	})
	if reason != "" {
		return unknown(reason)
	}
	s := ParseClaudeUsage(body, cfg.Now())
	if s.State == policy.CapacityMeasured {
		signedIn := true // the CLI's OAuth token read its usage
		s.SignedIn = &signedIn
	}
	return reportOf(s)
}
