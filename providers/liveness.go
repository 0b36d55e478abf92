package providers

import "github.com/switchyard-dev/switchyard/policy"

// ContainmentClass is what a provider can enforce for one access mode
// (provider-contract.md "Autonomous isolation").
type ContainmentClass string

// Containment classes.
const (
	// ContainmentWorkspaceWriteNoNetwork: a verified provider-native sandbox
	// confines writes to the workspace and denies network by default.
	ContainmentWorkspaceWriteNoNetwork ContainmentClass = "WORKSPACE_WRITE_NO_NETWORK"
	// ContainmentReadOnlyNoNetwork: the corresponding read-only guarantee.
	ContainmentReadOnlyNoNetwork ContainmentClass = "READ_ONLY_NO_NETWORK"
	// ContainmentUnverified: no verified guarantee.
	ContainmentUnverified ContainmentClass = "UNVERIFIED"
)

// Containment is a provider's containment for one access mode, with the
// reason (the flags that enforce it, or why it is unverified).
type Containment struct {
	Class  ContainmentClass
	Reason string
}

// Disposition is what one event of a provider's parsed stream means to the
// stall watchdog (execution-runtime-contract.md ClassifyRuntimeEvent).
type Disposition string

// Dispositions.
const (
	DispositionStart    Disposition = "start"
	DispositionProgress Disposition = "progress"
	DispositionTerminal Disposition = "terminal"
	DispositionNone     Disposition = "none"
)

// SilentStallTimeoutMs is the default stall timeout, in milliseconds, of a
// provider whose headless output shows nothing until its final answer
// (SilentUntilDone): one hour, since its silence says nothing about
// progress, so the watchdog only ends an attempt that hangs far longer
// than any real one (docs/decisions.md D-3).
const SilentStallTimeoutMs = 3_600_000

// SilentUntilDone reports whether p's headless output, as Switchyard
// launches it, carries no progress events before the final answer: Cursor
// (--output-format json prints one result object at the end) and Devin
// (plain text at the end).
func SilentUntilDone(p policy.Provider) bool {
	s, err := Lookup(p)
	return err == nil && s.SilentUntilDone
}

// UnsetStallTimeoutMs is the response-stall timeout, in milliseconds, of
// an attempt of p whose run sets none: SilentStallTimeoutMs for a provider
// SilentUntilDone, else 0, the execution-runtime contract's default
// (events.DefaultStallTimeoutMs; providers imports no events). It is what
// events.JobOf takes.
func UnsetStallTimeoutMs(p policy.Provider) int64 {
	if SilentUntilDone(p) {
		return SilentStallTimeoutMs
	}
	return 0
}
