package providers

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
