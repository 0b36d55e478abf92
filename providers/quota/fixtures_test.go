package quota

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simquota"
)

// fixtureRoot holds one directory of quota fixtures per provider.
const fixtureRoot = "../testdata/quota"

// testNow is the fixed clock of the tests: before every fixture's reset
// time, after the expired fixture credentials' expiry.
var testNow = time.Date(2026, 8, 21, 12, 0, 0, 0, time.UTC)

func clock() time.Time { return testNow }

// fixture reads providers/testdata/quota/<dir>/<name>.
func fixture(t testing.TB, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureRoot, dir, name))
	require.NoError(t, err)
	return b
}

// fixtureNames lists the files of one fixture directory.
func fixtureNames(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(fixtureRoot, dir))
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		if !e.IsDir() {
			out = append(out, e.Name())
		}
	}
	require.NotEmpty(t, out, "no fixtures in %s", dir)
	return out
}

// pct and at build expected window fields.
func pct(v float64) *float64 { return &v }

func at(s string) *time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	t = t.UTC()
	return &t
}

// win is an expected window.
func win(name string, used *float64, minutes int, resets *time.Time) policy.CapacityWindow {
	return window(name, used, minutes, resets)
}

// measured is an expected measured snapshot of p at testNow.
func measured(p policy.Provider, windows ...policy.CapacityWindow) policy.CapacitySnapshot {
	s := unknownSnapshot(p, policy.QuotaLiveHTTP, "", testNow)
	s.State, s.Windows = policy.CapacityMeasured, windows
	return s
}

// requireSnapshot compares snapshots on the wire, where absent and null
// matter.
func requireSnapshot(t testing.TB, want, got policy.CapacitySnapshot) {
	t.Helper()
	w, err := json.Marshal(want)
	require.NoError(t, err)
	g, err := json.Marshal(got)
	require.NoError(t, err)
	require.JSONEq(t, string(w), string(g))
}

// stand is a running simquota behind httptest with a temp HOME holding
// the default fixture credentials of both providers.
type stand struct {
	sim  *simquota.Server
	home string
	env  []string
}

func newStand(t testing.TB) *stand {
	t.Helper()
	sim := simquota.New()
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { sim.Close(); srv.Close() })
	home := t.TempDir()
	simquota.WriteClaudeCredentials(t, home, simquota.ClaudeCredentialsJSON(simquota.ClaudeCredentials{}))
	simquota.WriteGeminiCredentials(t, home, simquota.GeminiCredentialsJSON(simquota.GeminiCredentials{}))
	return &stand{sim: sim, home: home, env: simquota.Env(home, srv.URL)}
}

// acquire runs Acquire against the stand with extra env entries.
func (s *stand) acquire(t testing.TB, p policy.Provider, timeout time.Duration, extra ...string) policy.CapacityReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return Acquire(ctx, p, Config{
		Env:     append(append([]string{}, s.env...), extra...),
		Timeout: timeout,
		Now:     clock,
	})
}

// hits is the number of requests every endpoint received.
func (s *stand) hits() int {
	return s.sim.Hits(simquota.ClaudeUsagePath) + s.sim.Hits(simquota.GeminiLoadPath) + s.sim.Hits(simquota.GeminiQuotaPath)
}

// requireReport checks the fields every report carries, then returns its
// snapshot.
func requireReport(t testing.TB, p policy.Provider, source policy.QuotaSource, r policy.CapacityReport) policy.CapacitySnapshot {
	t.Helper()
	require.Equal(t, policy.CapacitySchemaVersion, r.SchemaVersion)
	require.Equal(t, p, r.Provider)
	require.Equal(t, policy.CapacitySchemaVersion, r.Snapshot.SchemaVersion)
	require.Equal(t, p, r.Snapshot.Provider)
	require.Equal(t, source, r.Snapshot.Source)
	require.False(t, r.Snapshot.AcquiredAt.IsZero(), "acquired_at unset")
	return r.Snapshot
}
