package events

import "testing"

// FuzzSubjectChecks holds the allocation-free checks to the definitions
// they stand in for: onEventSubject to comparing with EventSubject, and
// ValidateJobSubject to jobQueueName.
func FuzzSubjectChecks(f *testing.F) {
	f.Add("sy.ev.r-1.L0", "r-1", 0)
	f.Add("sy.ev.r-1.run", "r-1", RunLane)
	f.Add("sy.ev.r-1.L12", "r-1", 12)
	f.Add("sy.ev.r-1.L012", "r-1", 12)
	f.Add("sy.ev.r-1.L-3", "r-1", -3)
	f.Add("sy.ev.r-1L0", "r-1", 0)
	f.Add("sy.job.codex", "", 0)
	f.Add("sy.job.native.claude", "", 0)
	f.Add("sy.job.native", "", 0)
	f.Add("sy.job.native.native", "", 0)
	f.Add("sy.job.a.b", "", 0)
	f.Add("sy.job.native.a.b", "", 0)
	f.Fuzz(func(t *testing.T, subject, run string, lane int) {
		if got, want := onEventSubject(subject, run, lane), subject == EventSubject(run, lane); got != want {
			t.Fatalf("onEventSubject(%q, %q, %d) = %v, want %v", subject, run, lane, got, want)
		}
		_, qerr := jobQueueName(subject)
		err := ValidateJobSubject(subject)
		if (err == nil) != (qerr == nil) || (err != nil && err.Error() != qerr.Error()) {
			t.Fatalf("ValidateJobSubject(%q) = %v; jobQueueName says %v", subject, err, qerr)
		}
	})
}

// TestStoredSubjectCheckAllocates nothing for an event on its subject.
func TestStoredSubjectCheckAllocates(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() {
		if !onEventSubject("sy.ev.0b8e3f7c-1a2b-4c5d-8e9f-0a1b2c3d4e5f.L7", "0b8e3f7c-1a2b-4c5d-8e9f-0a1b2c3d4e5f", 7) {
			t.Fatal("not on its subject")
		}
		if err := ValidateJobSubject("sy.job.native.claude"); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("%v allocations, want 0", n)
	}
}
