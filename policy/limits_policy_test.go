package policy

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// padTo returns doc followed by spaces up to exactly n bytes: still the
// same JSON document, only bigger.
func padTo(tb testing.TB, doc []byte, n int) []byte {
	tb.Helper()
	require.LessOrEqual(tb, len(doc), n)
	return append(append([]byte{}, doc...), bytes.Repeat([]byte(" "), n-len(doc))...)
}

// TestLimitsPolicyInputs proves every policy input read from outside is
// refused one byte over its limit, with an error that names the limit (the
// constant and its value), and that an input of exactly the limit is not
// refused for its size.
func TestLimitsPolicyInputs(t *testing.T) {
	t.Parallel()
	state := []byte(`{"events":[],"access":"read-only"}`)
	receipt := fixtureBytes(t, "complete-v2.json")
	tests := []struct {
		name  string
		limit int
		input func(tb testing.TB, n int) []byte // an accepted input of n bytes
		read  func(b []byte) error
		kind  func(error) bool // the error's documented type
		names []string         // what the over-limit error must say
	}{
		{
			name:  "sheet over policy.MaxSheetBytes",
			limit: MaxSheetBytes,
			input: func(_ testing.TB, n int) []byte { return bytes.Repeat([]byte("#"), n) },
			read: func(b []byte) error {
				_, err := ParseSheet(b, DefaultOptions())
				return err
			},
			kind:  IsPolicy,
			names: []string{"policy.MaxSheetBytes", strconv.Itoa(MaxSheetBytes)},
		},
		{
			name:  "lane state over policy.MaxLaneStateBytes",
			limit: MaxLaneStateBytes,
			input: func(tb testing.TB, n int) []byte { return padTo(tb, state, n) },
			read: func(b []byte) error {
				_, err := DecodeLaneState(b)
				return err
			},
			kind:  IsUsage,
			names: []string{"policy.MaxLaneStateBytes", strconv.Itoa(MaxLaneStateBytes)},
		},
		{
			name:  "receipt decode over policy.MaxReceiptBytes",
			limit: MaxReceiptBytes,
			input: func(tb testing.TB, n int) []byte { return padTo(tb, receipt, n) },
			read: func(b []byte) error {
				_, err := DecodeReceipt(b)
				return err
			},
			kind:  func(err error) bool { return err == ErrReceiptTooLarge },
			names: []string{"policy.MaxReceiptBytes", "1 MiB"},
		},
		{
			name:  "receipt normalize over policy.MaxReceiptBytes",
			limit: MaxReceiptBytes,
			input: func(tb testing.TB, n int) []byte { return padTo(tb, receipt, n) },
			read: func(b []byte) error {
				_, err := Normalize(solInput(b))
				return err
			},
			kind:  IsUsage,
			names: []string{"policy.MaxReceiptBytes", strconv.Itoa(MaxReceiptBytes), fixtureReceiptPath},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			at := tc.input(t, tc.limit)
			require.Len(t, at, tc.limit)
			require.NoError(t, tc.read(at), "an input of exactly the limit is accepted")

			err := tc.read(append(at, ' '))
			require.Error(t, err, "one byte over the limit is refused")
			require.True(t, tc.kind(err), "error type %T: %v", err, err)
			for _, s := range tc.names {
				require.Contains(t, err.Error(), s, "the error names the limit")
			}
		})
	}
}
