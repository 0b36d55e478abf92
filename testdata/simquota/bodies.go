package simquota

import (
	"fmt"
	"net/http"
)

// defaultBody is the 200 body of an endpoint under a scenario. The bodies
// plant the shared sentinels where real payloads carry account data.
func defaultBody(path string, sc Scenario) []byte {
	switch path {
	case ClaudeUsagePath:
		five := 61.0
		if sc == Exhausted {
			five = 100
		}
		return fmt.Appendf(nil, `{"five_hour":{"utilization":%g,"resets_at":"2026-08-22T07:59:59.571404+00:00"},`+
			`"seven_day":{"utilization":22.0,"resets_at":"2026-08-27T03:00:00+00:00"},"seven_day_opus":null,`+
			`"seven_day_sonnet":{"utilization":1.0,"resets_at":null},`+
			`"extra_usage":{"is_enabled":true,"monthly_limit":4242.17,"used_credits":"SNTL-4242","utilization":null},`+
			`"account_uuid":"acct-SNTL-7f3a","email_address":"sntl.user@example.invalid"}`, five)
	case GeminiLoadPath:
		if sc == NoProject {
			return []byte(`{"currentTier":{"id":"free-tier","name":"Gemini Code Assist for individuals"},"allowedTiers":[{"id":"free-tier","isDefault":true}]}`)
		}
		return []byte(`{"currentTier":{"id":"standard-tier","name":"Gemini Code Assist Standard"},` +
			`"cloudaicompanionProject":"` + Project + `",` +
			`"paidTier":{"id":"g1-pro-tier","availableCredits":[{"creditType":"GOOGLE_ONE_AI","creditAmount":"SNTL-4242"}]}}`)
	case GeminiQuotaPath:
		pro := 0.87
		if sc == Exhausted {
			pro = 0
		}
		return fmt.Appendf(nil, `{"buckets":[`+
			`{"modelId":"gemini-2.5-pro","tokenType":"REQUESTS","remainingAmount":"87","remainingFraction":%g,"resetTime":"2026-08-22T00:00:00Z"},`+
			`{"modelId":"gemini-2.5-flash","tokenType":"REQUESTS","remainingAmount":"1500","remainingFraction":1,"resetTime":"2026-08-22T00:00:00Z"}]}`, pro)
	}
	return []byte(`{}`)
}

// errorBody answers a failure the way each backend does, echoing account
// data as real error bodies can (a client must never show them).
func errorBody(w http.ResponseWriter, path string, status int) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if path == ClaudeUsagePath {
		fmt.Fprintf(w, `{"type":"error","error":{"type":"error_%d","message":"request for acct-SNTL-7f3a (sntl.user@example.invalid) with token %s failed"}}`, status, Token)
		return
	}
	fmt.Fprintf(w, `{"error":{"code":%d,"message":"project %s: token %s","status":"ERROR","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"cloudcode-pa.googleapis.com","metadata":{"consumer":"projects/%s"}}]}}`, status, Project, Token, Project)
}
