package providers

import (
	"fmt"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// RecheckDelivered is the engine's own check of a receipt that claims a
// delivered final response (complete or needs-parent-operation) before it
// records a finish from it: the engine does not trust the status blindly.
// It re-checks the dispatch seed's success conditions ("Completion and
// dropouts") from the receipt and the assignment:
//
//  1. exit status 0, no signal;
//  2. status complete (or needs-parent-operation, the other delivered
//     status);
//  3. the provider's model-evidence rule (Spec.ModelEvidence): a verified
//     provider report that matches the request, or, for a pinned-argv
//     provider only, pinned-argv with modelVerified false and reportedModel
//     null (Antigravity: its echo of the requested slug);
//  4. a non-empty output file (outputNonEmpty, which the caller stats);
//
// and that the argv pins the assignment's CLI model (Spec.CLIModel of its
// model and effort) with every --model it passes. It returns "" when all
// hold, else every failed condition in one launcher-authored line (no
// receipt text beyond the model names, capped).
func RecheckDelivered(r *policy.Receipt, want policy.Attempt, outputNonEmpty bool) string {
	if r == nil {
		return "no receipt"
	}
	var bad []string
	if r.Status != policy.StatusComplete && r.Status != policy.StatusNeedsParentOperation {
		bad = append(bad, fmt.Sprintf("status is %s, not complete", CapText(string(r.Status), 40)))
	}
	switch {
	case r.ExitCode == nil:
		bad = append(bad, "no exit status recorded (success needs exit 0)")
	case *r.ExitCode != 0:
		bad = append(bad, fmt.Sprintf("exit status %d (success needs exit 0)", *r.ExitCode))
	}
	if r.Signal != nil {
		bad = append(bad, "the child was signalled (success needs exit 0)")
	}
	spec, err := Lookup(r.Provider)
	if err != nil {
		bad = append(bad, fmt.Sprintf("provider %q has no spec", CapText(string(r.Provider), 40)))
	} else {
		if why := recheckModelEvidence(spec, r); why != "" {
			bad = append(bad, why)
		}
		if why := recheckArgv(spec, r.Argv, want); why != "" {
			bad = append(bad, why)
		}
	}
	if !outputNonEmpty {
		bad = append(bad, "the output file is missing or empty (success needs a non-empty output file)")
	}
	return CapText(strings.Join(bad, "; "), FieldCap)
}

// recheckModelEvidence applies condition 3 by the spec's ModelEvidence.
func recheckModelEvidence(spec *Spec, r *policy.Receipt) string {
	evidence := "null"
	if r.ModelEvidence != nil {
		evidence = string(*r.ModelEvidence)
	}
	switch evidence {
	case string(policy.EvidenceProviderReport):
		switch {
		case !r.ModelVerified:
			return "modelEvidence provider-report without modelVerified true"
		case r.ReportedModel == nil:
			return "modelEvidence provider-report without a reported model"
		case spec.ModelEcho:
			return fmt.Sprintf("%s's report only echoes the requested model; it cannot be provider-report evidence", spec.Provider)
		case !spec.ModelMatch.matches(r.Model, *r.ReportedModel):
			return fmt.Sprintf("reported model %q does not match the requested %q", CapText(*r.ReportedModel, 100), CapText(r.Model, 100))
		}
		return ""
	case string(policy.EvidencePinnedArgv):
		if spec.ModelEvidence != policy.EvidencePinnedArgv {
			return fmt.Sprintf("%s proves its model only by a provider report, and the receipt says pinned-argv", spec.Provider)
		}
		if r.ModelVerified {
			return "modelEvidence pinned-argv with modelVerified true (pinned argv does not verify the model)"
		}
		if spec.ModelEcho {
			if r.ReportedModel == nil || *r.ReportedModel != r.Model {
				return fmt.Sprintf("%s's receipt must echo the requested model in reportedModel", spec.Provider)
			}
			return ""
		}
		if r.ReportedModel != nil {
			return "modelEvidence pinned-argv with a reported model (a pinned-argv receipt reports none)"
		}
		return ""
	}
	return fmt.Sprintf("modelEvidence is %s (success needs provider-report or, for %s, %s)", CapText(evidence, 40), spec.Provider, spec.ModelEvidence)
}

// recheckArgv requires at least one --model in argv, each followed by the
// assignment's exact CLI model, and no --model=… form that could pass
// another one.
func recheckArgv(spec *Spec, argv []string, want policy.Attempt) string {
	cli, err := spec.CLIModel(want.Model, want.Effort)
	if err != nil {
		return "the assignment has no CLI model: " + CapText(err.Error(), 200)
	}
	pinned := 0
	for i, a := range argv {
		switch {
		case a == "--model":
			if i+1 >= len(argv) || argv[i+1] != cli {
				return fmt.Sprintf("the argv passes a --model other than the assignment's %q", CapText(cli, 100))
			}
			pinned++
		case strings.HasPrefix(a, "--model="):
			return fmt.Sprintf("the argv passes --model=… instead of pinning the assignment's %q", CapText(cli, 100))
		}
	}
	if pinned == 0 {
		return fmt.Sprintf("the argv does not pin the assignment's model (--model %s)", CapText(cli, 100))
	}
	return ""
}
