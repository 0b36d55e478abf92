package providers

import (
	"fmt"

	"github.com/switchyard-dev/switchyard/policy"
)

// The runner-side model rules, one per spec (Spec.CLIModel): the exact
// --model value for a descriptor's model and effort, enforcing what the
// sheet parser leaves open. They were policy.RunnerModel's per-provider
// table; they live in the specs so adding a provider is one spec.

// descriptorOf is the descriptor text errors quote.
func descriptorOf(p policy.Provider, model string, effort policy.Effort) string {
	return policy.Attempt{Kind: policy.KindDescriptor, Provider: p, Model: model, Effort: effort}.String()
}

// effortModel passes the model through and refuses @default: the provider
// selects reasoning by effort (Codex, Grok, Gemini).
func effortModel(p policy.Provider) func(string, policy.Effort) (string, error) {
	return func(model string, effort policy.Effort) (string, error) {
		if effort == policy.EffortDefault {
			return "", fmt.Errorf("%s: default effort is only for cursor, antigravity, opencode and Devin UIDs", descriptorOf(p, model, effort))
		}
		return model, nil
	}
}

// slugModel passes the model through and takes @default only: the exact
// model slug selects reasoning (Cursor, Antigravity, OpenCode).
func slugModel(p policy.Provider) func(string, policy.Effort) (string, error) {
	return func(model string, effort policy.Effort) (string, error) {
		if effort != policy.EffortDefault {
			return "", fmt.Errorf("%s: %s selects reasoning by exact model slug; use @default", descriptorOf(p, model, effort), p)
		}
		return model, nil
	}
}

// claudeModel refuses a versioned pin of a rolling family (normalize it
// first) and @default.
func claudeModel(model string, effort policy.Effort) (string, error) {
	if alias, ok := policy.VersionedClaudeAlias(model); ok {
		return "", &ModelRefusal{Reason: fmt.Sprintf("Claude model %s is a version pin; normalize it to %s before invoking the runner", model, alias)}
	}
	return effortModel(policy.Claude)(model, effort)
}

// ModelRefusal is a Spec.CLIModel refusal of the model itself, whatever
// the effort (a versioned Claude pin): the runner names --model for it and
// --effort for any other refusal.
type ModelRefusal struct{ Reason string }

func (e *ModelRefusal) Error() string { return e.Reason }

// devinModel maps Devin's legacy families to CLI UIDs
// (policy.DevinModelUID: swe-2@high → swe-2-high, swe-1.6@default → swe-1-6).
func devinModel(model string, effort policy.Effort) (string, error) {
	return policy.DevinModelUID(model, effort)
}
