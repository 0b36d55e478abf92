package policy

import (
	"testing"
)

// BenchmarkDecodeReceipt measures DecodeReceipt on a receipt as the runner
// writes it (indented, no HTML escaping), on its fast path (fast) and the
// strict member-by-member walk every receipt took before (strict):
//
//	go test -run '^$' -bench BenchmarkDecodeReceipt ./policy
func BenchmarkDecodeReceipt(b *testing.B) {
	r, err := DecodeReceipt(v2(b, eligible(StatusUsageExhausted)))
	if err != nil {
		b.Fatal(err)
	}
	data := runnerEncoding(b, r, "  ")
	for _, tc := range []struct {
		name   string
		decode func([]byte) (*Receipt, error)
	}{{"fast", DecodeReceipt}, {"strict", decodeReceiptStrict}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := tc.decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
