package quota

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simquota"
)

func TestReadClaudeTokenFixtures(t *testing.T) {
	t.Parallel()
	for name, want := range claudeCredentialCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			simquota.WriteClaudeCredentials(t, home, fixture(t, "claude", name))
			token, reason := readClaudeToken([]string{"HOME=" + home}, testNow)
			require.Equal(t, want.token, token)
			require.Equal(t, want.reason, reason)
		})
	}
}

func TestReadClaudeTokenLocations(t *testing.T) {
	t.Parallel()
	good := fixture(t, "claude", "credentials.json")

	t.Run("CLAUDE_CONFIG_DIR wins over HOME", func(t *testing.T) {
		t.Parallel()
		home, dir := t.TempDir(), t.TempDir()
		simquota.WriteClaudeCredentials(t, home, fixture(t, "claude", "credentials_expired.json"))
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".credentials.json"), good, 0o600))
		token, reason := readClaudeToken([]string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + dir}, testNow)
		require.Empty(t, reason)
		require.Equal(t, simquota.Token, token)
	})
	t.Run("no file is no_credentials, not signed out", func(t *testing.T) {
		t.Parallel()
		_, reason := readClaudeToken([]string{"HOME=" + t.TempDir()}, testNow)
		require.Equal(t, policy.CapacityReasonNoCredentials, reason)
	})
	t.Run("no HOME and no CLAUDE_CONFIG_DIR", func(t *testing.T) {
		t.Parallel()
		_, reason := readClaudeToken([]string{"PATH=/usr/bin"}, testNow)
		require.Equal(t, policy.CapacityReasonNoCredentials, reason)
	})
	t.Run("a directory in place of the file", func(t *testing.T) {
		t.Parallel()
		home := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(home, ".claude", ".credentials.json"), 0o700))
		_, reason := readClaudeToken([]string{"HOME=" + home}, testNow)
		require.Equal(t, policy.CapacityReasonNoCredentials, reason)
	})
	t.Run("a file over the cap", func(t *testing.T) {
		t.Parallel()
		home := t.TempDir()
		big := append(bytes.TrimSuffix(bytes.TrimSpace(good), []byte("}")), []byte(`,"pad":"`+string(bytes.Repeat([]byte("x"), maxBody))+`"}`)...)
		simquota.WriteClaudeCredentials(t, home, big)
		_, reason := readClaudeToken([]string{"HOME=" + home}, testNow)
		require.Equal(t, policy.CapacityReasonNoCredentials, reason)
	})
	t.Run("expiry exactly now is expired", func(t *testing.T) {
		t.Parallel()
		home := t.TempDir()
		simquota.WriteClaudeCredentials(t, home, simquota.ClaudeCredentialsJSON(simquota.ClaudeCredentials{ExpiresAt: testNow}))
		_, reason := readClaudeToken([]string{"HOME=" + home}, testNow)
		require.Equal(t, policy.CapacityReasonTokenExpired, reason)
	})
}

// Every scenario of the usage endpoint, end to end through Acquire: the
// CLI's token is sent (simquota checks it), and each answer maps to its
// documented state and reason.
func TestAcquireClaudeScenarios(t *testing.T) {
	t.Parallel()
	week := 7 * 24 * 60
	resets5h := at("2026-08-22T07:59:59.571404Z")
	resets7d := at("2026-08-27T03:00:00Z")
	for name, tc := range map[string]struct {
		scenario simquota.Scenario
		timeout  time.Duration
		want     policy.CapacitySnapshot
	}{
		"ok": {scenario: simquota.OK, want: measured(policy.Claude,
			win("5h", pct(61), 300, resets5h), win("7d", pct(22), week, resets7d), win("7d-sonnet", pct(1), week, nil))},
		"exhausted": {scenario: simquota.Exhausted, want: measured(policy.Claude,
			win("5h", pct(100), 300, resets5h), win("7d", pct(22), week, resets7d), win("7d-sonnet", pct(1), week, nil))},
		"throttled":    {scenario: simquota.Throttled, want: unknownSnapshot(policy.Claude, policy.QuotaLiveHTTP, policy.CapacityReasonThrottled, testNow)},
		"unauthorized": {scenario: simquota.Unauthorized, want: unknownSnapshot(policy.Claude, policy.QuotaLiveHTTP, policy.CapacityReasonTokenExpired, testNow)},
		"forbidden":    {scenario: simquota.Forbidden, want: unknownSnapshot(policy.Claude, policy.QuotaLiveHTTP, policy.CapacityReasonTokenLacksScope, testNow)},
		"server error": {scenario: simquota.ServerError, want: unknownSnapshot(policy.Claude, policy.QuotaLiveHTTP, policy.CapacityReasonBackendError, testNow)},
		"malformed":    {scenario: simquota.Malformed, want: unknownSnapshot(policy.Claude, policy.QuotaLiveHTTP, policy.CapacityReasonUnparseable, testNow)},
		"slow":         {scenario: simquota.Slow, timeout: time.Second, want: unknownSnapshot(policy.Claude, policy.QuotaLiveHTTP, policy.CapacityReasonTimeout, testNow)},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newStand(t)
			s.sim.SetClaude(tc.scenario)
			if tc.want.State == policy.CapacityMeasured {
				signedIn := true
				tc.want.SignedIn = &signedIn
			}
			got := requireReport(t, policy.Claude, policy.QuotaLiveHTTP, s.acquire(t, policy.Claude, tc.timeout))
			requireSnapshot(t, tc.want, got)
			if tc.scenario != simquota.Slow { // a slow machine may give up before the request lands
				require.Equal(t, 1, s.sim.Hits(simquota.ClaudeUsagePath))
			}
			require.Empty(t, s.sim.Problems(), "the request broke the protocol (token, headers)")
		})
	}
}

// Credentials that cannot succeed are judged without a call: refreshing
// or spending a request would not change the answer.
func TestAcquireClaudeWithoutCall(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		creds  []byte
		reason policy.CapacityReason
	}{
		"expired":        {fixture(t, "claude", "credentials_expired.json"), policy.CapacityReasonTokenExpired},
		"inference only": {fixture(t, "claude", "credentials_inference_only.json"), policy.CapacityReasonTokenLacksScope},
		"no token":       {fixture(t, "claude", "credentials_no_token.json"), policy.CapacityReasonNoCredentials},
		"no file":        {nil, policy.CapacityReasonNoCredentials},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newStand(t)
			path := filepath.Join(s.home, ".claude", ".credentials.json")
			if tc.creds == nil {
				require.NoError(t, os.Remove(path))
			} else {
				require.NoError(t, os.WriteFile(path, tc.creds, 0o600))
			}
			got := requireReport(t, policy.Claude, policy.QuotaLiveHTTP, s.acquire(t, policy.Claude, 0))
			requireSnapshot(t, unknownSnapshot(policy.Claude, policy.QuotaLiveHTTP, tc.reason, testNow), got)
			require.Zero(t, s.hits(), "no request may be made")
		})
	}
}

// simquota refuses a request without the fixture token, so the scenario
// tests above prove the token is sent; this proves the refusal is seen.
func TestAcquireClaudeWrongTokenIsRefused(t *testing.T) {
	t.Parallel()
	s := newStand(t)
	simquota.WriteClaudeCredentials(t, s.home, simquota.ClaudeCredentialsJSON(simquota.ClaudeCredentials{Token: "not-the-fixture-token"}))
	got := s.acquire(t, policy.Claude, 0)
	require.Equal(t, policy.CapacityUnknown, got.Snapshot.State)
	require.Equal(t, policy.CapacityReasonBackendError, got.Snapshot.Reason)
	require.Len(t, s.sim.Problems(), 1)
}

func TestAcquireClaudeOversizeBody(t *testing.T) {
	t.Parallel()
	s := newStand(t)
	big := []byte(`{"five_hour":{"utilization":1,"resets_at":null},"pad":"` + string(bytes.Repeat([]byte("x"), maxBody)) + `"}`)
	s.sim.SetBody(simquota.ClaudeUsagePath, big)
	got := s.acquire(t, policy.Claude, 0)
	requireSnapshot(t, unknownSnapshot(policy.Claude, policy.QuotaLiveHTTP, policy.CapacityReasonUnparseable, testNow), got.Snapshot)
}

// A redirect is not the documented endpoint: it is not followed, so the
// bearer token never travels to where it points.
func TestAcquireClaudeRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	s := newStand(t)
	target := httptest.NewServer(s.sim)
	t.Cleanup(target.Close)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+simquota.ClaudeUsagePath, http.StatusFound)
	}))
	t.Cleanup(redirect.Close)
	got := s.acquire(t, policy.Claude, 0, TestClaudeUsageURLEnv+"="+redirect.URL+simquota.ClaudeUsagePath)
	requireSnapshot(t, unknownSnapshot(policy.Claude, policy.QuotaLiveHTTP, policy.CapacityReasonBackendError, testNow), got.Snapshot)
	require.Zero(t, s.hits())
}

// The test-only URL override cannot send the token off the machine.
func TestTestURLOverrideLoopbackOnly(t *testing.T) {
	t.Parallel()
	for v, ok := range map[string]bool{
		"":                              true, // unset: the real endpoint
		"http://127.0.0.1:8080/usage":   true,
		"http://localhost:1/x":          true,
		"http://[::1]:9/":               true,
		"https://example.invalid/usage": false,
		"http://10.0.0.1/usage":         false,
		"ftp://127.0.0.1/usage":         false,
		"http://user:pw@127.0.0.1/":     false,
		"127.0.0.1:80":                  false,
	} {
		_, got := testURL([]string{"K=" + v}, "K", "https://default.invalid")
		require.Equal(t, ok, got, "override %q", v)
	}
	s := newStand(t)
	got := s.acquire(t, policy.Claude, 0, TestClaudeUsageURLEnv+"=https://example.invalid/api/oauth/usage")
	requireSnapshot(t, unknownSnapshot(policy.Claude, policy.QuotaLiveHTTP, policy.CapacityReasonBackendError, testNow), got.Snapshot)
}
