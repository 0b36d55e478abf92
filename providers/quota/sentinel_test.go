package quota

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simquota"
)

// sentinels are the values every quota fixture plants where real payloads
// carry secrets or account data (the shared plan's list). None may appear
// in anything this package returns.
var sentinels = []string{
	"acct-SNTL-7f3a",            // account id
	"user-SNTL-51c0",            // user id
	"sntl.user@example.invalid", // e-mail
	"4242.17",                   // balance, credit, spend
	"SNTL-4242",                 // the same as a string
	"tok-SNTL-9c1e",             // tokens
	"proj-SNTL-33d2",            // Gemini's Code Assist project
}

// sentinelParsers are the pure parsers fed every fixture of every
// provider directory. Another source's test file adds its parser from an
// init function (sentinelParsers["ParseX"] = ...), and its fixture
// directory is walked without further change.
var sentinelParsers = map[string]func(body []byte) any{
	"ParseClaudeUsage": func(b []byte) any { return ParseClaudeUsage(b, testNow) },
	"ParseGeminiQuota": func(b []byte) any { return ParseGeminiQuota(b, testNow) },
}

// requireNoSentinel fails when out (marshalled to JSON) carries a
// sentinel, or the SNTL marker in any case.
func requireNoSentinel(t testing.TB, what string, out any) {
	t.Helper()
	b, err := json.Marshal(out)
	require.NoError(t, err)
	s := string(b)
	for _, v := range sentinels {
		require.NotContains(t, s, v, "%s leaks a sentinel", what)
	}
	require.NotContains(t, strings.ToLower(s), "sntl", "%s leaks a sentinel marker", what)
}

// quotaFixtures walks every provider directory under testdata/quota.
func quotaFixtures(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(fixtureRoot, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(fixtureRoot, path)
		out[filepath.ToSlash(rel)] = b
		return nil
	})
	require.NoError(t, err)
	return out
}

// The fixtures plant the sentinels: every provider directory holds some,
// and together they hold all (else this test would prove nothing).
func TestFixturesPlantSentinels(t *testing.T) {
	t.Parallel()
	planted := map[string]bool{}
	perDir := map[string]int{}
	for name, b := range quotaFixtures(t) {
		dir, _, _ := strings.Cut(name, "/")
		for _, v := range sentinels {
			if strings.Contains(string(b), v) {
				planted[v] = true
				perDir[dir]++
			}
		}
	}
	for _, v := range sentinels {
		require.True(t, planted[v], "no fixture plants %s", v)
	}
	for _, dir := range []string{"claude", "gemini"} {
		require.NotZero(t, perDir[dir], "no sentinel in %s fixtures", dir)
	}
}

// No parser output carries a sentinel, whatever fixture it is fed.
func TestParsersLeakNoSentinel(t *testing.T) {
	t.Parallel()
	for name, b := range quotaFixtures(t) {
		for parser, parse := range sentinelParsers {
			requireNoSentinel(t, parser+"("+name+")", parse(b))
		}
	}
}

// No report of Acquire carries a sentinel: every fixture served as each
// endpoint's answer and written as each login's credentials, and every
// error answer (whose bodies echo account data and the token).
func TestAcquireLeaksNoSentinel(t *testing.T) {
	t.Parallel()
	var measuredReports atomic.Int64
	t.Run("fixtures", func(t *testing.T) {
		for name, b := range quotaFixtures(t) {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				for _, variant := range []struct {
					what     string
					provider policy.Provider
					set      func(s *stand)
				}{
					{"claude usage body", policy.Claude, func(s *stand) { s.sim.SetBody(simquota.ClaudeUsagePath, b) }},
					{"gemini quota body", policy.Gemini, func(s *stand) { s.sim.SetBody(simquota.GeminiQuotaPath, b) }},
					{"gemini load body", policy.Gemini, func(s *stand) { s.sim.SetBody(simquota.GeminiLoadPath, b) }},
					{"claude credentials", policy.Claude, func(s *stand) { simquota.WriteClaudeCredentials(t, s.home, b) }},
					{"gemini credentials", policy.Gemini, func(s *stand) { simquota.WriteGeminiCredentials(t, s.home, b) }},
				} {
					s := newStand(t)
					variant.set(s)
					r := s.acquire(t, variant.provider, 0)
					requireNoSentinel(t, variant.what+" "+name, r)
					if r.Snapshot.State == policy.CapacityMeasured {
						measuredReports.Add(1)
					}
				}
			})
		}
	})
	t.Run("error answers", func(t *testing.T) {
		for _, sc := range []simquota.Scenario{simquota.Throttled, simquota.Unauthorized, simquota.Forbidden, simquota.ServerError, simquota.Malformed} {
			s := newStand(t)
			s.sim.SetClaude(sc)
			s.sim.SetGemini(simquota.OK, sc)
			for _, p := range []policy.Provider{policy.Claude, policy.Gemini} {
				r := s.acquire(t, p, 0)
				require.Equal(t, policy.CapacityUnknown, r.Snapshot.State)
				requireNoSentinel(t, string(p)+" "+string(sc), r)
			}
		}
	})
	// The credential fixtures carry the token simquota expects, and the
	// payload fixtures parse: the walk reached measured reports, so the
	// leak check saw real output, not only failures.
	require.GreaterOrEqual(t, measuredReports.Load(), int64(10))
}
