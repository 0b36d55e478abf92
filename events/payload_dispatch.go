package events

import (
	"github.com/switchyard-dev/switchyard/policy"
	"slices"
)

// Paths are the files and directories one execution owns. All are absolute.
type Paths struct {
	Prompt   string `json:"prompt"`
	Output   string `json:"output"`
	Receipt  string `json:"receipt"`
	Progress string `json:"progress"`
	// Cwd is where the CLI runs: the worktree for isolated-write lanes, the
	// run's cwd otherwise.
	Cwd string `json:"cwd"`
	// Worktree is the attempt's fresh git worktree; isolated-write only.
	Worktree string `json:"worktree,omitempty"`
	// Artifact is the distinct output artifact the parent assigns a
	// read-only native lane: the one file its subagent may write (the
	// seed's "Native lanes"). Unset for every other lane.
	Artifact string `json:"artifact,omitempty"`
}

func (p Paths) validate() error {
	for _, f := range []struct{ name, v string }{
		{"paths.prompt", p.Prompt}, {"paths.output", p.Output}, {"paths.receipt", p.Receipt},
		{"paths.progress", p.Progress}, {"paths.cwd", p.Cwd},
	} {
		if err := requireAbs(f.name, f.v); err != nil {
			return err
		}
	}
	if err := optionalAbs("paths.artifact", p.Artifact); err != nil {
		return err
	}
	return optionalAbs("paths.worktree", p.Worktree)
}

// Launch records a launch decision and the job it publishes (lane-level):
// created, terminal, inspecting or awaiting-operation → launching.
type Launch struct {
	// Decision is policy.Next's decision, kind launch.
	Decision policy.Decision `json:"decision"`
	// InputDigest is InputDigest(lane policy, lane state) of the input the
	// decision was computed from; SheetDigest is the run's sheet digest.
	InputDigest string `json:"inputDigest"`
	SheetDigest string `json:"sheetDigest"`
	// ExecutionID names this execution; it is the job's message id and the
	// claim key.
	ExecutionID string `json:"executionId"`
	// AttemptIndex is the 0-based attempt of the lane's chain.
	AttemptIndex int `json:"attemptIndex"`
	// Descriptor is the attempt's descriptor or native alias.
	Descriptor string `json:"descriptor"`
	// Route says who runs it: external (a provider worker) or native (the
	// parent harness).
	Route policy.Route `json:"route"`
	// JobSubject is where the job was published: JobSubject(provider) or
	// NativeJobSubject(parent).
	JobSubject string `json:"jobSubject"`
	// Paths are the execution's files.
	Paths Paths `json:"paths"`
	// WorktreeBase is the commit a writer's fresh worktree started from
	// and why (the reviewed state a clear verdict named, or the
	// checkout's HEAD); unset for read-only lanes and continuations.
	WorktreeBase *WorktreeBase `json:"worktreeBase,omitempty"`
	// Containment is the containment the attempt launches under, as the
	// eligibility gate found it (an external route only; absent on
	// launches recorded before issue 24). The receipt records what the
	// runner applied.
	Containment *policy.ContainmentEvidence `json:"containment,omitempty"`
}

// EventType returns TypeLaunch.
func (Launch) EventType() Type { return TypeLaunch }

func (p Launch) validate() error { return validateDispatch(p, policy.DecideLaunch) }

// Continue records a same-route continuation decision and its job
// (lane-level); same fields and transitions as Launch, decision kind
// continue (its PreparedExecution names ExecutionID).
type Continue Launch

// EventType returns TypeContinue.
func (Continue) EventType() Type { return TypeContinue }

func (p Continue) validate() error { return validateDispatch(Launch(p), policy.DecideContinue) }

func validateDispatch(p Launch, kind policy.DecisionKind) error {
	if err := validateDecision(p.Decision, p.InputDigest, p.SheetDigest, kind); err != nil {
		return err
	}
	if err := ValidateExecutionID(p.ExecutionID); err != nil {
		return err
	}
	if p.AttemptIndex < 0 || p.AttemptIndex >= policy.MaxAttemptsPerSeat {
		return invalidf("attemptIndex %d: want 0..%d", p.AttemptIndex, policy.MaxAttemptsPerSeat-1)
	}
	if p.Decision.AttemptIndex != nil && *p.Decision.AttemptIndex != p.AttemptIndex {
		return invalidf("attemptIndex %d differs from the decision's %d", p.AttemptIndex, *p.Decision.AttemptIndex)
	}
	if err := requireText("descriptor", p.Descriptor); err != nil {
		return err
	}
	if p.Route != policy.RouteExternal && p.Route != policy.RouteNative {
		return invalidf("route %q: want external or native", p.Route)
	}
	if err := ValidateJobSubject(p.JobSubject); err != nil {
		return err
	}
	if p.WorktreeBase != nil {
		if err := p.WorktreeBase.validate(); err != nil {
			return err
		}
	}
	return p.Paths.validate()
}

// validateDecision checks the decision record every decision event carries.
func validateDecision(d policy.Decision, inputDigest, sheetDigest string, kinds ...policy.DecisionKind) error {
	ok := false
	for _, k := range kinds {
		ok = ok || d.Kind == k
	}
	if !ok {
		// A copy goes into the error, so kinds stays on the caller's stack.
		return invalidf("decision kind %q: want %v", d.Kind, slices.Clone(kinds))
	}
	if err := requireDigest("inputDigest", inputDigest); err != nil {
		return err
	}
	return requireDigest("sheetDigest", sheetDigest)
}
