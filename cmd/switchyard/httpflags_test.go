package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine/console"
)

// TestHTTPFlagUsage: --http on a non-loopback address without a token,
// a malformed --http, a token file without --http, an empty token file,
// a token file and SWITCHYARD_HTTP_TOKEN together, and --http-token
// itself (a token on the command line, shown by ps) are usage errors
// (exit 64) that name the fix, for serve and worker alike; nothing starts.
func TestHTTPFlagUsage(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	tokenFile := filepath.Join(s.dir, "http-token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("file-token\n"), 0o600))
	emptyFile := filepath.Join(s.dir, "empty-token")
	require.NoError(t, os.WriteFile(emptyFile, []byte("\n"), 0o600))
	argvRefusal := "error: --http-token puts the token on the command line, where ps shows it to every user of this host: put it in a file only you can read and pass --http-token-file FILE, or set SWITCHYARD_HTTP_TOKEN\n"
	// The worker's port serves only /metrics, /healthz and /readyz (issue
	// 28, finding 25); serve's carries the console.
	exposed := map[string]string{"serve": "anyone who reaches it could answer lanes", "worker": "anyone who reaches it could read the worker's /metrics"}
	for _, cmd := range [][]string{{"serve"}, {"worker", "--provider", "grok"}} {
		for _, tc := range []struct {
			name string
			env  []string
			args []string
			want string
		}{
			{"public without token", nil, []string{"--http", "0.0.0.0:8233"}, `error: --http "0.0.0.0:8233" is not a loopback address, and ` + exposed[cmd[0]] + `: add --http-token-file FILE (or set SWITCHYARD_HTTP_TOKEN), or listen on 127.0.0.1` + "\n"},
			{"not host:port", nil, []string{"--http", "8233"}, `error: --http "8233" is not HOST:PORT; for example --http 127.0.0.1:8233` + "\n"},
			{"token on argv", nil, []string{"--http", "127.0.0.1:0", "--http-token", "s3cret"}, argvRefusal},
			{"token on argv alone", nil, []string{"--http-token", "s3cret"}, argvRefusal},
			{"token file alone", nil, []string{"--http-token-file", tokenFile}, "error: --http-token-file applies to --http; add --http HOST:PORT (for example --http 127.0.0.1:8233) or drop --http-token-file\n"},
			{"empty token file", nil, []string{"--http", "127.0.0.1:0", "--http-token-file", emptyFile}, "error: --http-token-file " + emptyFile + " is empty: put the token on its first line\n"},
			{"missing token file", nil, []string{"--http", "127.0.0.1:0", "--http-token-file", tokenFile + ".nosuch"}, "error: --http-token-file " + tokenFile + ".nosuch: no such file or directory\n"},
			{"file and environment", []string{"SWITCHYARD_HTTP_TOKEN=env-token"}, []string{"--http", "127.0.0.1:0", "--http-token-file", tokenFile}, "error: both --http-token-file and SWITCHYARD_HTTP_TOKEN are set: keep one\n"},
		} {
			t.Run(cmd[0]+" "+tc.name, func(t *testing.T) {
				args := append(append(append([]string{}, cmd...), "--data-dir", s.data), tc.args...)
				r := s.withEnv(tc.env...).run(t, 30*time.Second, args...)
				require.Equal(t, exitUsage, r.code, r.stdout)
				require.Contains(t, r.stderr, tc.want)
				require.NotContains(t, r.stderr, "s3cret", "the refusal does not repeat the token")
				require.Empty(t, r.stdout)
			})
		}
	}
}

// withEnv is the sandbox with env added to its processes' environment.
func (s *engineSandbox) withEnv(env ...string) *engineSandbox {
	c := *s
	c.env = append(append([]string{}, s.env...), env...)
	return &c
}

var workerHTTPLine = regexp.MustCompile(`switchyard worker: http on (http://[^\s]+/)`)

// TestWorkerHTTP: worker --http serves /metrics with its providers' claim
// and lease failure counters (from zero), the live workers and JetStream
// reachability, plus /healthz and /readyz; with a token from
// --http-token-file, /metrics needs it as a bearer token, the worker warns
// that it is set, and the token is on no process's command line.
func TestWorkerHTTP(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	serve := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	waitServeInfo(t, s.data, serve)
	tokenFile := filepath.Join(s.dir, "http-token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("tok-123\n"), 0o600))
	worker := s.start(t, "worker", "--data-dir", s.data, "--provider", "grok", "--http", "127.0.0.1:0", "--http-token-file", tokenFile)
	waitOutput(t, worker, "switchyard worker: http on ")
	out, _ := worker.output()
	base := workerHTTPLine.FindStringSubmatch(out)[1]
	require.Eventually(t, func() bool { // stderr's pipe may be read after stdout's
		_, errOut := worker.output()
		return strings.Contains(errOut, "warning: an HTTP token is set")
	}, 20*time.Second, 20*time.Millisecond)
	out, errOut := worker.output()
	require.NotContains(t, errOut+out, "tok-123")
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", worker.cmd.Process.Pid))
	require.NoError(t, err)
	require.NotContains(t, string(cmdline), "tok-123", "ps shows no token")

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

var serveHTTPLine = regexp.MustCompile(`switchyard serve: http on (http://[^\s]+/)`)

var signInLine = regexp.MustCompile(`switchyard serve: console sign-in \(it signs one browser tab in, once, within 5 minutes; switchyard console-url --data-dir \S+ prints another\): (http://\S+/)#code=([A-Za-z0-9_-]+)\n`)

// consoleClient talks to a console as a script or a page would.
type consoleClient struct {
	t    *testing.T
	base string
}

// do sends method path (body as JSON when set) with the bearer token when
// token is set, never following a redirect, and returns the response with
// its body read.
func (c consoleClient) do(method, path, token, body string) (*http.Response, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	require.NoError(c.t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	require.Empty(c.t, resp.Header.Values("Set-Cookie"), "%s %s sets a cookie", method, path)
	return resp, string(b)
}

// signIn exchanges code as the page does: 200 and the token, or the
// refusal's status and body.
func (c consoleClient) signIn(code string) (int, string) {
	c.t.Helper()
	resp, body := c.do(http.MethodPost, "api/v1/signin", "", `{"code":"`+code+`"}`)
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, body
	}
	var got struct{ Token string }
	require.NoError(c.t, json.Unmarshal([]byte(body), &got))
	return resp.StatusCode, got.Token
}

// TestServeConsoleSignIn: serve --http without a token file still admits
// only its user: a fresh token in a 0600 file (never printed), required as
// Authorization: Bearer by every API route (a ?token= parameter opens
// nothing and sets no cookie), while the page shells, /metrics, /healthz
// and /readyz need none. serve prints a sign-in address whose code (in the
// fragment) is exchanged for the token once; the same code again, and an
// expired one, are refused with the way to a new one; console-url prints a
// new working code from the data directory. Both files go with the serve,
// and console-url then says nothing serves it.
func TestServeConsoleSignIn(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	serve := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0")
	waitOutput(t, serve, "API token")
	out, _ := serve.output()
	base := serveHTTPLine.FindStringSubmatch(out)[1]
	m := signInLine.FindStringSubmatch(out)
	require.NotNil(t, m, "serve prints the sign-in address:\n%s", out)
	require.Equal(t, base, m[1])
	code := m[2]
	path := filepath.Join(s.data, consoleTokenName)
	for _, p := range []string{path, filepath.Join(s.data, consoleSignInName)} {
		st, err := os.Stat(p)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), p)
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	token := strings.TrimSpace(string(b))
	require.Len(t, token, 43, "256 bits, base64url")
	require.NotContains(t, out, token, "the token is never printed")
	require.Contains(t, out, "Authorization: Bearer $(cat "+path+")", "serve says how an API client sends it")

	c := consoleClient{t: t, base: base}
	for _, p := range []string{"api/v1/runs", "api/v1/runs/x", "api/v1/runs?token=" + token} {
		resp, body := c.do(http.MethodGet, p, "", "")
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "/%s without the header", p)
		require.NotContains(t, body, token)
		resp, _ = c.do(http.MethodGet, p, "wrong", "")
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	}
	for _, p := range []string{"", "runs/x", "?token=" + token, "metrics", "healthz", "readyz"} {
		resp, body := c.do(http.MethodGet, p, "", "")
		require.Equal(t, http.StatusOK, resp.StatusCode, "/%s needs no token", p)
		require.NotContains(t, body, token)
	}
	resp, _ := c.do(http.MethodGet, "api/v1/runs", token, "")
	require.Equal(t, http.StatusOK, resp.StatusCode)

	status, got := c.signIn(code)
	require.Equal(t, http.StatusOK, status, got)
	require.Equal(t, token, got, "the printed code signs in to this console")
	status, body := c.signIn(code)
	require.Equal(t, http.StatusUnauthorized, status, "a code works once")
	require.Contains(t, body, "sign-in code was already used")
	require.Contains(t, body, "print a new sign-in address with `switchyard console-url`")

	si, err := readConsoleSignIn(s.data)
	require.NoError(t, err)
	require.Equal(t, base, si.URL)
	expired, err := console.SignInCode(si.Key, time.Now().Add(-console.SignInTTL-time.Second))
	require.NoError(t, err)
	status, body = c.signIn(expired)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Contains(t, body, "sign-in code has expired")

	r := s.run(t, 30*time.Second, "console-url", "--data-dir", s.data)
	require.Equal(t, 0, r.code, r.stderr)
	require.True(t, strings.HasPrefix(r.stdout, base+"#code="), r.stdout)
	fresh := strings.TrimSpace(strings.TrimPrefix(r.stdout, base+"#code="))
	require.NotEqual(t, code, fresh)
	status, got = c.signIn(fresh)
	require.Equal(t, http.StatusOK, status, got)
	require.Equal(t, token, got)
	status, _ = c.signIn(fresh)
	require.Equal(t, http.StatusUnauthorized, status)

	require.Equal(t, 0, serve.stop(t))
	require.NoFileExists(t, path, "the token goes with the serve")
	require.NoFileExists(t, filepath.Join(s.data, consoleSignInName), "and so does the sign-in key")
	r = s.run(t, 30*time.Second, "console-url", "--data-dir", s.data)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "no console serves "+s.data)
}

// TestServeHTTPTokenFromEnv: the token can come from SWITCHYARD_HTTP_TOKEN:
// no console.token is drawn, the API and /metrics take that token, a
// sign-in code is exchanged for it, and the token is on no command line.
func TestServeHTTPTokenFromEnv(t *testing.T) {
	t.Parallel()
	const token = "env-token-0123456789abcdef"
	s := newEngineSandbox(t, nil, singleLaneSheet).withEnv("SWITCHYARD_HTTP_TOKEN=" + token)
	serve := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0")
	waitOutput(t, serve, "console sign-in")
	out, errOut := serve.output()
	require.NotContains(t, out+errOut, token)
	require.Contains(t, errOut, "warning: an HTTP token is set")
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", serve.cmd.Process.Pid))
	require.NoError(t, err)
	require.NotContains(t, string(cmdline), token, "ps shows no token")
	require.NoFileExists(t, filepath.Join(s.data, consoleTokenName))
	c := consoleClient{t: t, base: serveHTTPLine.FindStringSubmatch(out)[1]}
	for _, p := range []string{"api/v1/runs", "metrics"} {
		resp, _ := c.do(http.MethodGet, p, "", "")
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, p)
		resp, _ = c.do(http.MethodGet, p, token, "")
		require.Equal(t, http.StatusOK, resp.StatusCode, p)
	}
	status, got := c.signIn(signInLine.FindStringSubmatch(out)[2])
	require.Equal(t, http.StatusOK, status, got)
	require.Equal(t, token, got)
}
