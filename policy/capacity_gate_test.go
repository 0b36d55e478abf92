package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// gateReport returns a copy of a golden report changed by each edit.
func gateReport(name string, edits ...func(*CapacityReport)) *CapacityReport {
	r := capacityGoldens()[name]
	for _, e := range edits {
		e(&r)
	}
	return &r
}

func withWindows(ws ...CapacityWindow) func(*CapacityReport) {
	return func(r *CapacityReport) { r.Snapshot.Windows = ws }
}

func withEligibility(state EligibilityState, rs ...EligibilityReason) func(*CapacityReport) {
	return func(r *CapacityReport) { r.Eligibility = codexEligibility(state, rs...) }
}

func withLearned(from, until time.Duration) func(*CapacityReport) {
	return func(r *CapacityReport) { r.LearnedExhaustion = &LearnedExhaustion{At: at(from), Until: at(until)} }
}

func acquiredAgo(d time.Duration) func(*CapacityReport) {
	return func(r *CapacityReport) { r.Snapshot.AcquiredAt = at(-d) }
}

func noEligibility(r *CapacityReport) { r.Eligibility = nil }

func codexIn(r *CapacityReport) EligibilityInput {
	return EligibilityInput{Provider: Codex, Source: QuotaLiveRPC, Report: r, Now: capT0}
}

func agyIn(r *CapacityReport) EligibilityInput {
	return EligibilityInput{Provider: Antigravity, Source: QuotaUnsupported, Report: r, Now: capT0}
}

func allow(in EligibilityInput) EligibilityInput { in.AllowUnknown = true; return in }

func excluded(code ExclusionCode, ev CapacityEvidence, detail string) EligibilityVerdict {
	return EligibilityVerdict{Code: code, Capacity: ev, Detail: detail}
}

func until(v EligibilityVerdict, d time.Duration) EligibilityVerdict { v.Until = atp(d); return v }

func overridden(v EligibilityVerdict) EligibilityVerdict {
	v.Eligible = true
	v.Overridden = true
	v.Detail += "; allowed by the run's override for unknown evidence"
	return v
}

// window is a measured window at pct percent resetting after d (no reset
// when d is 0).
func window(name string, pct float64, d time.Duration) CapacityWindow {
	w := CapacityWindow{Name: name, UsedPercent: fptr(pct)}
	if d != 0 {
		w.ResetsAt = atp(d)
	}
	return w
}

type gateCase struct {
	name string
	in   EligibilityInput
	want EligibilityVerdict
}

func gateCases() []gateCase {
	measured := EligibilityVerdict{Eligible: true, Capacity: EvidenceMeasured, Detail: "codex: capacity is measured"}
	opaque := EligibilityVerdict{Eligible: true, Capacity: EvidenceOpaque, Detail: "antigravity: capacity is opaque (quota source UNSUPPORTED)"}
	noReport := excluded(ExcludeQuotaUnknown, EvidenceUnknown, "codex: no capacity report")
	stale := excluded(ExcludeQuotaUnknown, EvidenceUnknown, "codex: the capacity report is 16m0s old, over the 15m0s limit")
	unverified := excluded(ExcludeUnverified, EvidenceMeasured, "codex: execution eligibility is unverified: credits_unknown, spend_control_unknown")
	blocked := excluded(ExcludePolicyBlocked, EvidenceMeasured, "codex: purchased credits are present")
	allowance := excluded(ExcludeAllowanceUnavailable, EvidenceMeasured, "codex: the included allowance is unavailable: rate_limit_reached, window_exhausted")
	learnedCodex := until(excluded(ExcludeQuotaExhausted, EvidenceMeasured, "codex: usage exhaustion learned at 2026-12-01T11:30:00Z, until 2026-12-01T12:30:00Z"), 30*time.Minute)
	learnedAgy := until(excluded(ExcludeQuotaExhausted, EvidenceOpaque, "antigravity: usage exhaustion learned at 2026-12-01T11:30:00Z, until 2026-12-01T12:30:00Z"), 30*time.Minute)
	notSignedIn := excluded(ExcludeNotSignedIn, EvidenceUnknown, "claude: not signed in")
	learnedClaude := until(excluded(ExcludeQuotaExhausted, EvidenceUnknown, "claude: usage exhaustion learned at 2026-12-01T11:30:00Z, until 2026-12-01T12:30:00Z"), 30*time.Minute)
	exhausted5h := until(excluded(ExcludeQuotaExhausted, EvidenceMeasured, "codex: quota window 5h at 100% until 2026-12-01T12:45:00Z"), 45*time.Minute)
	claudeIn := func(r *CapacityReport) EligibilityInput {
		return EligibilityInput{Provider: Claude, Source: QuotaLiveHTTP, Report: r, Now: capT0}
	}

	unhealthy := func(p Provider) EligibilityVerdict {
		return excluded(ExcludeProviderUnhealthy, EvidenceUnknown, string(p)+": an earlier attempt in this run stalled and the health probe found the provider unavailable; it is ineligible for the rest of the run")
	}
	sick := func(in EligibilityInput) EligibilityInput { in.Unhealthy = true; return in }
	signedOut := func(in EligibilityInput) EligibilityInput { in.SignedOut = true; return in }
	agySignedOut := excluded(ExcludeNotSignedIn, EvidenceOpaque,
		"antigravity: an earlier attempt in this run found the CLI signed out before it started (its preflight); the provider is ineligible for the rest of the run")
	contained := func(mode Access, class string) func(EligibilityInput) EligibilityInput {
		return func(in EligibilityInput) EligibilityInput {
			in.Containment = &ContainmentEvidence{Mode: mode, Class: class, Why: "no Landlock", Fix: "use Linux 6.12"}
			return in
		}
	}
	openRun := func(in EligibilityInput) EligibilityInput { in.AllowUnverifiedContainment = true; return in }
	uncontained := func(mode Access, required string) EligibilityVerdict {
		return excluded(ExcludeContainmentUnverified, EvidenceUnknown, "codex: "+string(mode)+" containment is UNVERIFIED, not the required "+required+
			": no Landlock; fix: use Linux 6.12, or pass --allow-unverified-containment codex to run it unrestricted (recorded in the run)")
	}

	return []gateCase{
		// (0) A provider the run found unhealthy: first, never overridden.
		{"an unhealthy provider with a measured eligible report is excluded", sick(codexIn(gateReport("measured-eligible"))), unhealthy(Codex)},
		{"an unhealthy unsupported provider is excluded, not opaque", sick(agyIn(nil)), unhealthy(Antigravity)},
		{"the override does not lift provider_unhealthy", allow(sick(codexIn(nil))), unhealthy(Codex)},

		// (0') Containment: a mode without its verified class, unless the
		// run accepts it; the unknown-evidence override does not lift it.
		{"an unverified writer is excluded whatever its capacity", contained(IsolatedWrite, ContainmentUnverified)(codexIn(gateReport("measured-eligible"))), uncontained(IsolatedWrite, ContainmentWorkspaceWrite)},
		{"a read-only class does not contain a writer", contained(IsolatedWrite, ContainmentReadOnly)(codexIn(gateReport("measured-eligible"))),
			excluded(ExcludeContainmentUnverified, EvidenceUnknown, "codex: isolated-write containment is READ_ONLY_NO_NETWORK, not the required WORKSPACE_WRITE_NO_NETWORK: no Landlock; fix: use Linux 6.12, or pass --allow-unverified-containment codex to run it unrestricted (recorded in the run)")},
		{"an unverified reviewer is excluded", contained(ReadOnly, ContainmentUnverified)(codexIn(gateReport("measured-eligible"))), uncontained(ReadOnly, ContainmentReadOnly)},
		{"the unknown override does not lift containment", allow(contained(ReadOnly, ContainmentUnverified)(codexIn(nil))), uncontained(ReadOnly, ContainmentReadOnly)},
		{"the run's opt-in runs it open", openRun(contained(IsolatedWrite, ContainmentUnverified)(codexIn(gateReport("measured-eligible")))), measured},
		{"a verified writer goes on to the capacity rules", contained(IsolatedWrite, ContainmentWorkspaceWrite)(codexIn(gateReport("measured-eligible"))), measured},
		{"unhealthy decides before containment", sick(contained(ReadOnly, ContainmentUnverified)(codexIn(nil))), unhealthy(Codex)},

		// (1) UNSUPPORTED: opaque capacity, eligible only when the auth,
		// health and cooldown gates pass.
		{"unsupported without a report is eligible and opaque", agyIn(nil), opaque},
		{"unsupported signed out in this run is not_signed_in", signedOut(agyIn(nil)), agySignedOut},
		{"the sign-out decides before a learned exhaustion", signedOut(agyIn(gateReport("unsupported-learned-exhaustion"))), agySignedOut},
		{"the override does not lift the sign-out", allow(signedOut(agyIn(nil))), agySignedOut},
		{"unhealthy decides before the sign-out", sick(signedOut(agyIn(nil))), unhealthy(Antigravity)},
		{"a live provider's sign-in is its report's to say", signedOut(codexIn(gateReport("measured-eligible"))), measured},
		{"unsupported with an active learned exhaustion is exhausted until its end", agyIn(gateReport("unsupported-learned-exhaustion")), learnedAgy},
		{"unsupported with an expired learned exhaustion is eligible", agyIn(gateReport("unsupported-learned-exhaustion", withLearned(-2*time.Hour, -time.Hour))), opaque},
		{"unsupported with a learned exhaustion ending now is eligible", agyIn(gateReport("unsupported-learned-exhaustion", withLearned(-time.Hour, 0))), opaque},
		{"unsupported ignores another provider's report", EligibilityInput{Provider: Antigravity, Source: QuotaUnsupported, Now: capT0,
			Report: gateReport("measured-eligible", withLearned(-time.Minute, time.Hour))}, opaque},
		{"unsupported with a stale report is still opaque", agyIn(gateReport("unsupported-learned-exhaustion", acquiredAgo(48*time.Hour), withLearned(-49*time.Hour, -47*time.Hour))), opaque},
		{"the override does not lift a learned exhaustion of an unsupported provider", allow(agyIn(gateReport("unsupported-learned-exhaustion"))), learnedAgy},

		// (2) A live source needs a current report of its own.
		{"no report is quota_unknown", codexIn(nil), noReport},
		{"an invalid report is quota_unknown", codexIn(gateReport("measured-eligible", func(r *CapacityReport) { r.SchemaVersion = 2 })),
			excluded(ExcludeQuotaUnknown, EvidenceUnknown, "codex: the capacity report is invalid")},
		{"another provider's report is quota_unknown", claudeIn(gateReport("measured-eligible")),
			excluded(ExcludeQuotaUnknown, EvidenceUnknown, "claude: the capacity report is for codex")},
		{"a report from another source class is quota_unknown", EligibilityInput{Provider: Codex, Source: QuotaLiveCLI, Report: gateReport("measured-eligible"), Now: capT0},
			excluded(ExcludeQuotaUnknown, EvidenceUnknown, "codex: the capacity report's source LIVE_RPC is not the provider's LIVE_CLI")},
		{"an unknown source class fails closed", EligibilityInput{Provider: Codex, Source: "", Report: gateReport("measured-eligible"), Now: capT0},
			excluded(ExcludeQuotaUnknown, EvidenceUnknown, "codex: the provider's quota source class is not known")},
		{"a report older than the default 15m is stale", codexIn(gateReport("measured-eligible", acquiredAgo(16*time.Minute))), stale},
		{"a report exactly 15m old is current", codexIn(gateReport("measured-eligible", acquiredAgo(15*time.Minute))), measured},
		{"MaxAge replaces the default", func() EligibilityInput {
			in := codexIn(gateReport("measured-eligible", acquiredAgo(2*time.Minute)))
			in.MaxAge = time.Minute
			return in
		}(), excluded(ExcludeQuotaUnknown, EvidenceUnknown, "codex: the capacity report is 2m0s old, over the 1m0s limit")},
		{"a report from far in the future is not current", codexIn(gateReport("measured-eligible", acquiredAgo(-20*time.Minute))),
			excluded(ExcludeQuotaUnknown, EvidenceUnknown, "codex: the capacity report is dated 20m0s in the future, over the 15m0s limit")},

		// (3) A learned exhaustion comes before the report's own evidence.
		{"an active learned exhaustion is quota_exhausted until its end", codexIn(gateReport("measured-eligible", withLearned(-30*time.Minute, 30*time.Minute))), learnedCodex},
		{"a learned exhaustion outranks a policy block", codexIn(gateReport("measured-policy-blocked", withLearned(-30*time.Minute, 30*time.Minute))), learnedCodex},
		{"an expired learned exhaustion is eligible", codexIn(gateReport("measured-eligible", withLearned(-2*time.Hour, -time.Minute))), measured},
		{"a learned exhaustion outranks signed_in=false", claudeIn(gateReport("unknown-not-signed-in", withLearned(-30*time.Minute, 30*time.Minute))), learnedClaude},
		{"a learned exhaustion outranks reason not_signed_in", claudeIn(gateReport("unknown-not-signed-in", withLearned(-30*time.Minute, 30*time.Minute),
			func(r *CapacityReport) { r.Snapshot.SignedIn = nil })), learnedClaude},
		{"an expired learned exhaustion leaves signed_in=false to decide", claudeIn(gateReport("unknown-not-signed-in", withLearned(-2*time.Hour, -time.Minute))), notSignedIn},

		// (4) Not signed in.
		{"signed_in=false is not_signed_in", claudeIn(gateReport("unknown-not-signed-in")), notSignedIn},
		{"reason not_signed_in alone is not_signed_in", claudeIn(gateReport("unknown-not-signed-in", func(r *CapacityReport) { r.Snapshot.SignedIn = nil })), notSignedIn},
		{"not signed in outranks the eligibility report", codexIn(gateReport("unknown-eligibility-unknown", func(r *CapacityReport) {
			r.Snapshot.Reason = CapacityReasonNotSignedIn
		}, withEligibility(EligibilityPolicyBlocked, EligibilityReasonCreditsPresent))),
			excluded(ExcludeNotSignedIn, EvidenceUnknown, "codex: not signed in")},
		{"the override does not lift not_signed_in", allow(claudeIn(gateReport("unknown-not-signed-in"))), notSignedIn},

		// (5)–(7) The eligibility report.
		{"credits present is policy_blocked even with healthy windows", codexIn(gateReport("measured-policy-blocked")), blocked},
		{"the override does not lift a policy block", allow(codexIn(gateReport("measured-policy-blocked"))), blocked},
		{"allowance unavailable runs until the exhausted window's reset", codexIn(gateReport("measured-allowance-unavailable")), until(allowance, 45*time.Minute)},
		{"allowance unavailable takes the latest reset of the exhausted windows", codexIn(gateReport("measured-allowance-unavailable",
			withWindows(window("5h", 100, 45*time.Minute), window("7d", 100, 50*time.Hour), window("spark", 100, -time.Minute)))),
			until(allowance, 50*time.Hour)},
		{"allowance unavailable with an exhausted window of unknown reset has no until", codexIn(gateReport("measured-allowance-unavailable",
			withWindows(window("5h", 100, 45*time.Minute), window("7d", 100, 0)))), allowance},
		{"allowance unavailable without an exhausted window has no until", codexIn(gateReport("measured-eligible",
			withEligibility(EligibilityAllowanceUnavailable, EligibilityReasonSpendControlReached))),
			excluded(ExcludeAllowanceUnavailable, EvidenceMeasured, "codex: the included allowance is unavailable: spend_control_reached")},
		{"the override does not lift an unavailable allowance", allow(codexIn(gateReport("measured-allowance-unavailable"))), until(allowance, 45*time.Minute)},
		{"unknown eligibility is execution_unverified", codexIn(gateReport("measured-eligible",
			withEligibility(EligibilityUnknown, EligibilityReasonCreditsUnknown, EligibilityReasonSpendControlUnknown))), unverified},
		{"unknown eligibility outranks an unknown snapshot", codexIn(gateReport("unknown-eligibility-unknown")),
			excluded(ExcludeUnverified, EvidenceUnknown, "codex: execution eligibility is unverified: collector_failed")},
		{"the override lifts execution_unverified", allow(codexIn(gateReport("measured-eligible",
			withEligibility(EligibilityUnknown, EligibilityReasonCreditsUnknown, EligibilityReasonSpendControlUnknown)))), overridden(unverified)},

		// (8) Unknown snapshot.
		{"an unknown snapshot is quota_unknown", claudeIn(gateReport("unknown-not-signed-in", func(r *CapacityReport) {
			r.Snapshot.SignedIn, r.Snapshot.Reason = nil, CapacityReasonTimeout
		})), excluded(ExcludeQuotaUnknown, EvidenceUnknown, "claude: capacity is unknown: timeout")},
		{"a disabled source is quota_unknown", codexIn(gateReport("unknown-eligibility-unknown", noEligibility, func(r *CapacityReport) {
			r.Snapshot.Reason = CapacityReasonDisabled
		})), excluded(ExcludeQuotaUnknown, EvidenceUnknown, "codex: capacity is unknown: disabled")},

		// (9) Measured windows.
		{"a window at 100% is quota_exhausted until its reset", codexIn(gateReport("measured-eligible", noEligibility,
			withWindows(window("5h", 100, 45*time.Minute), window("7d", 30, 0)))), exhausted5h},
		{"exhausted windows report the latest reset", codexIn(gateReport("measured-eligible", noEligibility,
			withWindows(window("5h", 100, 45*time.Minute), window("7d", 100, 3*time.Hour)))),
			until(excluded(ExcludeQuotaExhausted, EvidenceMeasured, "codex: quota window 5h, 7d at 100% until 2026-12-01T15:00:00Z"), 3*time.Hour)},
		{"a window at 100% without a reset is exhausted with no until", codexIn(gateReport("measured-eligible", noEligibility,
			withWindows(window("5h", 100, 0)))),
			excluded(ExcludeQuotaExhausted, EvidenceMeasured, "codex: quota window 5h at 100% with no known reset")},
		{"a window at 100% whose reset has passed is not exhausted", codexIn(gateReport("measured-eligible", noEligibility,
			withWindows(window("5h", 100, -time.Second)))), measured},
		{"a window at 100% resetting exactly now is not exhausted", codexIn(gateReport("measured-eligible", noEligibility,
			withWindows(window("5h", 100, 0), window("7d", 20, 0)), func(r *CapacityReport) { r.Snapshot.Windows[0].ResetsAt = tptr(capT0) })), measured},
		{"a window just under 100% is eligible", codexIn(gateReport("measured-eligible", noEligibility, withWindows(window("5h", 99.99, 0)))), measured},
		{"a window without used_percent never exhausts", EligibilityInput{Provider: Gemini, Source: QuotaLiveHTTP, Report: gateReport("measured-partial-windows"), Now: capT0},
			EligibilityVerdict{Eligible: true, Capacity: EvidenceMeasured, Detail: "gemini: capacity is measured"}},
		{"the override does not lift an exhausted window", allow(codexIn(gateReport("measured-eligible", noEligibility,
			withWindows(window("5h", 100, 45*time.Minute))))), exhausted5h},
		{"the override does not lift a learned exhaustion", allow(codexIn(gateReport("measured-eligible", withLearned(-30*time.Minute, 30*time.Minute)))), learnedCodex},

		// (10) Eligible.
		{"an eligible report with healthy windows is eligible", codexIn(gateReport("measured-eligible")), measured},
		{"a measured report without an eligibility report is eligible", codexIn(gateReport("measured-eligible", noEligibility)), measured},
		{"the override changes nothing on an eligible report", allow(codexIn(gateReport("measured-eligible"))), measured},

		// AllowUnknown lifts quota_unknown in every form.
		{"the override lifts a missing report", allow(codexIn(nil)), overridden(noReport)},
		{"the override lifts a stale report", allow(codexIn(gateReport("measured-eligible", acquiredAgo(16*time.Minute)))), overridden(stale)},
		{"the override lifts an unknown snapshot", allow(codexIn(gateReport("unknown-eligibility-unknown", noEligibility))),
			overridden(excluded(ExcludeQuotaUnknown, EvidenceUnknown, "codex: capacity is unknown: timeout"))},
	}
}

// TestEvaluateEligibility covers every rule of the gate in its order and
// the override's reach, comparing whole verdicts.
func TestEvaluateEligibility(t *testing.T) {
	t.Parallel()
	for _, tc := range gateCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var before []byte
			if tc.in.Report != nil && tc.in.Report.Validate() == nil {
				before = mustMarshalReport(t, *tc.in.Report)
			}
			got := EvaluateEligibility(tc.in)
			require.Equal(t, tc.want, got)
			require.Equal(t, got.Eligible, got.Code == "" || got.Overridden, "excluded exactly when a code is set without the override")
			require.True(t, strings.HasPrefix(got.Detail, string(tc.in.Provider)+": "), "the detail names the provider: %q", got.Detail)
			require.NotContains(t, got.Detail, "("+string(got.Code)+")", "the code is its own field; String() puts it in front")
			if before != nil {
				require.Equal(t, string(before), string(mustMarshalReport(t, *tc.in.Report)), "the gate does not change its input")
			}
		})
	}
}

// TestEvaluateEligibilityCoversEveryCode: the table reaches every exclusion
// code, both capacity evidence kinds a live source gives, and the override.
func TestEvaluateEligibilityCoversEveryCode(t *testing.T) {
	t.Parallel()
	codes := map[ExclusionCode]bool{}
	evidence := map[CapacityEvidence]bool{}
	over := false
	for _, tc := range gateCases() {
		codes[tc.want.Code] = true
		evidence[tc.want.Capacity] = true
		over = over || tc.want.Overridden
	}
	for _, c := range ExclusionCodes {
		require.True(t, codes[c], "no case for %s", c)
	}
	for _, e := range CapacityEvidences {
		require.True(t, evidence[e], "no case for evidence %s", e)
	}
	require.True(t, over)
}

func TestEligibilityVerdictString(t *testing.T) {
	t.Parallel()
	blocked := EvaluateEligibility(codexIn(gateReport("measured-policy-blocked")))
	require.Equal(t, "execution_policy_blocked: codex: purchased credits are present", blocked.String())
	ok := EvaluateEligibility(codexIn(gateReport("measured-eligible")))
	require.Equal(t, "eligible: codex: capacity is measured", ok.String())
	over := EvaluateEligibility(allow(codexIn(nil)))
	require.Equal(t, "quota_unknown: codex: no capacity report; allowed by the run's override for unknown evidence", over.String())
}

// BenchmarkEvaluateEligibility is the gate's pure decision over a measured
// codex report with an eligibility (the longest path that ends eligible).
//
//	go test ./policy -run '^$' -bench EvaluateEligibility -benchmem
func BenchmarkEvaluateEligibility(b *testing.B) {
	r := capacityGoldens()["measured-eligible"]
	in := EligibilityInput{Provider: r.Provider, Source: r.Snapshot.Source, Report: &r, Now: r.Snapshot.AcquiredAt.Add(time.Minute)}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if v := EvaluateEligibility(in); !v.Eligible {
			b.Fatal(v)
		}
	}
}
