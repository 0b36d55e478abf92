package policy

import "testing"

// BenchmarkNext decides a realistic lane: three attempts, a quota
// exhaustion and a route failure behind it, under a broad fallback.
func BenchmarkNext(b *testing.B) {
	lane := fxLaneWith(fxBroad)
	st := fxState(IsolatedWrite, []Provider{Grok},
		fxEvent(0, OutcomeUsageExhausted, fxStarted(true), fxClear),
		fxEvent(1, OutcomeRouteUnavailable, fxStarted(false)),
	)
	if d := Next(lane, st, nil); d.Kind != DecideLaunch || *d.AttemptIndex != 2 {
		b.Fatalf("unexpected decision %+v", d)
	}
	b.ReportAllocs()
	for b.Loop() {
		Next(lane, st, nil)
	}
}

// BenchmarkNextContinue decides a permission continuation, which runs the
// full readiness gate.
func BenchmarkNextContinue(b *testing.B) {
	lane := fxLaneWith(fxBoth)
	st := fxState(IsolatedWrite, nil, fxBlockedRun(1, IsolatedWrite))
	fs := fxPrepared(2, IsolatedWrite)
	if d := Next(lane, st, fs); d.Kind != DecideContinue {
		b.Fatalf("unexpected decision %+v", d)
	}
	b.ReportAllocs()
	for b.Loop() {
		Next(lane, st, fs)
	}
}
