package quota

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"time"

	"github.com/switchyard-dev/switchyard/policy"
)

// Code Assist (QUOTA-PROTOCOLS.md §3): {endpoint}/{version}:{method}.
const (
	geminiCodeAssistURL = "https://cloudcode-pa.googleapis.com"
	geminiAPIVersion    = "v1internal"
)

// TestGeminiCodeAssistURLEnv overrides the Code Assist base URL (the part
// before /v1internal:method). Test-only: it exists so tests reach a local
// stand-in (testdata/simquota); only a loopback URL is accepted, anything
// else fails the acquisition closed.
const TestGeminiCodeAssistURLEnv = "SWITCHYARD_TEST_GEMINI_CODE_ASSIST_URL"

// geminiCredentials is the part of ~/.gemini/oauth_creds.json the acquirer
// reads.
type geminiCredentials struct {
	AccessToken string       `json:"access_token"`
	ExpiryDate  *json.Number `json:"expiry_date"` // unix ms
}

// readGeminiToken returns the Google access token of the Gemini CLI's
// login, or why it cannot be used: no file (a keychain login included),
// no token or an unreadable file is no_credentials, an expiry_date in the
// past token_expired (no call is made: the CLI refreshes on its next run;
// refreshing here would race it).
func readGeminiToken(env []string, now time.Time) (string, policy.CapacityReason) {
	home, _ := lookupEnv(env, "HOME")
	if home == "" {
		return "", policy.CapacityReasonNoCredentials
	}
	b, err := readCapped(filepath.Join(home, ".gemini", "oauth_creds.json"))
	if err != nil {
		return "", policy.CapacityReasonNoCredentials
	}
	var c geminiCredentials
	if err := strictObject(b, &c); err != nil || c.AccessToken == "" {
		return "", policy.CapacityReasonNoCredentials
	}
	if c.ExpiryDate != nil {
		if ms, err := c.ExpiryDate.Int64(); err == nil && !time.UnixMilli(ms).After(now) {
			return "", policy.CapacityReasonTokenExpired
		}
	}
	return c.AccessToken, ""
}

// geminiLoadRequest is loadCodeAssist's body, as the Gemini CLI sends it;
// a GOOGLE_CLOUD_PROJECT in the login's environment is passed on the way
// the CLI passes it.
func geminiLoadRequest(env []string) []byte {
	type metadata struct {
		IDEType     string `json:"ideType"`
		Platform    string `json:"platform"`
		PluginType  string `json:"pluginType"`
		DuetProject string `json:"duetProject,omitempty"`
	}
	project, _ := lookupEnv(env, "GOOGLE_CLOUD_PROJECT")
	b, _ := json.Marshal(struct {
		Project  string   `json:"cloudaicompanionProject,omitempty"`
		Metadata metadata `json:"metadata"`
	}{project, metadata{"IDE_UNSPECIFIED", "PLATFORM_UNSPECIFIED", "GEMINI", project}})
	return b
}

// acquireGemini reads the Gemini CLI's quota: loadCodeAssist for the Code
// Assist project (none, and no GOOGLE_CLOUD_PROJECT: no_project), then
// retrieveUserQuota for it. HTTP failures map as Claude's do.
func acquireGemini(ctx context.Context, cfg Config) policy.CapacityReport {
	unknown := func(r policy.CapacityReason) policy.CapacityReport {
		return unknownReport(policy.Gemini, policy.QuotaLiveHTTP, r, cfg.Now())
	}
	token, reason := readGeminiToken(cfg.Env, cfg.Now())
	if reason != "" {
		return unknown(reason)
	}
	base, ok := testURL(cfg.Env, TestGeminiCodeAssistURLEnv, geminiCodeAssistURL)
	if !ok {
		return unknown(policy.CapacityReasonBackendError)
	}
	call := func(method string, body []byte) ([]byte, policy.CapacityReason) {
		return do(ctx, cfg.HTTPClient, request{
			Method: http.MethodPost,
			URL:    base + "/" + geminiAPIVersion + ":" + method,
			Token:  token,
			Body:   body,
		})
	}
	body, reason := call("loadCodeAssist", geminiLoadRequest(cfg.Env))
	if reason != "" {
		return unknown(reason)
	}
	project, ok := parseLoadCodeAssist(body)
	if !ok {
		return unknown(policy.CapacityReasonUnparseable)
	}
	if project == "" {
		project, _ = lookupEnv(cfg.Env, "GOOGLE_CLOUD_PROJECT")
	}
	if project == "" {
		return unknown(policy.CapacityReasonNoProject)
	}
	q, _ := json.Marshal(struct {
		Project string `json:"project"`
	}{project})
	body, reason = call("retrieveUserQuota", q)
	if reason != "" {
		return unknown(reason)
	}
	s := ParseGeminiQuota(body, cfg.Now())
	if s.State == policy.CapacityMeasured {
		signedIn := true // the CLI's Google login read its quota
		s.SignedIn = &signedIn
	}
	return reportOf(s)
}
