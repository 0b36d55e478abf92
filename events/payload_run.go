package events

import (
	"bytes"
	"maps"
	"path/filepath"
	"slices"

	"github.com/switchyard-dev/switchyard/policy"
)

// RunCreated is a run's first event (run-level): everything replay needs to
// recompute the run's decisions without reading anything else.
type RunCreated struct {
	// Sheet is the frozen model sheet's exact bytes (base64 in JSON).
	Sheet []byte `json:"sheet"`
	// SheetDigest is Digest(Sheet); every decision event repeats it.
	SheetDigest string `json:"sheetDigest"`
	// Role is the role the run resolved.
	Role string `json:"role"`
	// Parent is the parent harness that owns the run.
	Parent policy.Parent `json:"parent"`
	// Access is the run's access mode (--mode).
	Access policy.Access `json:"access"`
	// PromptDigest is Digest of the prompt file's bytes; PromptPath its
	// absolute path.
	PromptDigest string `json:"promptDigest"`
	PromptPath   string `json:"promptPath"`
	// Cwd is the absolute working directory the run was started for.
	Cwd string `json:"cwd"`
	// Lanes are the resolved lane policies; lane i of the run is Lanes[i].
	Lanes []policy.LanePolicy `json:"lanes"`
	// Options are the run's remaining settings.
	Options RunOptions `json:"options"`
}

// RunOptions are run settings that are not part of the sheet.
type RunOptions struct {
	// Contract is the worker ownership contract for every attempt.
	Contract policy.Contract `json:"contract"`
	// TimeoutMs is the per-attempt runner deadline in milliseconds; 0 means
	// none.
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
	// AllowUnknownQuota lists the providers whose UNKNOWN quota or
	// unverified eligibility the run explicitly accepts
	// (run --allow-unknown-quota P): their attempts proceed with a warning
	// instead of being excluded. Never policy_blocked or exhausted ones.
	// Each must be a known provider, at most once; the order is kept as
	// given (the order the user named them), since it decides nothing.
	AllowUnknownQuota []policy.Provider `json:"allowUnknownQuota,omitempty"`
	// StallTimeoutMs is the run's response-stall timeout for every attempt
	// (run --stall-timeout); 0 means DefaultStallTimeoutMs.
	StallTimeoutMs int64 `json:"stallTimeoutMs,omitempty"`
	// ProviderStallTimeoutMs overrides StallTimeoutMs per provider.
	ProviderStallTimeoutMs map[policy.Provider]int64 `json:"providerStallTimeoutMs,omitempty"`
	// StallWatchdog records whether the run's attempts are watched for
	// stalls: on (with StallTimeoutMs, its overrides, else the defaults)
	// or off (run --stall-timeout off). Absent on runs recorded before
	// it, whose attempts were watched: StallWatchdogLegacy means on.
	StallWatchdog StallWatchdog `json:"stallWatchdog,omitempty"`
	// AllowUnverifiedContainment lists the providers whose writer attempts
	// may launch although their containment is UNVERIFIED
	// (run --allow-unverified-containment P): an explicit unrestricted
	// contract, recorded here.
	AllowUnverifiedContainment []policy.Provider `json:"allowUnverifiedContainment,omitempty"`
	// OpenCodeChatGPTSubscription records run
	// --opencode-chatgpt-subscription: the run's OpenCode attempts of
	// exactly openai/gpt-6.1-sol@default under apiSpend deny use OpenCode's
	// ChatGPT login (their jobs carry it).
	OpenCodeChatGPTSubscription bool `json:"opencodeChatGPTSubscription,omitempty"`
}

// EventType returns TypeRunCreated.
func (RunCreated) EventType() Type { return TypeRunCreated }

func (p RunCreated) validate() error {
	if len(p.Sheet) == 0 {
		return invalidf("sheet is required")
	}
	if err := requireDigest("sheetDigest", p.SheetDigest); err != nil {
		return err
	}
	if d := Digest(p.Sheet); p.SheetDigest != d {
		return invalidf("sheetDigest %s does not match the sheet bytes (%s)", p.SheetDigest, d)
	}
	if err := requireText("role", p.Role); err != nil {
		return err
	}
	if _, err := policy.ParseParent(string(p.Parent)); err != nil {
		return invalidf("parent %q: want claude or codex", p.Parent)
	}
	if _, err := policy.ParseAccess(string(p.Access)); err != nil {
		return invalidf("access %q: want read-only or isolated-write", p.Access)
	}
	if err := requireDigest("promptDigest", p.PromptDigest); err != nil {
		return err
	}
	if err := requireAbs("promptPath", p.PromptPath); err != nil {
		return err
	}
	if err := requireAbs("cwd", p.Cwd); err != nil {
		return err
	}
	if len(p.Lanes) == 0 || len(p.Lanes) > MaxLanes+1 {
		return invalidf("lanes: want 1..%d resolved lanes, got %d", MaxLanes+1, len(p.Lanes))
	}
	for i, l := range p.Lanes {
		if l.ID == "" {
			return invalidf("lanes[%d].id is required", i)
		}
	}
	if p.Options.Contract != policy.ContractLegacy && p.Options.Contract != policy.ContractStrict {
		return invalidf("options.contract %q: want legacy or strict", p.Options.Contract)
	}
	if p.Options.TimeoutMs < 0 {
		return invalidf("options.timeoutMs must not be negative")
	}
	for i, q := range p.Options.AllowUnknownQuota {
		if !q.Valid() {
			return invalidf("options.allowUnknownQuota[%d] %q is not a known provider", i, q)
		}
		if slices.Contains(p.Options.AllowUnknownQuota[:i], q) {
			return invalidf("options.allowUnknownQuota[%d] %q is repeated", i, q)
		}
	}
	if ms := p.Options.StallTimeoutMs; ms < 0 || ms > MaxStallTimeoutMs {
		return invalidf("options.stallTimeoutMs %d: want 0..%d", ms, MaxStallTimeoutMs)
	}
	if err := validateStallWatchdog(p.Options); err != nil {
		return err
	}
	for _, q := range slices.Sorted(maps.Keys(p.Options.ProviderStallTimeoutMs)) {
		ms := p.Options.ProviderStallTimeoutMs[q]
		if !q.Valid() {
			return invalidf("options.providerStallTimeoutMs: %q is not a known provider", q)
		}
		if ms < 0 || ms > MaxStallTimeoutMs {
			return invalidf("options.providerStallTimeoutMs[%s] %d: want 0..%d", q, ms, MaxStallTimeoutMs)
		}
	}
	return validateAllowUnverifiedContainment(p.Options)
}

// validateAllowUnverifiedContainment: known providers, each at most once,
// and only with the legacy contract (an unrestricted contract contradicts
// strict).
func validateAllowUnverifiedContainment(o RunOptions) error {
	for i, q := range o.AllowUnverifiedContainment {
		if !q.Valid() {
			return invalidf("options.allowUnverifiedContainment[%d] %q is not a known provider", i, q)
		}
		if slices.Contains(o.AllowUnverifiedContainment[:i], q) {
			return invalidf("options.allowUnverifiedContainment[%d] %q is repeated", i, q)
		}
	}
	if len(o.AllowUnverifiedContainment) > 0 && o.Contract != policy.ContractLegacy {
		return invalidf("options.allowUnverifiedContainment needs the legacy contract, not %q", o.Contract)
	}
	return nil
}

// SheetEqual reports whether b is the frozen sheet, byte for byte.
func (p RunCreated) SheetEqual(b []byte) bool { return bytes.Equal(p.Sheet, b) }

// GroupExhausted adds Provider to the run's exhausted groups (run-level),
// because FromLane's execution ExecutionID ended usage-exhausted. Every
// later decision of every lane sees it.
type GroupExhausted struct {
	Provider    policy.Provider `json:"provider"`
	FromLane    int             `json:"fromLane"`
	ExecutionID string          `json:"executionId"`
}

// EventType returns TypeGroupExhausted.
func (GroupExhausted) EventType() Type { return TypeGroupExhausted }

func (p GroupExhausted) validate() error {
	if !p.Provider.Valid() {
		return invalidf("provider %q is not a known provider", p.Provider)
	}
	if p.FromLane < 0 || p.FromLane > MaxLanes {
		return invalidf("fromLane %d out of range", p.FromLane)
	}
	return ValidateExecutionID(p.ExecutionID)
}

// FinalState is a lane's final machine state.
type FinalState string

// Final states.
const (
	FinalComplete  FinalState = "complete"  // a complete event ended the lane.
	FinalStopped   FinalState = "stopped"   // a stop event ended the lane.
	FinalCancelled FinalState = "cancelled" // a cancel event ended the lane.
)

// LaneResult is one lane's line in the run summary.
type LaneResult struct {
	Lane   int        `json:"lane"`
	LaneID string     `json:"laneId"`
	State  FinalState `json:"state"`
	// Descriptor is the successful descriptor of a complete lane.
	Descriptor string `json:"descriptor,omitempty"`
	// Reason is the stop, denial or cancel reason.
	Reason string `json:"reason,omitempty"`
}

// RunFinal closes the run (run-level) once every lane is final.
type RunFinal struct {
	// Lanes has one result per lane, in lane order.
	Lanes []LaneResult `json:"lanes"`
	// Summary is a one-line human summary, for status output.
	Summary string `json:"summary,omitempty"`
	// ReportsThrough is the highest reports-stream sequence of the run the
	// engine had handled when it closed the run. A report stored after it
	// changes nothing; the engine records it as an audit event on the run
	// subject, after run-final.
	ReportsThrough uint64 `json:"reportsThrough,omitempty"`
}

// EventType returns TypeRunFinal.
func (RunFinal) EventType() Type { return TypeRunFinal }

func (p RunFinal) validate() error {
	if len(p.Lanes) == 0 {
		return invalidf("lanes: want one result per lane")
	}
	for i, l := range p.Lanes {
		if l.Lane != i {
			return invalidf("lanes[%d].lane is %d; results are in lane order", i, l.Lane)
		}
		switch l.State {
		case FinalComplete, FinalStopped, FinalCancelled:
		default:
			return invalidf("lanes[%d].state %q: want complete, stopped or cancelled", i, l.State)
		}
	}
	return nil
}

func requireAbs(field, p string) error {
	if p == "" || !filepath.IsAbs(p) {
		return invalidf("%s %q: want an absolute path", field, p)
	}
	return nil
}

func optionalAbs(field, p string) error {
	if p == "" {
		return nil
	}
	return requireAbs(field, p)
}
