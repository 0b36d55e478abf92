package providers

import (
	"fmt"
	"sort"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// ModelMatch is the rule a CLI's model report must meet against the
// requested model (RUNNER.md "Model proof"); each spec names its own.
type ModelMatch string

// Model-report matching rules.
const (
	// ModelMatchExact: the report equals the request (Cursor, Antigravity).
	ModelMatchExact ModelMatch = "exact"
	// ModelMatchRevision: the report equals the request or starts with
	// "<requested>-".
	ModelMatchRevision ModelMatch = "exact-or-revision"
	// ModelMatchClaude: a Claude rolling alias (fable, opus, sonnet) needs
	// claude-<alias>-<numeric revision>; any other request matches as
	// ModelMatchRevision or as claude-<requested>-<numeric revision>, so a
	// new alias works without a code change.
	ModelMatchClaude ModelMatch = "claude-alias-revision"
)

// matches applies the rule; an unknown rule matches nothing (fail closed).
func (m ModelMatch) matches(requested, reported string) bool {
	if requested == "" || reported == "" {
		return false
	}
	revision := reported == requested || strings.HasPrefix(reported, requested+"-")
	switch m {
	case ModelMatchExact:
		return reported == requested
	case ModelMatchRevision:
		return revision
	case ModelMatchClaude:
		if rollingClaudeAlias(requested) {
			alias, ok := policy.VersionedClaudeAlias(reported)
			return ok && alias == requested
		}
		if rest, ok := strings.CutPrefix(reported, "claude-"+requested+"-"); ok && numericRevision(rest) {
			return true
		}
		return revision
	}
	return false
}

// VerifyModel decides a successful receipt's model proof from the parsed
// report and the spec's model rules (RUNNER.md "Model proof"):
//
//   - A ModelEcho report (Antigravity's init.model) must be present and
//     meet ModelMatch; it only echoes the argv override, so the proof is
//     pinned-argv, unverified, with the echo as reportedModel.
//   - A report that meets ModelMatch is provider-report, verified.
//   - Without a report, a spec whose ModelEvidence is pinned-argv (Codex,
//     Devin, Cursor, OpenCode) is pinned-argv, unverified, with
//     reportedModel nil.
//   - Anything else (a missing report where ModelEvidence is
//     provider-report, a mismatch) is an error: the caller turns it into a
//     postprocess malformed-output.
func VerifyModel(spec *Spec, req Request, p Parsed) (reported *string, verified bool, evidence *policy.ModelEvidence, err error) {
	provider := providerOf(spec, req)
	rules := behaviourOf(spec, req)
	requested := req.Model
	if requested == "" {
		requested = req.CLIModel
	}
	if p.ReportedModel != nil && strings.TrimSpace(*p.ReportedModel) != "" {
		r := *p.ReportedModel
		reported = &r
	}
	if rules == nil {
		return reported, false, nil, fmt.Errorf("no model proof rule is implemented for provider %q", CapText(string(provider), 100))
	}
	pinned, report := policy.EvidencePinnedArgv, policy.EvidenceProviderReport
	switch {
	case rules.ModelEcho:
		if reported == nil {
			return nil, false, nil, fmt.Errorf("%s did not echo the requested model in its init event", provider)
		}
		if !rules.ModelMatch.matches(requested, *reported) {
			return reported, false, nil, modelMismatch(provider, *reported, requested)
		}
		return reported, false, &pinned, nil
	case reported == nil:
		if rules.ModelEvidence == policy.EvidencePinnedArgv {
			return nil, false, &pinned, nil
		}
		return nil, false, nil, fmt.Errorf("requested model %q was not reported by %s", CapText(requested, 200), provider)
	case rules.ModelMatch.matches(requested, *reported):
		return reported, true, &report, nil
	}
	return reported, false, nil, modelMismatch(provider, *reported, requested)
}

func modelMismatch(provider policy.Provider, reported, requested string) error {
	return fmt.Errorf("%s reported model %q, which does not match the requested %q", provider, CapText(reported, 200), CapText(requested, 200))
}

// rollingClaudeAlias reports whether model is one of the legacy rolling
// aliases, by asking the policy's own normalization which family a
// minimal versioned ID of it belongs to.
func rollingClaudeAlias(model string) bool {
	alias, ok := policy.VersionedClaudeAlias("claude-" + model + "-0")
	return ok && alias == model
}

// numericRevision matches [0-9]+(-[0-9]+)*.
func numericRevision(s string) bool {
	if s == "" {
		return false
	}
	for _, part := range strings.Split(s, "-") {
		if part == "" {
			return false
		}
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return false
			}
		}
	}
	return true
}

// mainModel picks the reported model from a per-model usage object keyed by
// model name: a single key is the report; with several, the key whose
// metric is strictly the largest is the main model. No key gives nil; a
// tie or a missing metric is an ambiguous report.
func mainModel(usage rawObject, metric func(rawObject) *int64) (*string, error) {
	keys := make([]string, 0, len(usage))
	for k := range usage {
		if strings.TrimSpace(k) != "" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	switch len(keys) {
	case 0:
		return nil, nil
	case 1:
		return nonBlankID(keys[0]), nil
	}
	best, bestN, tie := "", int64(-1), false
	for _, k := range keys {
		v, _ := usage.obj(k)
		n := metric(v)
		if n == nil {
			return nil, fmt.Errorf("%d models reported and %q has no usage to rank it", len(keys), CapText(k, 100))
		}
		switch {
		case *n > bestN:
			best, bestN, tie = k, *n, false
		case *n == bestN:
			tie = true
		}
	}
	if tie {
		return nil, fmt.Errorf("%d models reported with no single main model", len(keys))
	}
	return nonBlankID(best), nil
}
