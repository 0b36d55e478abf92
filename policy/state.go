package policy

// Inspection is the parent's verdict on a started writer attempt.
type Inspection struct {
	State       string `json:"state"` // clear | unsafe | none
	EvidenceRef string `json:"evidenceRef"`
}

// ExecutionIdentity names one execution of an attempt: its id, the paths it
// owns and the frozen spending, access and contract facts.
type ExecutionIdentity struct {
	ID            string   `json:"id"`
	OutputPath    string   `json:"outputPath"`
	ReceiptPath   string   `json:"receiptPath"`
	WorkspacePath string   `json:"workspacePath"`
	Descriptor    string   `json:"descriptor"`
	APISpend      APISpend `json:"apiSpend"`
	Access        Access   `json:"access"`
	Contract      Contract `json:"contract"`
}

// Recovery is the parent's preparation for a same-route continuation after
// a permission blockage.
type Recovery struct {
	Correction        string             `json:"correction"`
	BlockageID        string             `json:"blockageId"`
	SnapshotRef       string             `json:"snapshotRef"`
	SnapshotDigest    string             `json:"snapshotDigest"`
	PartialWorkRef    string             `json:"partialWorkRef"`
	SideEffectsRef    string             `json:"sideEffectsRef"`
	StoppedWritersRef string             `json:"stoppedWritersRef"`
	NextExecution     *ExecutionIdentity `json:"nextExecution"`
}

// Handoff is a worker's request for a parent-only operation, as it appears
// on a lane-state event.
type Handoff struct {
	Operation    OperationKind `json:"operation"`
	TaskID       string        `json:"taskId"`
	CheckpointID string        `json:"checkpointId"`
	Ref          string        `json:"ref,omitempty"`
}

// ParentOperation records the parent's completed (or failed) operation for
// an earlier handoff.
type ParentOperation struct {
	Kind         OperationKind `json:"kind"`
	TaskID       string        `json:"taskId"`
	CheckpointID string        `json:"checkpointId"`
}

// Event is one entry of a lane's history: the normalized outcome of an
// execution, or a parent operation.
type Event struct {
	AttemptIndex        int                `json:"attemptIndex"`
	Status              Outcome            `json:"status"`
	ProcessStarted      *bool              `json:"processStarted,omitempty"`
	Inspection          *Inspection        `json:"inspection,omitempty"`
	ReceiptPath         string             `json:"receiptPath,omitempty"`
	ContinuationOrdinal *int               `json:"continuationOrdinal,omitempty"`
	DeniedCause         DeniedCause        `json:"deniedCause,omitempty"`
	Execution           *ExecutionIdentity `json:"execution,omitempty"`
	Recovery            *Recovery          `json:"recovery,omitempty"`
	Handoff             *Handoff           `json:"handoff,omitempty"`
	ParentOperation     *ParentOperation   `json:"parentOperation,omitempty"`
}

// LaneState is the parent-owned input to Next: the lane's history, the run's
// exhausted provider groups, and the lane's access mode.
type LaneState struct {
	Events          []Event    `json:"events"`
	ExhaustedGroups []Provider `json:"exhaustedGroups"`
	Access          Access     `json:"access"`
}
