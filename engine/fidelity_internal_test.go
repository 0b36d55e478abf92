package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// TestFidelityOf: each attempt's fidelity label says what its receipt
// could and could not verify: the model's proof, the containment and the
// usage, and always that the harness's own loop is not traced.
func TestFidelityOf(t *testing.T) {
	t.Parallel()
	report, pinned := policy.EvidenceProviderReport, policy.EvidencePinnedArgv
	n := int64(10)
	usage := &policy.Usage{InputTokens: &n}
	kernel := &policy.ReceiptContainment{Class: policy.ContainmentReadOnly, By: "the kernel (Landlock ABI 7)"}
	own := &policy.ReceiptContainment{Class: policy.ContainmentReadOnly, By: "the provider's own sandbox (codex --sandbox read-only)"}
	open := &policy.ReceiptContainment{Class: policy.ContainmentUnverified, Unrestricted: true}
	for _, tc := range []struct {
		name                      string
		rc                        policy.Receipt
		malformed                 bool
		model, containment, usage string
		text                      []string
	}{
		{"verified report, kernel, usage", policy.Receipt{ModelEvidence: &report, ModelVerified: true, Containment: kernel, Usage: usage},
			false, FidelityModelVerified, FidelityContainmentKernel, FidelityUsageReported,
			[]string{"model verified by the provider's report", "containment verified by the kernel (Landlock ABI 7)", "token usage reported"}},
		{"pinned argv, provider sandbox, no usage", policy.Receipt{ModelEvidence: &pinned, Containment: own},
			false, FidelityModelPinned, FidelityContainmentProvider, FidelityUsageNotReported,
			[]string{"model pinned by argv only", "not verified by the kernel", "no token usage reported"}},
		{"unrestricted, empty usage", policy.Receipt{ModelEvidence: &pinned, Containment: open, Usage: &policy.Usage{}},
			false, FidelityModelPinned, FidelityContainmentUnrestricted, FidelityUsageNotReported,
			[]string{"run unrestricted (--allow-unverified-containment)"}},
		{"failed attempt, unrecorded containment", policy.Receipt{},
			false, FidelityModelNone, FidelityContainmentUnrecorded, FidelityUsageNotReported,
			[]string{"model not verified (no model evidence)", "containment not recorded"}},
		{"refused by the re-check", policy.Receipt{ModelEvidence: &report, ModelVerified: true, Containment: &policy.ReceiptContainment{Class: policy.ContainmentReadOnly}},
			true, FidelityModelNone, FidelityContainmentUnverified, FidelityUsageNotReported,
			[]string{"model not verified", "containment unverified"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := fidelityOf(&tc.rc, tc.malformed)
			require.Equal(t, tc.model, f.Model)
			require.Equal(t, tc.containment, f.Containment)
			require.Equal(t, tc.usage, f.Usage)
			for _, s := range append(tc.text, "the harness's own reasoning and tool loop are not traced") {
				require.Contains(t, f.Text, s)
			}
		})
	}
}
