package engine

import (
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// Fidelity is what an attempt's receipt could and could not verify about
// the harness that ran it. The provider CLIs are agent harnesses that own
// their tool loop, so "fidelity is best-effort per harness and labeled per
// run" and never presented as full-fidelity tracing (the registry RFC):
// the report labels each attempt with a receipt.
type Fidelity struct {
	// Model is how the model was proved: FidelityModelVerified (the
	// provider's own report matched the request), FidelityModelPinned
	// (the argv pinned it; nothing the provider reported verifies it), or
	// FidelityModelNone (no model evidence: the attempt delivered nothing,
	// or its proof failed).
	Model string `json:"model"`
	// Containment is what confined the attempt: FidelityContainmentKernel
	// (the host's sandbox, verified by the kernel),
	// FidelityContainmentProvider (the provider's own sandbox, as its spec
	// claims), FidelityContainmentUnrestricted (run unrestricted by the
	// run's --allow-unverified-containment), FidelityContainmentUnverified,
	// or FidelityContainmentUnrecorded (the receipt records none).
	Containment string `json:"containment"`
	// Usage is FidelityUsageReported when the receipt carries token
	// counts, else FidelityUsageNotReported.
	Usage string `json:"usage"`
	// Text says it in one line, with what no receipt shows.
	Text string `json:"text"`
}

// Fidelity labels.
const (
	FidelityModelVerified = "provider-report"
	FidelityModelPinned   = "pinned-argv"
	FidelityModelNone     = "none"

	FidelityContainmentKernel       = "kernel"
	FidelityContainmentProvider     = "provider-sandbox"
	FidelityContainmentUnrestricted = "unrestricted"
	FidelityContainmentUnverified   = "unverified"
	FidelityContainmentUnrecorded   = "unrecorded"

	FidelityUsageReported    = "reported"
	FidelityUsageNotReported = "not-reported"
)

// fidelityUnseen is what no receipt shows, whatever the harness.
const fidelityUnseen = "the harness's own reasoning and tool loop are not traced"

// fidelityOf labels a receipt. A receipt the engine's re-check refused
// (malformed) proves no model, whatever it claims.
func fidelityOf(rc *policy.Receipt, malformed bool) *Fidelity {
	f := &Fidelity{Model: FidelityModelNone, Containment: FidelityContainmentUnrecorded, Usage: FidelityUsageNotReported}
	var text []string
	switch {
	case malformed || rc.ModelEvidence == nil:
		text = append(text, "model not verified (no model evidence)")
	case *rc.ModelEvidence == policy.EvidenceProviderReport && rc.ModelVerified:
		f.Model = FidelityModelVerified
		text = append(text, "model verified by the provider's report")
	case *rc.ModelEvidence == policy.EvidencePinnedArgv:
		f.Model = FidelityModelPinned
		text = append(text, "model pinned by argv only (the provider reports none that verifies it)")
	default:
		text = append(text, "model not verified")
	}
	switch c := rc.Containment; {
	case c == nil:
		text = append(text, "containment not recorded")
	case strings.HasPrefix(c.By, "the kernel"):
		f.Containment = FidelityContainmentKernel
		text = append(text, "containment verified by "+c.By)
	case c.By != "":
		f.Containment = FidelityContainmentProvider
		text = append(text, "containment by "+c.By+", not verified by the kernel")
	case c.Unrestricted:
		f.Containment = FidelityContainmentUnrestricted
		text = append(text, "containment unverified: run unrestricted (--allow-unverified-containment)")
	default:
		f.Containment = FidelityContainmentUnverified
		text = append(text, "containment unverified")
	}
	if u := rc.Usage; u != nil && *u != (policy.Usage{}) {
		f.Usage = FidelityUsageReported
		text = append(text, "token usage reported by the provider")
	} else {
		text = append(text, "no token usage reported")
	}
	f.Text = strings.Join(append(text, fidelityUnseen), "; ")
	return f
}
