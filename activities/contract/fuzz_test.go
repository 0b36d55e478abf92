package contract

import (
	"testing"
)

// FuzzDecodeLedger: the ledger decoder never panics, and whatever it
// accepts re-encodes to a file it accepts again with the same records.
func FuzzDecodeLedger(f *testing.F) {
	f.Add([]byte(`{"schema":1,"operations":[]}`))
	f.Add([]byte(`{"schema":1,"operations":[{"id":"a","task":"t","checkpoint":"c","kind":"run-checks","state":"pending","expected":{},"pendingAt":"x"}]}`))
	f.Add([]byte(`{"schema":1,"operations":[{"id":"a","task":"t","checkpoint":"c","kind":"run-checks","state":"rejected","expected":{"d":1},"result":{},"pendingAt":"x","settledAt":"y"}]}`))
	f.Add([]byte(`{"schema":1,"operations":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		lf, err := decodeLedger(b)
		if err != nil {
			return
		}
		dir := t.TempDir()
		if err := writeLedger(dir+"/l.json", lf); err != nil {
			t.Fatal(err)
		}
		again, err := readLedger(dir+"/l.json", false)
		if err != nil {
			t.Fatalf("an accepted ledger does not read back: %v", err)
		}
		if len(again.Operations) != len(lf.Operations) {
			t.Fatalf("%d operations read back as %d", len(lf.Operations), len(again.Operations))
		}
	})
}

// FuzzInterpret: any response gets exactly one of the three verdicts, a
// handoff only with its fields and malformed only with a reason.
func FuzzInterpret(f *testing.F) {
	f.Add([]byte("done\n"))
	f.Add(handoffResponse("T", "C", "run-checks", `[]`, `["u"]`))
	f.Add([]byte("x\n```pstack-handoff\n{"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v := Interpret(b)
		switch v.Verdict {
		case VerdictComplete:
			if v.Handoff != nil || v.Error != "" {
				t.Fatal("complete with a handoff or an error")
			}
		case VerdictHandoff:
			if v.Handoff == nil || v.Error != "" {
				t.Fatal("handoff without its fields")
			}
		case VerdictMalformed:
			if v.Handoff != nil || v.Error == "" {
				t.Fatal("malformed without a reason")
			}
		default:
			t.Fatalf("unknown verdict %q", v.Verdict)
		}
	})
}
