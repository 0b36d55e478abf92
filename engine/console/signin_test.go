package console_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine/console"
)

// signIn posts code to /api/v1/signin as the page does and returns the
// status and body.
func (f *fixture) signIn(contentType, body string) (int, string) {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.http.URL+"/api/v1/signin", strings.NewReader(body))
	require.NoError(f.t, err)
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(f.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(f.t, err)
	require.Empty(f.t, resp.Header.Values("Set-Cookie"), "sign-in sets no cookie")
	return resp.StatusCode, string(b)
}

func codeBody(code string) string { return `{"code":"` + code + `"}` }

// TestSignIn: a code minted with the console's key is exchanged once, as
// JSON, for the token, which then opens the API; the same code again, an
// expired code and one minted with another key are refused (401) with the
// way to a new one; a form post (what a cross-origin page can send
// without a preflight) is refused before the code is looked at.
func TestSignIn(t *testing.T) {
	f := newFixture(t, "s3cret-token")
	code, err := console.SignInCode(f.key, time.Now())
	require.NoError(t, err)

	status, body := f.signIn("application/x-www-form-urlencoded", "code="+code)
	require.Equal(t, http.StatusBadRequest, status, body)
	status, body = f.signIn("text/plain", codeBody(code))
	require.Equal(t, http.StatusBadRequest, status, body)

	status, body = f.signIn("application/json", codeBody(code))
	require.Equal(t, http.StatusOK, status, body)
	var got struct{ Token string }
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	require.Equal(t, "s3cret-token", got.Token)
	resp, _ := f.get("/api/v1/runs", "Authorization", "Bearer "+got.Token)
	require.Equal(t, http.StatusOK, resp.StatusCode)

	expired, err := console.SignInCode(f.key, time.Now().Add(-console.SignInTTL-time.Second))
	require.NoError(t, err)
	otherKey, err := console.NewSignInKey()
	require.NoError(t, err)
	foreign, err := console.SignInCode(otherKey, time.Now())
	require.NoError(t, err)
	tampered := []byte(code)
	tampered[3] ^= 1 // the expiry: a later one would need a new mac
	for _, tc := range []struct{ name, code, want string }{
		{"used", code, "sign-in code was already used"},
		{"expired", expired, "sign-in code has expired"},
		{"another key", foreign, "sign-in code is not one switchyard minted"},
		{"tampered", string(tampered), "sign-in code is not one switchyard minted"},
		{"empty", "", "sign-in code is not one switchyard minted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := f.signIn("application/json", codeBody(tc.code))
			require.Equal(t, http.StatusUnauthorized, status, body)
			var e apiErr
			require.NoError(t, json.Unmarshal([]byte(body), &e))
			require.Equal(t, "unauthorized", e.Error.Code)
			require.Contains(t, e.Error.Message, tc.want)
			require.Contains(t, e.Error.Message, "print a new sign-in address with `switchyard console-url`")
			require.NotContains(t, body, "s3cret-token")
		})
	}
}

// TestSignInOff: a console without a sign-in key exchanges no code.
func TestSignInOff(t *testing.T) {
	f := newFixture(t, "")
	srv, err := console.New(console.Options{Engine: f.eng, Store: f.store, DataDir: f.data, Token: f.token})
	require.NoError(t, err)
	code, err := console.SignInCode(f.key, time.Now())
	require.NoError(t, err)
	req := mustRequest(t, http.MethodPost, "/api/v1/signin")
	req.Body = io.NopCloser(strings.NewReader(codeBody(code)))
	req.Header.Set("Content-Type", "application/json")
	rec := newRecorder()
	srv.ServeHTTP(rec, req)
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.NotContains(t, rec.Body.String(), f.token)
}
