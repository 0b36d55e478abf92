package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// waitServeContainment waits until the serve of dir has published its
// sandbox self-test in serve.json and returns serve.json.
func waitServeContainment(t *testing.T, dir string, p *bgProcess) serveInfo {
	t.Helper()
	waitServeInfo(t, dir, p)
	var info serveInfo
	require.NoError(t, waitFor(60*time.Second, "the serve's self-test in serve.json", func() (bool, error) {
		var err error
		info, err = readServeInfo(dir)
		return err == nil && info.Containment != nil, nil
	}))
	return info
}

// TestServedPrecheckUsesTheServesSelfTest: serve publishes its sandbox
// self-test in serve.json, and a run it serves checks containment with
// that, the evidence serve's eligibility gate decides with, instead of
// testing its own process. A serve whose sandbox is off (SWITCHYARD_SANDBOX=off
// in its environment only) makes the pre-check of a run whose own sandbox
// is on report the writer lanes' containment as unverified, saying it is
// the serve's self-test, with the serve's reason; and a serve with it on
// makes a run whose own is off report no containment problem.
func TestServedPrecheckUsesTheServesSelfTest(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, writerSheet)
	gitInit(t, s.checkout)
	off := s.withEnv("SWITCHYARD_SANDBOX=off")
	serve := off.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	info := waitServeContainment(t, s.data, serve)
	require.False(t, info.Containment.Writer.Verified)
	require.Contains(t, info.Containment.Writer.Why, "SWITCHYARD_SANDBOX=off")

	r := s.run(t, 60*time.Second, s.runArgs("bug-fix", "--run-id", "offserve", "--mode", "isolated-write", "--detach")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "grok isolated-write containment is UNVERIFIED (the serve's sandbox self-test, which its eligibility gate uses)")
	require.Contains(t, r.stderr, "the sandbox is turned off (SWITCHYARD_SANDBOX=off)")
	require.Contains(t, r.stderr, "make the sandbox verifiable on the serve's host")
	serve.stop(t) // before the next serve takes the data directory

	on := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	info = waitServeContainment(t, s.data, on)
	require.True(t, info.Containment.Writer.Verified, "the kernel sandbox verifies here, as every contained test needs: %s", info.Containment.Writer.Why)
	r = off.run(t, 60*time.Second, off.runArgs("bug-fix", "--run-id", "onserve", "--mode", "isolated-write", "--detach")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.False(t, strings.Contains(r.stderr, "containment is"), "the serve's sandbox verifies; the run's own, off, is not asked:\n%s", r.stderr)
}
