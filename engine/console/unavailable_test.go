package console_test

import (
	"encoding/json"
	"testing"
	"time"
)

// TestAPIUnavailable: with NATS gone, reads and writes answer 503
// unavailable (a documented JSON error), not 500 internal.
func TestAPIUnavailable(t *testing.T) {
	f := newFixture(t, apiToken)
	doc, router := openAPIDoc(t, f.http.URL)
	c := newContract(t, doc, router, f.http.URL)
	f.emb.Shutdown()
	b, _ := json.Marshal(map[string]any{"runId": "down-1", "sheet": testSheet, "role": "bug-fix", "parent": "claude",
		"prompt": "p", "cwd": t.TempDir()})
	start := time.Now()
	for _, tc := range []apiCase{
		{method: "GET", path: "/api/v1/runs", status: 503, code: "unavailable"},
		{method: "GET", path: "/api/v1/runs/alpha", status: 503, code: "unavailable"},
		{method: "POST", path: "/api/v1/runs", body: string(b), status: 503, code: "unavailable"},
		{method: "POST", path: "/api/v1/runs/alpha/cancel", body: `{}`, status: 503, code: "unavailable"},
	} {
		c.check(t, tc)
	}
	t.Logf("four requests against a stopped NATS took %s", time.Since(start))
}
