package quota

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simquota"
)

func TestReadGeminiTokenFixtures(t *testing.T) {
	t.Parallel()
	for name, want := range geminiCredentialCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			simquota.WriteGeminiCredentials(t, home, fixture(t, "gemini", name))
			token, reason := readGeminiToken([]string{"HOME=" + home}, testNow)
			require.Equal(t, want.token, token)
			require.Equal(t, want.reason, reason)
		})
	}
	_, reason := readGeminiToken([]string{"HOME=" + t.TempDir()}, testNow)
	require.Equal(t, policy.CapacityReasonNoCredentials, reason, "no file")
	_, reason = readGeminiToken(nil, testNow)
	require.Equal(t, policy.CapacityReasonNoCredentials, reason, "no HOME")
}

// Every scenario of both Code Assist calls, end to end through Acquire.
func TestAcquireGeminiScenarios(t *testing.T) {
	t.Parallel()
	day := at("2026-08-22T00:00:00Z")
	unknown := func(r policy.CapacityReason) policy.CapacitySnapshot {
		return unknownSnapshot(policy.Gemini, policy.QuotaLiveHTTP, r, testNow)
	}
	for name, tc := range map[string]struct {
		load, quota simquota.Scenario
		env         []string
		timeout     time.Duration
		want        policy.CapacitySnapshot
		quotaCalls  int
	}{
		"ok": {load: simquota.OK, quota: simquota.OK, quotaCalls: 1, want: measured(policy.Gemini,
			win("gemini-2.5-pro", pct(13), 0, day), win("gemini-2.5-flash", pct(0), 0, day))},
		"exhausted": {load: simquota.OK, quota: simquota.Exhausted, quotaCalls: 1, want: measured(policy.Gemini,
			win("gemini-2.5-pro", pct(100), 0, day), win("gemini-2.5-flash", pct(0), 0, day))},
		"no project":     {load: simquota.NoProject, quota: simquota.OK, want: unknown(policy.CapacityReasonNoProject)},
		"env project":    {load: simquota.NoProject, quota: simquota.OK, env: []string{"GOOGLE_CLOUD_PROJECT=" + simquota.Project}, quotaCalls: 1, want: measured(policy.Gemini, win("gemini-2.5-pro", pct(13), 0, day), win("gemini-2.5-flash", pct(0), 0, day))},
		"load 401":       {load: simquota.Unauthorized, quota: simquota.OK, want: unknown(policy.CapacityReasonTokenExpired)},
		"load 403":       {load: simquota.Forbidden, quota: simquota.OK, want: unknown(policy.CapacityReasonTokenLacksScope)},
		"load 5xx":       {load: simquota.ServerError, quota: simquota.OK, want: unknown(policy.CapacityReasonBackendError)},
		"load malformed": {load: simquota.Malformed, quota: simquota.OK, want: unknown(policy.CapacityReasonUnparseable)},
		"load slow":      {load: simquota.Slow, quota: simquota.OK, timeout: time.Second, want: unknown(policy.CapacityReasonTimeout)},
		"throttled":      {load: simquota.OK, quota: simquota.Throttled, quotaCalls: 1, want: unknown(policy.CapacityReasonThrottled)},
		"unauthorized":   {load: simquota.OK, quota: simquota.Unauthorized, quotaCalls: 1, want: unknown(policy.CapacityReasonTokenExpired)},
		"forbidden":      {load: simquota.OK, quota: simquota.Forbidden, quotaCalls: 1, want: unknown(policy.CapacityReasonTokenLacksScope)},
		"server error":   {load: simquota.OK, quota: simquota.ServerError, quotaCalls: 1, want: unknown(policy.CapacityReasonBackendError)},
		"malformed":      {load: simquota.OK, quota: simquota.Malformed, quotaCalls: 1, want: unknown(policy.CapacityReasonUnparseable)},
		"slow":           {load: simquota.OK, quota: simquota.Slow, timeout: time.Second, quotaCalls: 1, want: unknown(policy.CapacityReasonTimeout)},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newStand(t)
			s.sim.SetGemini(tc.load, tc.quota)
			if tc.want.State == policy.CapacityMeasured {
				signedIn := true
				tc.want.SignedIn = &signedIn
			}
			got := requireReport(t, policy.Gemini, policy.QuotaLiveHTTP, s.acquire(t, policy.Gemini, tc.timeout, tc.env...))
			requireSnapshot(t, tc.want, got)
			if tc.load != simquota.Slow && tc.quota != simquota.Slow { // a slow machine may give up before a request lands
				require.Equal(t, 1, s.sim.Hits(simquota.GeminiLoadPath))
				require.Equal(t, tc.quotaCalls, s.sim.Hits(simquota.GeminiQuotaPath))
			}
			require.Empty(t, s.sim.Problems(), "a request broke the protocol (token, project, body)")
		})
	}
}

// The project object shape of loadCodeAssist reaches retrieveUserQuota.
func TestAcquireGeminiProjectObject(t *testing.T) {
	t.Parallel()
	s := newStand(t)
	s.sim.SetBody(simquota.GeminiLoadPath, fixture(t, "gemini", "load_code_assist_project_object.json"))
	s.sim.SetBody(simquota.GeminiQuotaPath, fixture(t, "gemini", "quota_exhausted.json"))
	got := s.acquire(t, policy.Gemini, 0)
	require.Equal(t, policy.CapacityMeasured, got.Snapshot.State)
	require.Equal(t, pct(100), got.Snapshot.Windows[0].UsedPercent)
	require.Empty(t, s.sim.Problems())
}

func TestAcquireGeminiWithoutCall(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		creds  string
		reason policy.CapacityReason
	}{
		"expired":   {"oauth_creds_expired.json", policy.CapacityReasonTokenExpired},
		"no token":  {"oauth_creds_no_token.json", policy.CapacityReasonNoCredentials},
		"malformed": {"oauth_creds_malformed.json", policy.CapacityReasonNoCredentials},
		"no file":   {"", policy.CapacityReasonNoCredentials},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newStand(t)
			path := filepath.Join(s.home, ".gemini", "oauth_creds.json")
			if tc.creds == "" {
				require.NoError(t, os.Remove(path))
			} else {
				require.NoError(t, os.WriteFile(path, fixture(t, "gemini", tc.creds), 0o600))
			}
			got := requireReport(t, policy.Gemini, policy.QuotaLiveHTTP, s.acquire(t, policy.Gemini, 0))
			requireSnapshot(t, unknownSnapshot(policy.Gemini, policy.QuotaLiveHTTP, tc.reason, testNow), got)
			require.Zero(t, s.hits(), "no request may be made")
		})
	}
}

func TestAcquireGeminiWrongTokenIsRefused(t *testing.T) {
	t.Parallel()
	s := newStand(t)
	simquota.WriteGeminiCredentials(t, s.home, simquota.GeminiCredentialsJSON(simquota.GeminiCredentials{Token: "not-the-fixture-token"}))
	got := s.acquire(t, policy.Gemini, 0)
	require.Equal(t, policy.CapacityReasonBackendError, got.Snapshot.Reason)
	require.Len(t, s.sim.Problems(), 1)
	require.Zero(t, s.sim.Hits(simquota.GeminiQuotaPath))
}
