package providers

import (
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// devinUpgradePrefix is the Display prefix of Devin's upgrade-required
// answer: the account's plan does not include the requested model. The
// dispatch seed names the answer ("An upgrade-required response is an
// unavailable-model failure, never permission to substitute another
// model") but quotes no text. The prefix is modelled on the Display
// templates the seed quotes from the binary ("Quota exhausted: ",
// "Rate limited: ", "Authentication required: "), not captured from a
// real run (testdata/transcripts/devin/upgrade-required); until a capture
// confirms it, any other wording stays child-failed.
const devinUpgradePrefix = "Upgrade required:"

// devinUpgradeCode is the evidence code of Devin's upgrade-required stop.
const devinUpgradeCode = "devin_upgrade_required"

// devinStop is Devin's stop adapter (Classify step 0): a nonzero exit, no
// delivered export and exactly one stderr "Error:" frame whose Display is
// the upgrade-required answer with a non-empty detail is unavailable-model,
// never child-failed (docs/decisions.md D-26D). Two Error: frames, a
// delivered final answer, a signal or a clean exit fail closed to the
// ordinary classification.
func devinStop(req Request, c Capture, p Parsed) *providerStop {
	if c.ExitCode == nil || *c.ExitCode == 0 || c.Signal != "" || p.TerminalSuccess || devinDelivered(req, c) {
		return nil
	}
	frames := stderrFrames(c.Stderr, func(line string) bool { return strings.HasPrefix(line, "Error:") })
	if len(frames) != 1 {
		return nil
	}
	display := strings.TrimSpace(strings.TrimPrefix(frames[0], "Error:"))
	detail, ok := strings.CutPrefix(display, devinUpgradePrefix)
	if !ok || strings.TrimSpace(detail) == "" {
		return nil
	}
	return &providerStop{
		Status: policy.StatusUnavailableModel,
		Code:   devinUpgradeCode,
		Note:   "devin answered that the account's plan does not include the model (upgrade required); no other model is substituted",
		Words:  frames[0],
	}
}
