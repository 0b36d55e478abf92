package console_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// apiErr is an API error body as a client decodes it.
type apiErr struct {
	Error struct {
		Code, Message, Field string
	}
}

// TestAPIErrorsAreCleanJSON: every API error is JSON with a stable code and
// one message that names the run once and carries no package prefix, and
// a path under /api that no route takes is such an error too, not the
// mux's plain-text 404 (issue 28, finding 24).
func TestAPIErrorsAreCleanJSON(t *testing.T) {
	f := newFixture(t, "")
	var e apiErr
	f.getJSON("/api/v1/runs/nosuch", http.StatusNotFound, &e)
	require.Equal(t, "run nosuch: unknown run", e.Error.Message)
	require.Equal(t, "not_found", e.Error.Code)

	e = apiErr{}
	f.getJSON("/api/v1/runs/nosuch/report", http.StatusNotFound, &e)
	require.NotContains(t, e.Error.Message, "engine:")
	require.Equal(t, "not_found", e.Error.Code)

	e = apiErr{}
	f.getJSON("/api/v1/runs?limit=-2", http.StatusBadRequest, &e)
	require.Equal(t, "invalid_input", e.Error.Code)

	for _, path := range []string{"/api/v1/bogus", "/api/v2/runs", "/api/v1/runs/alpha/lanes"} {
		e = apiErr{}
		f.getJSON(path, http.StatusNotFound, &e)
		require.Equal(t, "not_found", e.Error.Code, path)
		require.Contains(t, e.Error.Message, "no API endpoint GET "+path, path)
	}
	// Pages outside /api keep the mux's 404.
	resp, _ := f.get("/nosuch")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.NotEqual(t, "application/json", resp.Header.Get("Content-Type"))
}
