package policy

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// receiptSeeds are the seed corpus shared by both fuzz targets: every
// fixture and a receipt of every status, eligible or downgraded.
func receiptSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	var seeds [][]byte
	for _, name := range receiptFixtures {
		seeds = append(seeds, fixtureBytes(tb, name))
	}
	for _, s := range ReceiptStatuses {
		seeds = append(seeds, v2(tb, eligible(s)), v1(tb, eligible(s)),
			v2(tb, eligible(s), obj{"terminalSuccess": absent, "exitCode": nil}))
	}
	seeds = append(seeds,
		v2(tb, eligible(StatusChildFailed), obj{"toolDenial": permissionDenial}),
		v1(tb, obj{"processStarted": absent, "apiSpend": absent, "timeoutMs": absent}),
		v2(tb, obj{"provider": "gemini"}),
		// Section 4: schema 2 fields that may be absent.
		v2(tb, obj{"processStarted": absent, "contract": absent, "timeoutMs": absent}),
		v2(tb, eligible(StatusTimedOut), obj{"exitCode": 124, "signal": nil, "terminalSuccess": absent, "processStarted": absent}),
		v2(tb, eligible(StatusNeedsParentOperation), obj{"handoff.summary": absent}),
		v2(tb, obj{"receiptPath": "", "executionId": "", "cwd": "", "model": "0"}),
		[]byte(`{}`), []byte(`[]`), []byte(`null`), []byte(`{"schemaVersion":2`),
		[]byte(`{"schemaVersion":1,"schemaVersion":2}`))
	return seeds
}

func FuzzDecodeReceipt(f *testing.F) {
	for _, s := range receiptSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeReceipt(b)
		if err != nil {
			require.Nil(t, r)
			return
		}
		require.True(t, r.Status.Valid())
		require.Contains(t, []int{1, 2}, r.SchemaVersion)
		// An accepted receipt survives its own marshalling unchanged, so the
		// runner's writer and this reader agree.
		out, err := json.Marshal(r)
		require.NoError(t, err)
		again, err := DecodeReceipt(out)
		require.NoError(t, err, "re-decode %s", out)
		require.Equal(t, r, again)
	})
}

func FuzzNormalize(f *testing.F) {
	for _, s := range receiptSeeds(f) {
		f.Add(s, uint8(0), true, false)
		f.Add(s, uint8(1), false, true)
	}
	f.Fuzz(func(t *testing.T, b []byte, index uint8, writer, strict bool) {
		in := solInput(b)
		in.AttemptIndex = int(index)
		if !writer {
			in.Mode = ReadOnly
		}
		if strict {
			in.Contract = ContractStrict
		}
		ev, err := Normalize(in)
		if err != nil {
			require.True(t, IsUsage(err) || IsPolicy(err), "unclassified error %T %v", err, err)
			return
		}
		require.True(t, ev.Status.Valid(), "status %q", ev.Status)
		require.Equal(t, int(index), ev.AttemptIndex)
		require.Equal(t, fixtureReceiptPath, ev.ReceiptPath)
		require.Equal(t, ev.Status == OutcomeNeedsParentOp, ev.Handoff != nil)
		require.Equal(t, ev.Status == OutcomePermissionBlocked, ev.DeniedCause == DeniedPermission)
		if ev.Status != OutcomePermissionBlocked {
			require.Equal(t, DeniedCause(""), ev.DeniedCause)
		}
		if ev.Execution != nil {
			require.Equal(t, in.Mode, ev.Execution.Access)
			require.Equal(t, in.Attempt.Descriptor, ev.Execution.Descriptor)
		}
	})
}
