package quota

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchyard-dev/switchyard/policy"
)

// seedFixtures adds every quota fixture to a fuzz corpus, so the seeds run
// in plain go test.
func seedFixtures(f *testing.F) {
	for _, b := range quotaFixtures(f) {
		f.Add(b)
	}
	f.Add([]byte(`{"five_hour":{"utilization":1e308},"limits":[{"kind":"k","percent":-0}]}`))
	f.Add([]byte(`{"buckets":[{"modelId":"m","remainingFraction":5e-324,"resetTime":"2026-08-22T00:00:00+14:00"}]}`))
}

// checkSnapshot holds for every snapshot a parser returns: the provider
// and source, a closed state, unknown only as unparseable and then
// without windows, percentages 0–100, window names plain labels.
func checkSnapshot(t *testing.T, p policy.Provider, s policy.CapacitySnapshot) {
	t.Helper()
	if s.Provider != p || s.Source != policy.QuotaLiveHTTP || s.SchemaVersion != policy.CapacitySchemaVersion || !s.AcquiredAt.Equal(testNow) {
		t.Fatalf("identity fields wrong: %+v", s)
	}
	switch s.State {
	case policy.CapacityMeasured:
		if s.Reason != "" {
			t.Fatalf("measured with reason %q", s.Reason)
		}
	case policy.CapacityUnknown:
		if s.Reason != policy.CapacityReasonUnparseable || len(s.Windows) != 0 {
			t.Fatalf("unknown snapshot %+v", s)
		}
	default:
		t.Fatalf("state %q", s.State)
	}
	seen := map[string]bool{}
	for _, w := range s.Windows {
		if w.UsedPercent != nil && !(*w.UsedPercent >= 0 && *w.UsedPercent <= 100) {
			t.Fatalf("window %q used %v", w.Name, *w.UsedPercent)
		}
		if w.Name == "" || seen[w.Name] || strings.ContainsAny(w.Name, "@\"\\\n") {
			t.Fatalf("window name %q", w.Name)
		}
		seen[w.Name] = true
	}
	if _, err := json.Marshal(s); err != nil {
		t.Fatalf("marshal: %v", err)
	}
}

func FuzzParseClaudeUsage(f *testing.F) {
	seedFixtures(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		checkSnapshot(t, policy.Claude, ParseClaudeUsage(body, testNow))
	})
}

func FuzzParseGeminiQuota(f *testing.F) {
	seedFixtures(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		s := ParseGeminiQuota(body, testNow)
		checkSnapshot(t, policy.Gemini, s)
		for _, w := range s.Windows {
			if w.UsedPercent == nil || w.WindowMinutes != nil {
				t.Fatalf("gemini window %+v", w)
			}
		}
	})
}

func FuzzParseLoadCodeAssist(f *testing.F) {
	seedFixtures(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		if project, ok := parseLoadCodeAssist(body); !ok && project != "" {
			t.Fatalf("a failed read returned project %q", project)
		}
	})
}
