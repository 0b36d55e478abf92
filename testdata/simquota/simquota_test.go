package simquota

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func start(t *testing.T) (*Server, *httptest.Server) {
	t.Helper()
	sim := New()
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { sim.Close(); srv.Close() })
	return sim, srv
}

func claudeGet(t *testing.T, srv *httptest.Server, token string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+ClaudeUsagePath, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("anthropic-beta", "oauth-2025-04-20")
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func geminiPost(t *testing.T, srv *httptest.Server, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewBufferString(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestScenarioStatuses(t *testing.T) {
	t.Parallel()
	for sc, status := range map[Scenario]int{
		OK: 200, Exhausted: 200, Malformed: 200, Throttled: 429, Unauthorized: 401, Forbidden: 403, ServerError: 500,
	} {
		sim, srv := start(t)
		sim.SetClaude(sc)
		resp := claudeGet(t, srv, Token)
		require.Equal(t, status, resp.StatusCode, "scenario %s", sc)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		if sc == OK || sc == Exhausted {
			require.True(t, json.Valid(body), "scenario %s body", sc)
		}
		if sc == Malformed {
			require.False(t, json.Valid(body))
		}
		if sc == Throttled {
			require.Equal(t, "60", resp.Header.Get("Retry-After"))
		}
		require.Empty(t, sim.Problems())
		require.Equal(t, 1, sim.Hits(ClaudeUsagePath))
	}
}

func TestWrongTokenRecorded(t *testing.T) {
	t.Parallel()
	sim, srv := start(t)
	resp := claudeGet(t, srv, "other")
	require.Equal(t, http.StatusTeapot, resp.StatusCode)
	require.Len(t, sim.Problems(), 1)
}

func TestGeminiChecksProjectAndPlugin(t *testing.T) {
	t.Parallel()
	sim, srv := start(t)
	require.Equal(t, 200, geminiPost(t, srv, GeminiLoadPath, `{"metadata":{"pluginType":"GEMINI"}}`).StatusCode)
	require.Equal(t, 200, geminiPost(t, srv, GeminiQuotaPath, `{"project":"`+Project+`"}`).StatusCode)
	require.Empty(t, sim.Problems())
	require.Equal(t, http.StatusTeapot, geminiPost(t, srv, GeminiQuotaPath, `{"project":"other"}`).StatusCode)
	require.Equal(t, http.StatusTeapot, geminiPost(t, srv, GeminiLoadPath, `{}`).StatusCode)
	require.Len(t, sim.Problems(), 2)

	sim.SetGemini(NoProject, OK)
	var load map[string]any
	require.NoError(t, json.NewDecoder(geminiPost(t, srv, GeminiLoadPath, `{"metadata":{"pluginType":"GEMINI"}}`).Body).Decode(&load))
	require.NotContains(t, load, "cloudaicompanionProject")
}

func TestSetBodyServesFixture(t *testing.T) {
	t.Parallel()
	sim, srv := start(t)
	sim.SetBody(ClaudeUsagePath, []byte(`{"five_hour":null}`))
	body, err := io.ReadAll(claudeGet(t, srv, Token).Body)
	require.NoError(t, err)
	require.Equal(t, `{"five_hour":null}`, string(body))
}

// Slow holds the request until the client gives up or Close releases it.
func TestSlowReleasedByClose(t *testing.T) {
	t.Parallel()
	sim, srv := start(t)
	sim.SetClaude(Slow)
	done := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+ClaudeUsagePath, nil)
		req.Header.Set("Authorization", "Bearer "+Token)
		req.Header.Set("anthropic-beta", "oauth-2025-04-20")
		resp, err := srv.Client().Do(req)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	select {
	case <-done:
		t.Fatal("slow answered before Close")
	default:
	}
	sim.Close()
	require.Equal(t, http.StatusGatewayTimeout, <-done)
}

func TestCredentialsAndEnv(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	WriteClaudeCredentials(t, home, ClaudeCredentialsJSON(ClaudeCredentials{NoScopes: true}))
	WriteGeminiCredentials(t, home, GeminiCredentialsJSON(GeminiCredentials{}))
	var c struct {
		OAuth map[string]any `json:"claudeAiOauth"`
	}
	b, err := os.ReadFile(filepath.Join(home, ".claude", ".credentials.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &c))
	require.Equal(t, Token, c.OAuth["accessToken"])
	require.NotContains(t, c.OAuth, "scopes")
	st, err := os.Stat(filepath.Join(home, ".gemini", "oauth_creds.json"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	require.Equal(t, []string{"HOME=" + home, claudeURLEnv + "=http://x" + ClaudeUsagePath, geminiURLEnv + "=http://x"}, Env(home, "http://x"))
}
