package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// screenshotsEnv names a directory the browser test writes its screenshots
// to (docs/ refreshes the README's): SY_SCREENSHOTS=$PWD/docs.
const screenshotsEnv = "SY_SCREENSHOTS"

// chromiumPath finds Debian's chromium. Under CI=true a missing browser
// fails the test (make test installs it: scripts/test-tools.sh); elsewhere the test skips, saying
// how to install it.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed, and CI=true: make test installs it when it can (scripts/test-tools.sh), or apt-get install -y chromium")
	}
	t.Skip("chromium is not installed: apt-get install -y chromium to run the browser test")
	return ""
}

// browser starts headless chromium with the flags a closed network needs
// and returns a chromedp context bounded by limit.
func browser(t *testing.T, limit time.Duration) context.Context {
	t.Helper()
	opts := append([]chromedp.ExecAllocatorOption{}, chromedp.DefaultExecAllocatorOptions[:]...)
	opts = append(opts,
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.Headless,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Env("TMPDIR="+t.TempDir()), // chromium's own scratch directories go with the test
		chromedp.WindowSize(1360, 900),
	)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(func() { bcancel(); acancel(); cancel() })
	return bctx
}

// shoot saves a screenshot of the page as name, in SY_SCREENSHOTS when set
// (else in the test's temporary directory).
func shoot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	dir := os.Getenv(screenshotsEnv)
	if dir == "" {
		dir = t.TempDir()
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), png, 0o644))
	t.Logf("screenshot %s", filepath.Join(dir, name))
}

// poll waits (generously: CI shares two cores) until expr is true in the
// page.
func poll(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(60*time.Second), chromedp.WithPollingInterval(100*time.Millisecond)))
	if err != nil {
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string]("document.body.innerText"))
		t.Fatalf("%s: %v\npage text:\n%s", what, err, body)
	}
}

var httpLine = regexp.MustCompile(`switchyard serve: http on (http://[^\s]+/)`)

// TestConsoleBrowser drives the console as a person does, in headless
// Chromium against a real serve and worker running a writer lane on the
// simulated CLIs: the run appears in the runs list live; the run page
// renders the lane timeline (the failed grok attempt) and the machine with
// the lane's state highlighted; answering the waiting lane from its form
// records the verdict through the engine, and the lane's move (devin runs,
// the lane completes) shows up without a reload.
func TestConsoleBrowser(t *testing.T) {
	s := newEngineSandbox(t, map[string]string{"grok": "malformed"}, writerSheet)
	gitInit(t, s.checkout)
	serve := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0")
	base, signIn := signInAddress(t, serve)
	worker := s.start(t, "worker", "--data-dir", s.data, "--provider", "grok,devin")
	waitOutput(t, worker, "switchyard worker: ")

	ctx := browser(t, 4*time.Minute)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(signIn)))
	poll(t, ctx, "the runs list loads", `document.getElementById("live").classList.contains("on")`)
	require.NoError(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void]("window.__sameList = true")))

	// The run starts after the list page loaded: it must appear live.
	run := s.start(t, s.runArgs("bug-fix", "--run-id", "writer", "--mode", "isolated-write",
		"--allow-unverified-containment", "grok", "--allow-unverified-containment", "devin")...)
	poll(t, ctx, "the run appears in the list without a reload",
		`window.__sameList === true && !!document.querySelector('#runs tr[data-run="writer"]')`)
	poll(t, ctx, "the list shows the run waiting for the parent",
		`(document.querySelector('#runs tr[data-run="writer"]')?.innerText || "").includes("waiting-for-parent")`)
	shoot(t, ctx, "console-runs.png")

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(base+"runs/writer")))
	poll(t, ctx, "lane 0 shows the failed grok attempt as a bar",
		`!!document.querySelector('.lane[data-lane="0"] .bar[data-outcome="malformed"], .lane[data-lane="0"] .bar[data-outcome="failed"], .lane[data-lane="0"] .bar[data-outcome="terminal-failure"]')`)
	poll(t, ctx, "lane 0 waits for the verdict, with the wait marked and the form shown",
		`document.querySelector('.lane[data-lane="0"]').dataset.state === "inspecting" && !!document.querySelector('.lane[data-lane="0"] .bar.wait') && !!document.querySelector('.lane[data-lane="0"] form[data-kind="verdict"]')`)
	poll(t, ctx, "the machine highlights inspecting",
		`!!document.querySelector('svg.machine .state.current[data-state="inspecting"]')`)
	poll(t, ctx, "the event history lists the inspect event", `!!document.querySelector('#events li[data-type="inspect"]')`)
	shoot(t, ctx, "console-run-waiting.png")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void]("window.__samePage = true"),
		chromedp.SetValue(`.lane[data-lane="0"] form[data-kind="verdict"] select[name="state"]`, "clear"),
		chromedp.SetValue(`.lane[data-lane="0"] form[data-kind="verdict"] input[name="evidence"]`, "notes/browser-review.md"),
		chromedp.Click(`.lane[data-lane="0"] form[data-kind="verdict"] button`),
	))
	poll(t, ctx, "the lane moves on live: devin runs and the lane completes, without a reload",
		`window.__samePage === true && document.querySelector('.lane[data-lane="0"]').dataset.state === "complete" && !!document.querySelector('.lane[data-lane="0"] .bar[data-outcome="complete"]')`)
	poll(t, ctx, "the verdict event arrived live", `!!document.querySelector('#events li.new[data-type="verdict"]')`)
	shoot(t, ctx, "console-run.png")

	select {
	case <-run.done:
	case <-time.After(60 * time.Second):
		t.Fatal("run did not finish after the verdict from the browser")
	}
	rout, rerr := run.output()
	require.Equal(t, 0, run.stop(t), "stdout:\n%s\nstderr:\n%s", rout, rerr)
	require.Contains(t, rout, "inspection clear (notes/browser-review.md)")

	// The verdict is recorded as the CLI records it.
	h := s.run(t, 30*time.Second, "history", "--data-dir", s.data, "--run", "writer", "--lane", "0", "--type", "verdict", "--json")
	require.Equal(t, 0, h.code, h.stderr)
	require.Contains(t, h.stdout, `"evidenceRef":"notes/browser-review.md"`)

	// /metrics shows the run's transitions, and the final run was
	// replayed without a divergence.
	var body string
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "metrics")
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body = string(b)
		return strings.Contains(body, "switchyard_replays_total 1")
	}, 60*time.Second, 100*time.Millisecond, "the final run was not replayed:\n%s", body)
	require.Contains(t, body, `switchyard_lane_transitions_total{type="verdict"} 1`)
	require.Contains(t, body, `switchyard_attempts_total{outcome="complete",provider="devin"} 1`)
	require.Contains(t, body, "switchyard_replay_divergences_total 0")
}

// TestConsoleBrowserDemo is the README's promise: after `make demo`'s panel
// (codex excluded before launch because its account has purchased
// credits, so lane 0 falls back to grok), `serve --http` on the data
// directory shows the run's three lanes in a browser, lane 0 with the
// excluded codex attempt and its reason beside the grok bar, and /metrics
// the run's transitions.
func TestConsoleBrowserDemo(t *testing.T) {
	s := newEngineSandbox(t, map[string]string{"codex": "credits-present"}, panelSheet3)
	r := s.run(t, 90*time.Second, s.runArgs("swarm workers", "--run-id", "demo")...)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	serve := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0")
	base, signIn := signInAddress(t, serve)

	ctx := browser(t, 3*time.Minute)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(signIn)))
	poll(t, ctx, "the demo run is listed as final",
		`(document.querySelector('#runs tr[data-run="demo"]')?.innerText || "").includes("final")`)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(base+"runs/demo")))
	poll(t, ctx, "three complete lanes", `document.querySelectorAll('.lane[data-state="complete"]').length === 3`)
	poll(t, ctx, "lane 0 shows codex excluded before launch and grok complete",
		`(document.querySelector('.lane[data-lane="0"] .skip')?.innerText || "").includes("codex:gpt-5.6-sol@high skipped (execution_policy_blocked)") &&
		 !!document.querySelector('.lane[data-lane="0"] .bar[data-outcome="complete"]')`)
	poll(t, ctx, "the summary names the diversity", `document.getElementById("summary").innerText.includes("delivered by grok, devin")`)
	poll(t, ctx, "the attempt's bar names its containment",
		`(document.querySelector('.lane[data-lane="0"] .bar[data-outcome="complete"]')?.dataset.containment || "").startsWith("READ_ONLY_NO_NETWORK verified by the kernel (Landlock ABI ")`)
	poll(t, ctx, "the machine highlights complete", `!!document.querySelector('svg.machine .state.current[data-state="complete"]')`)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(`.lane[data-lane="0"] .bar[data-outcome="complete"]`)))
	poll(t, ctx, "the attempt's receipt opens", `document.getElementById("attempt").innerText.includes('"status": "complete"')`)
	shoot(t, ctx, "console-demo.png")

	var body string
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "metrics")
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body = string(b)
		return strings.Contains(body, `switchyard_lane_transitions_total{type="run-final"} 1`)
	}, 60*time.Second, 100*time.Millisecond, "metrics:\n%s", body)
	for _, want := range []string{
		`switchyard_lane_transitions_total{type="exclude"} 1`,
		`switchyard_lane_transitions_total{type="launch"} 3`,
		`switchyard_attempts_total{outcome="complete",provider="grok"} 2`,
		`switchyard_lanes{state="complete"} 3`,
	} {
		require.Contains(t, body, want)
	}
}

// signInAddress waits for serve's console and returns its address and the
// sign-in address serve printed (a one-time code in the fragment).
func signInAddress(t *testing.T, serve *bgProcess) (base, signIn string) {
	t.Helper()
	waitOutput(t, serve, "console sign-in")
	out, _ := serve.output()
	m := signInLine.FindStringSubmatch(out)
	require.NotNil(t, m, "serve prints the sign-in address:\n%s", out)
	require.Equal(t, httpLine.FindStringSubmatch(out)[1], m[1])
	return m[1], m[1] + "#code=" + m[2]
}
