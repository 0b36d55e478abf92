package main

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestHTTPFlagUsage: --http on a non-loopback address without a token,
// a malformed --http, and --http-token without --http are usage errors
// (exit 64) that name the fix, for serve and worker alike; nothing starts.
func TestHTTPFlagUsage(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	for _, cmd := range [][]string{{"serve"}, {"worker", "--provider", "grok"}} {
		for _, tc := range []struct {
			name string
			args []string
			want string
		}{
			{"public without token", []string{"--http", "0.0.0.0:8233"}, `error: --http "0.0.0.0:8233" is not a loopback address, and anyone who reaches it could answer lanes: add --http-token TOKEN (or set SWITCHYARD_HTTP_TOKEN), or listen on 127.0.0.1` + "\n"},
			{"not host:port", []string{"--http", "8233"}, `error: --http "8233" is not HOST:PORT; for example --http 127.0.0.1:8233` + "\n"},
			{"token alone", []string{"--http-token", "t"}, "error: --http-token applies to --http; add --http HOST:PORT (for example --http 127.0.0.1:8233) or drop --http-token\n"},
		} {
			t.Run(cmd[0]+" "+tc.name, func(t *testing.T) {
				args := append(append(append([]string{}, cmd...), "--data-dir", s.data), tc.args...)
				r := s.run(t, 30*time.Second, args...)
				require.Equal(t, exitUsage, r.code, r.stdout)
				require.Contains(t, r.stderr, tc.want)
				require.Empty(t, r.stdout)
			})
		}
	}
}

var workerHTTPLine = regexp.MustCompile(`switchyard worker: http on (http://[^\s]+/)`)

// TestWorkerHTTP: worker --http serves /metrics with its providers' claim
// and lease failure counters (from zero), the live workers and JetStream
// reachability, plus /healthz and /readyz; with --http-token, /metrics
// needs the bearer token and the worker warns that it is set.
func TestWorkerHTTP(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	serve := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	waitServeInfo(t, s.data, serve)
	worker := s.start(t, "worker", "--data-dir", s.data, "--provider", "grok", "--http", "127.0.0.1:0", "--http-token", "tok-123")
	waitOutput(t, worker, "switchyard worker: http on ")
	out, _ := worker.output()
	base := workerHTTPLine.FindStringSubmatch(out)[1]
	require.Eventually(t, func() bool { // stderr's pipe may be read after stdout's
		_, errOut := worker.output()
		return strings.Contains(errOut, "warning: --http-token is set")
	}, 20*time.Second, 20*time.Millisecond)
	out, errOut := worker.output()
	require.NotContains(t, errOut+out, "tok-123")

	get := func(path, token string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, _ := get("metrics", "")
	require.Equal(t, http.StatusUnauthorized, code)
	code, body := get("healthz", "")
	require.Equal(t, http.StatusOK, code, body)
	code, body = get("readyz", "")
	require.Equal(t, http.StatusOK, code, body)
	var metrics string
	require.Eventually(t, func() bool { // the worker announces itself shortly after start
		code, metrics = get("metrics", "tok-123")
		return code == http.StatusOK && regexp.MustCompile(`switchyard_workers_live\{provider="grok"\} [1-9]`).MatchString(metrics)
	}, 30*time.Second, 100*time.Millisecond, "metrics:\n%s", metrics)
	for _, want := range []string{
		`switchyard_claim_failures_total{provider="grok"} 0`,
		`switchyard_lease_failures_total{provider="grok"} 0`,
		`switchyard_jetstream_up 1`,
	} {
		require.Contains(t, metrics, want)
	}
}
