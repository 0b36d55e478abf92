package providers

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// pinnedArgvProviders may succeed without a provider model report: their
// argv pins the model and the CLI never reports one (RUNNER.md "Model
// proof", provider-dispatch.md "Completion and dropouts"). Grok, Claude and
// Gemini are not in the list: without a matching report they fail.
var pinnedArgvProviders = []policy.Provider{policy.Codex, policy.Devin, policy.Cursor, policy.OpenCode}

// VerifyModel decides a successful receipt's model proof from the parsed
// report (RUNNER.md "Model proof"):
//
//   - Antigravity's init.model must equal the request exactly; it only
//     echoes the argv override, so the proof is pinned-argv, unverified,
//     with the echo as reportedModel.
//   - A report that matches the request is provider-report, verified.
//   - Codex, Devin, Cursor and OpenCode without a report are pinned-argv,
//     unverified, with reportedModel nil.
//   - Anything else (a missing report elsewhere, a mismatch) is an error:
//     the caller turns it into a postprocess malformed-output.
//
// Matching: Cursor and Antigravity need an exact match. A Claude rolling
// alias (fable, opus, sonnet) needs claude-<alias>-<numeric revision>. Any
// other request matches a report equal to it or starting with
// "<requested>-"; for Claude a report claude-<requested>-<numeric revision>
// also matches, so a new alias works without a code change.
func VerifyModel(spec *Spec, req Request, p Parsed) (reported *string, verified bool, evidence *policy.ModelEvidence, err error) {
	provider := providerOf(spec, req)
	requested := req.Model
	if requested == "" {
		requested = req.CLIModel
	}
	if p.ReportedModel != nil && strings.TrimSpace(*p.ReportedModel) != "" {
		r := *p.ReportedModel
		reported = &r
	}
	pinned, report := policy.EvidencePinnedArgv, policy.EvidenceProviderReport
	switch {
	case provider == policy.Antigravity:
		if reported == nil {
			return nil, false, nil, errors.New("antigravity did not echo the requested model in its init event")
		}
		if *reported != requested {
			return reported, false, nil, modelMismatch(provider, *reported, requested)
		}
		return reported, false, &pinned, nil
	case reported == nil:
		for _, q := range pinnedArgvProviders {
			if q == provider {
				return nil, false, &pinned, nil
			}
		}
		return nil, false, nil, fmt.Errorf("requested model %q was not reported by %s", CapText(requested, 200), provider)
	case modelMatches(provider, requested, *reported):
		return reported, true, &report, nil
	}
	return reported, false, nil, modelMismatch(provider, *reported, requested)
}

func modelMismatch(provider policy.Provider, reported, requested string) error {
	return fmt.Errorf("%s reported model %q, which does not match the requested %q", provider, CapText(reported, 200), CapText(requested, 200))
}

// modelMatches applies the exact-or-revision rules.
func modelMatches(provider policy.Provider, requested, reported string) bool {
	if requested == "" || reported == "" {
		return false
	}
	switch provider {
	case policy.Cursor, policy.Antigravity:
		return reported == requested
	case policy.Claude:
		if rollingClaudeAlias(requested) {
			alias, ok := policy.VersionedClaudeAlias(reported)
			return ok && alias == requested
		}
		if rest, ok := strings.CutPrefix(reported, "claude-"+requested+"-"); ok && numericRevision(rest) {
			return true
		}
	}
	return reported == requested || strings.HasPrefix(reported, requested+"-")
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
