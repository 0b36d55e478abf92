package policy

// AttemptKind distinguishes a provider descriptor from a parent alias.
type AttemptKind string

// Attempt kinds.
const (
	KindDescriptor AttemptKind = "descriptor"
	KindAlias      AttemptKind = "alias"
)

// Alias names a parent-native attempt that uses the parent's own model.
type Alias string

// Aliases.
const (
	AliasInheritParent Alias = "inherit-parent"
	AliasAuto          Alias = "auto"
)

// Attempt is one parsed chain element: a descriptor or an alias. Its JSON
// form is the reference helper's: {"kind":"descriptor","provider",...} or
// {"kind":"alias","alias":...}.
type Attempt struct {
	Kind     AttemptKind `json:"kind"`
	Alias    Alias       `json:"alias,omitempty"`
	Provider Provider    `json:"provider,omitempty"`
	Model    string      `json:"model,omitempty"`
	Effort   Effort      `json:"effort,omitempty"`
}

// String renders the attempt as written in a sheet.
func (a Attempt) String() string {
	if a.Kind == KindAlias {
		return string(a.Alias)
	}
	return string(a.Provider) + ":" + a.Model + "@" + string(a.Effort)
}

// Authorization says whether an access fact authorizes an attempt.
type Authorization struct {
	State  string `json:"state"` // "allowed" or "blocked"
	Reason string `json:"reason,omitempty"`
}

// Allowed reports whether the attempt may launch.
func (a Authorization) Allowed() bool { return a.State == "allowed" }

// AttemptPolicy is one resolved attempt of a lane.
type AttemptPolicy struct {
	Descriptor      string        `json:"descriptor"`
	Attempt         Attempt       `json:"attempt"`
	ExhaustionGroup Provider      `json:"exhaustionGroup"`
	Funding         Funding       `json:"funding"`
	APISpend        APISpend      `json:"apiSpend"`
	Route           Route         `json:"route"`
	Authorization   Authorization `json:"authorization"`
}

// RunsOn is the provider that runs ap: its descriptor's, or for a parent
// alias (no provider of its own) the parent's own group.
func (ap AttemptPolicy) RunsOn() Provider {
	if ap.Attempt.Provider == "" {
		return ap.ExhaustionGroup
	}
	return ap.Attempt.Provider
}

// FallbackPolicy lists the outcomes that advance to the next attempt.
type FallbackPolicy struct {
	On []Outcome `json:"on"`
}

// Allows reports whether o advances under the policy.
func (f FallbackPolicy) Allows(o Outcome) bool {
	for _, x := range f.On {
		if x == o {
			return true
		}
	}
	return false
}

// DefaultFallback is the quota-only policy of sheets without "# fallback".
func DefaultFallback() FallbackPolicy {
	return FallbackPolicy{On: []Outcome{OutcomeUsageExhausted}}
}

// ContinuationPolicy is the sheet's "# continuation" line: which causes may
// re-run the same descriptor, and how many executions in total.
type ContinuationPolicy struct {
	On            []ContinuationCause `json:"on"`
	MaxExecutions int                 `json:"maxExecutions"`
}

// Allows reports whether cause c may continue.
func (c *ContinuationPolicy) Allows(x ContinuationCause) bool {
	if c == nil {
		return false
	}
	for _, y := range c.On {
		if y == x {
			return true
		}
	}
	return false
}

// LanePolicy is one seat of a role: its ordered attempts and the saved
// recovery policies.
type LanePolicy struct {
	ID           string              `json:"id"`
	Attempts     []AttemptPolicy     `json:"attempts"`
	Fallback     FallbackPolicy      `json:"fallback"`
	Continuation *ContinuationPolicy `json:"continuation,omitempty"`
}

// RolePolicy is a resolved role: one lane per seat.
type RolePolicy struct {
	Role   string       `json:"role"`
	Header string       `json:"header"`
	Lanes  []LanePolicy `json:"lanes"`
}
