package providers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// TestRecheckDelivered: the engine's re-check of a delivered receipt
// applies each provider's model-evidence rule from its spec, the exit
// status, the output and the argv's model pin, naming every failure.
func TestRecheckDelivered(t *testing.T) {
	t.Parallel()
	zero, one := 0, 1
	report, pinned := policy.EvidenceProviderReport, policy.EvidencePinnedArgv
	str := func(s string) *string { return &s }
	receipt := func(p policy.Provider, model string, argvModel string, ev *policy.ModelEvidence, verified bool, reported *string) *policy.Receipt {
		return &policy.Receipt{Status: policy.StatusComplete, Provider: p, Model: model, ExitCode: &zero,
			Argv: []string{string(p), "--model", argvModel}, ModelEvidence: ev, ModelVerified: verified, ReportedModel: reported}
	}
	att := func(p policy.Provider, model string, e policy.Effort) policy.Attempt {
		return policy.Attempt{Kind: policy.KindDescriptor, Provider: p, Model: model, Effort: e}
	}
	for _, tc := range []struct {
		name string
		rc   *policy.Receipt
		want policy.Attempt
		out  bool
		bad  []string // "" when the receipt passes
	}{
		{"claude alias verified by its report", receipt(policy.Claude, "opus", "opus", &report, true, str("claude-opus-5")), att(policy.Claude, "opus", policy.EffortMax), true, nil},
		{"claude report of another family", receipt(policy.Claude, "opus", "opus", &report, true, str("claude-sonnet-5")), att(policy.Claude, "opus", policy.EffortMax), true,
			[]string{`reported model "claude-sonnet-5" does not match the requested "opus"`}},
		{"grok cannot prove its model by argv", receipt(policy.Grok, "grok-4.7", "grok-4.7", &pinned, false, nil), att(policy.Grok, "grok-4.7", policy.EffortXHigh), true,
			[]string{"grok proves its model only by a provider report"}},
		{"devin pins its UID", receipt(policy.Devin, "swe-2", "swe-2-high", &pinned, false, nil), att(policy.Devin, "swe-2", policy.EffortHigh), true, nil},
		{"devin's argv pins the bare family", receipt(policy.Devin, "swe-2", "swe-2", &pinned, false, nil), att(policy.Devin, "swe-2", policy.EffortHigh), true,
			[]string{`the argv passes a --model other than the assignment's "swe-2-high"`}},
		{"antigravity echoes its slug", receipt(policy.Antigravity, "gemini-3-flash", "gemini-3-flash", &pinned, false, str("gemini-3-flash")), att(policy.Antigravity, "gemini-3-flash", policy.EffortDefault), true, nil},
		{"antigravity without its echo", receipt(policy.Antigravity, "gemini-3-flash", "gemini-3-flash", &pinned, false, nil), att(policy.Antigravity, "gemini-3-flash", policy.EffortDefault), true,
			[]string{"must echo the requested model"}},
		{"pinned-argv claiming verification", receipt(policy.Codex, "gpt-5.6-sol", "gpt-5.6-sol", &pinned, true, nil), att(policy.Codex, "gpt-5.6-sol", policy.EffortHigh), true,
			[]string{"pinned-argv with modelVerified true"}},
		{"every failure is named", func() *policy.Receipt {
			rc := receipt(policy.Codex, "gpt-5.6-sol", "gpt-5.6-terra", nil, false, nil)
			rc.ExitCode = &one
			return rc
		}(), att(policy.Codex, "gpt-5.6-sol", policy.EffortHigh), false,
			[]string{"exit status 1", "modelEvidence is null", `--model other than the assignment's "gpt-5.6-sol"`, "output file is missing or empty"}},
		{"no --model at all", func() *policy.Receipt {
			rc := receipt(policy.Codex, "gpt-5.6-sol", "gpt-5.6-sol", &pinned, false, nil)
			rc.Argv = []string{"codex", "exec", "-"}
			return rc
		}(), att(policy.Codex, "gpt-5.6-sol", policy.EffortHigh), true, []string{"does not pin the assignment's model"}},
		{"a --model= form", func() *policy.Receipt {
			rc := receipt(policy.Codex, "gpt-5.6-sol", "gpt-5.6-sol", &pinned, false, nil)
			rc.Argv = append(rc.Argv, "--model=gpt-5.6-terra")
			return rc
		}(), att(policy.Codex, "gpt-5.6-sol", policy.EffortHigh), true, []string{"--model=… instead of pinning"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := RecheckDelivered(tc.rc, tc.want, tc.out)
			if tc.bad == nil {
				require.Empty(t, got)
				return
			}
			for _, b := range tc.bad {
				require.Contains(t, got, b)
			}
		})
	}
}
