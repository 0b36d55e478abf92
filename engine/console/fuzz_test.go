package console_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// FuzzRequests: no path, query or form makes a handler panic or answer
// 500; every refusal is a 4xx. (Its seed corpus runs in plain go test.)
func FuzzRequests(f *testing.F) {
	fx := newFixture(f, "")
	for _, seed := range []struct{ method, target, body string }{
		{"GET", "/api/v1/runs?state=final,%00&limit=99999999999999999999", ""},
		{"GET", "/api/v1/runs/alpha/events?after=-1", ""},
		{"GET", "/api/v1/runs/alpha/lanes/0/executions/x1/..%2Freceipt", ""},
		{"GET", "/api/v1/runs/alpha/lanes/999999999999/executions/x1/receipt", ""},
		{"GET", "/runs/%ff", ""},
		{"POST", "/runs/alpha/lanes/0/answer", "kind=verdict&state=clear&evidence=x"},
		{"POST", "/runs/alpha/lanes/-1/answer", "kind=cancel"},
		{"POST", "/runs/alpha/lanes/0/answer", "kind=recover&decision=clear&evidence=e&snapshotDigest=zz"},
		{"POST", "/runs/beta/lanes/0/answer", "%%%"},
	} {
		f.Add(seed.method, seed.target, seed.body)
	}
	f.Fuzz(func(t *testing.T, method, target, body string) {
		if method != http.MethodGet && method != http.MethodPost {
			method = http.MethodGet
		}
		if !strings.HasPrefix(target, "/") || strings.Contains(target, "/stream") {
			return // event streams stay open; their parameters are checked in TestRunStream
		}
		u, err := url.ParseRequestURI(target)
		if err != nil || u.Host != "" || u.Scheme != "" {
			return // not a request line a server would read
		}
		req, err := http.NewRequest(method, "http://console"+u.RequestURI(), strings.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+fx.token)
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		rec := httptest.NewRecorder()
		fx.srv.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s %q: %d %s", method, target, body, rec.Code, rec.Body.String())
		}
	})
}
