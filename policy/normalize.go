package policy

import (
	"errors"
	"path/filepath"
	"strings"
)

// NormalizeInput names one runner receipt and the frozen sheet attempt it
// claims to prove.
type NormalizeInput struct {
	Parent       Parent
	Attempt      AttemptPolicy // the frozen sheet's attempt AttemptIndex on the lane.
	AttemptIndex int
	Mode         Access   // the lane's requested access mode (--mode).
	Contract     Contract // --contract; "" means legacy.
	ReceiptPath  string   // the --receipt argument, copied onto the event as given.
	Receipt      []byte   // the receipt file's bytes.
}

// receiptOutcome is the total mapping of receipt statuses to policy
// outcomes before the evidence gates in Normalize downgrade unproven ones.
var receiptOutcome = map[ReceiptStatus]Outcome{
	StatusComplete:              OutcomeComplete,
	StatusNeedsParentOperation:  OutcomeNeedsParentOp,
	StatusCancelled:             OutcomeFailed,
	StatusUnavailableCLI:        OutcomeRouteUnavailable,
	StatusUnauthenticated:       OutcomeRouteUnavailable,
	StatusUnavailableModel:      OutcomeRouteUnavailable,
	StatusUsageExhausted:        OutcomeUsageExhausted,
	StatusBillingPolicyBlocked:  OutcomeFailed,
	StatusTimedOut:              OutcomeDeadlineExceeded,
	StatusChildFailed:           OutcomeTerminalFailure,
	StatusMalformedOutput:       OutcomeTerminalFailure,
	StatusUnsupportedCapability: OutcomeFailed,
}

// Normalize maps a runner receipt to the lane event it proves. It is the
// only place receipt statuses become policy outcomes.
//
// Usage errors (exit 64): invalid parent, mode, contract or attempt index, an
// empty receipt path, a native attempt (an alias or a native-routed
// descriptor has no runner receipt), and receipt bytes that are not JSON or
// exceed MaxReceiptBytes.
//
// Policy errors (exit 65): a receipt DecodeReceipt rejects; an identity
// mismatch on parent, provider, model, effort, mode, apiSpend (an "unset"
// attempt expects "legacy" or no apiSpend) or contract; a schema 2 receipt
// without a non-blank executionId, with non-normalized or relative paths, or
// whose receiptPath differs from ReceiptPath; a handoff outside a schema 2
// needs-parent-operation receipt; verified tool-denial evidence on a
// delivered receipt; and the internal-consistency rules (processStarted
// false only in preflight, no started preflight failure, postprocess needs
// exit 0, a delivered receipt needs exit 0 and no error, failure phase,
// success conflict or malformed handoff, a failure needs an error record,
// usage-exhausted needs evidence).
//
// Outcomes that cannot prove their eligibility become failed: a recorded
// terminal success on a failure, a started failure with no settled child
// (exitCode and signal both null), timed-out without an explicit timeoutMs
// or a settled child (an exit code, or a signal with terminalSuccess false), usage-exhausted outside the invocation or
// postprocess phase, a route status unless processStarted is false,
// child-failed or malformed-output without terminalSuccess false, and
// unsupported-capability. A verified permission toolDenial on an assessed
// child-failed or malformed-output receipt is permission-blocked (deniedCause
// permission); any other verified denial there is failed.
func Normalize(in NormalizeInput) (Event, error) { return normalizeWith(in, DecodeReceipt) }

// normalizeWith is Normalize with the receipt decoder as a parameter, so
// tests can hold the fast decoder to the strict one.
func normalizeWith(in NormalizeInput, decode func([]byte) (*Receipt, error)) (Event, error) {
	if err := checkNormalizeArgs(in); err != nil {
		return Event{}, err
	}
	r, err := decode(in.Receipt)
	switch {
	case errors.Is(err, ErrReceiptNotJSON):
		return Event{}, Usagef("receipt is not valid JSON: %s", in.ReceiptPath)
	case errors.Is(err, ErrReceiptTooLarge):
		return Event{}, Usagef("receipt %s exceeds %d bytes (policy.MaxReceiptBytes)", in.ReceiptPath, MaxReceiptBytes)
	case err != nil:
		return Event{}, err
	}
	return normalizeDecoded(in, r)
}

// checkNormalizeArgs is Normalize's usage checks on everything but the
// receipt itself.
func checkNormalizeArgs(in NormalizeInput) error {
	if in.Parent != ParentClaude && in.Parent != ParentCodex {
		return Usagef("--parent must be one of: claude, codex")
	}
	if in.Mode != ReadOnly && in.Mode != IsolatedWrite {
		return Usagef("--mode must be one of: read-only, isolated-write")
	}
	if c := in.Contract; c != "" && c != ContractLegacy && c != ContractStrict {
		return Usagef("--contract must be one of: legacy, strict")
	}
	if in.AttemptIndex < 0 {
		return Usagef("--attempt must be a nonnegative integer")
	}
	if in.ReceiptPath == "" {
		return Usagef("--receipt is required")
	}
	att := in.Attempt
	if att.Attempt.Kind != KindDescriptor || att.Route == RouteNative {
		return Usagef("attempt %d (%s) is a native lane; normalize native lanes only from explicit host terminal metadata, never a runner receipt or generated prose",
			in.AttemptIndex, att.Descriptor)
	}
	return nil
}

// normalizeDecoded is Normalize after the receipt decoded: the identity,
// execution and consistency rules, and the outcome mapping.
func normalizeDecoded(in NormalizeInput, r *Receipt) (Event, error) {
	contract := in.Contract
	if contract == "" {
		contract = ContractLegacy
	}
	if err := checkIdentity(r, in.Parent, in.Attempt, in.Mode, contract); err != nil {
		return Event{}, err
	}
	var exec *ExecutionIdentity
	if r.SchemaVersion == 2 {
		var err error
		if exec, err = executionOf(r, in, contract); err != nil {
			return Event{}, err
		}
	}
	status, denied, err := outcomeOf(r)
	if err != nil {
		return Event{}, err
	}
	ev := Event{
		AttemptIndex:   in.AttemptIndex,
		Status:         status,
		ProcessStarted: r.ProcessStarted,
		ReceiptPath:    in.ReceiptPath,
		DeniedCause:    denied,
		Execution:      exec,
	}
	if status == OutcomeNeedsParentOp {
		ev.Handoff = &Handoff{Operation: r.Handoff.Operation, TaskID: r.Handoff.Task, CheckpointID: r.Handoff.Checkpoint}
		if strings.TrimSpace(r.Handoff.Summary) != "" {
			ev.Handoff.Ref = r.Handoff.Summary
		}
	}
	return ev, nil
}

// receiptAPISpend reads an absent receipt apiSpend as legacy.
func receiptAPISpend(r *Receipt) APISpend {
	if r.APISpend == "" {
		return APISpendLegacy
	}
	return r.APISpend
}

// receiptContract reads an absent receipt contract as legacy.
func receiptContract(r *Receipt) Contract {
	if r.Contract == "" {
		return ContractLegacy
	}
	return r.Contract
}

// checkIdentity requires the receipt to be the run of exactly the frozen
// attempt under the requested mode, saved apiSpend and contract.
func checkIdentity(r *Receipt, parent Parent, att AttemptPolicy, mode Access, contract Contract) error {
	want := att.Attempt
	wantSpend := att.APISpend
	if wantSpend == APISpendUnset {
		wantSpend = APISpendLegacy
	}
	gotSpend, gotContract := receiptAPISpend(r), receiptContract(r)
	var bad []string
	for _, c := range []struct {
		field string
		ok    bool
	}{
		{"parent", r.Parent == parent},
		{"provider", r.Provider == want.Provider},
		{"model", r.Model == want.Model},
		{"effort", r.Effort == want.Effort},
		{"mode", r.Mode == mode},
		{"apiSpend", gotSpend == wantSpend},
		{"contract", gotContract == contract},
	} {
		if !c.ok {
			bad = append(bad, c.field)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return Policyf("receipt identity mismatch on %s: receipt is %s/%s:%s@%s (mode %s, apiSpend %s, contract %s), expected %s/%s:%s@%s (mode %s, apiSpend %s, contract %s)",
		strings.Join(bad, ", "),
		r.Parent, r.Provider, r.Model, r.Effort, r.Mode, gotSpend, gotContract,
		parent, want.Provider, want.Model, want.Effort, mode, wantSpend, contract)
}

// cleanAbs reports whether p is absolute, already filepath.Clean and free
// of NUL bytes. With a slash separator that is: it starts with a slash,
// holds no NUL, and is either just that or slash-separated components
// that are none empty, "." or ".." (FuzzCleanAbs holds it to
// cleanAbsByClean, which says it with filepath).
func cleanAbs(p string) bool {
	if filepath.Separator != '/' {
		return cleanAbsByClean(p)
	}
	if len(p) == 0 || p[0] != '/' || strings.IndexByte(p, 0) >= 0 {
		return false
	}
	if len(p) == 1 {
		return true
	}
	// Component by component, each found by IndexByte, which reads many
	// bytes a step: about half the time of a loop over the bytes for the
	// paths of a receipt.
	for rest := p[1:]; ; {
		i := strings.IndexByte(rest, '/')
		c := rest
		if i >= 0 {
			c = rest[:i]
		}
		if c == "" || c == "." || c == ".." {
			return false
		}
		if i < 0 {
			return true
		}
		rest = rest[i+1:]
	}
}

// cleanAbsByClean is cleanAbs by its definition.
func cleanAbsByClean(p string) bool {
	return filepath.IsAbs(p) && filepath.Clean(p) == p && !strings.ContainsRune(p, 0)
}

// executionOf checks a schema 2 receipt's execution identity and returns it
// with the canonical output and workspace paths, the receipt path exactly as
// the caller gave it, the frozen descriptor and apiSpend, the mode and the
// receipt's contract.
func executionOf(r *Receipt, in NormalizeInput, contract Contract) (*ExecutionIdentity, error) {
	if strings.TrimSpace(r.ExecutionID) == "" {
		return nil, Policyf("receipt executionId must be nonempty")
	}
	for _, p := range []struct{ field, value string }{
		{"outputPath", r.OutputPath},
		{"receiptPath", r.ReceiptPath},
		{"cwd", r.Cwd},
	} {
		if !cleanAbs(p.value) {
			return nil, Policyf("receipt %s must be a normalized absolute path, found %q", p.field, p.value)
		}
	}
	// A path equal to one checked above is as clean as that one: the
	// check, linear in the path, runs once for the usual receipt whose
	// canonical paths are the paths it names.
	if in.ReceiptPath != r.ReceiptPath {
		if !cleanAbs(in.ReceiptPath) {
			return nil, Policyf("expected receipt path must be a normalized absolute path, found %q", in.ReceiptPath)
		}
		return nil, Policyf("receipt path differs from the normalized file path: receiptPath is %q, expected %q", r.ReceiptPath, in.ReceiptPath)
	}
	c := r.CanonicalPaths
	if c == nil {
		return nil, Policyf("schema 2 receipt requires canonicalPaths")
	}
	for _, p := range []struct{ field, value, checked string }{
		{"canonicalPaths.output", c.Output, r.OutputPath},
		{"canonicalPaths.receipt", c.Receipt, r.ReceiptPath},
		{"canonicalPaths.cwd", c.Cwd, r.Cwd},
	} {
		if p.value != p.checked && !cleanAbs(p.value) {
			return nil, Policyf("receipt %s must be a normalized absolute path, found %q", p.field, p.value)
		}
	}
	return &ExecutionIdentity{
		ID:            r.ExecutionID,
		OutputPath:    c.Output,
		ReceiptPath:   in.ReceiptPath, // as given, like the event's receiptPath
		WorkspacePath: c.Cwd,
		Descriptor:    in.Attempt.Descriptor,
		APISpend:      in.Attempt.APISpend,
		Access:        in.Mode,
		Contract:      receiptContract(r),
	}, nil
}

// outcomeOf checks the receipt's internal consistency and maps its status
// through receiptOutcome and the evidence gates.
func outcomeOf(r *Receipt) (Outcome, DeniedCause, error) {
	phase := FailurePhase("")
	if r.FailurePhase != nil {
		phase = *r.FailurePhase
	}
	notStarted := r.ProcessStarted != nil && !*r.ProcessStarted
	started := r.ProcessStarted != nil && *r.ProcessStarted
	exitZero := r.ExitCode != nil && *r.ExitCode == 0
	successTrue := r.TerminalSuccess != nil && *r.TerminalSuccess
	successFalse := r.TerminalSuccess != nil && !*r.TerminalSuccess
	verifiedDenial := r.ToolDenial != nil && r.ToolDenial.Verified
	delivered := r.Status == StatusComplete || r.Status == StatusNeedsParentOperation

	switch {
	case notStarted && phase != PhasePreflight:
		return "", "", Policyf("a receipt with processStarted false can only fail in the preflight phase (failurePhase is %s)", phaseName(r.FailurePhase))
	case phase == PhasePreflight && started:
		return "", "", Policyf("a preflight failure cannot record processStarted true")
	case phase == PhasePostprocess && !exitZero:
		return "", "", Policyf("a postprocess failure requires a settled clean child exit (exitCode 0)")
	case r.Handoff != nil && (r.SchemaVersion != 2 || r.Status != StatusNeedsParentOperation):
		return "", "", Policyf("only a schema 2 needs-parent-operation receipt may carry a handoff (receipt is schema %d %s)", r.SchemaVersion, r.Status)
	case verifiedDenial && delivered:
		return "", "", Policyf("a delivered terminal receipt cannot carry verified tool-denial evidence")
	}

	if delivered {
		switch {
		case !exitZero || r.Error != nil || r.FailurePhase != nil || (r.Status == StatusComplete && successTrue):
			return "", "", Policyf("a complete receipt requires exitCode 0 and no error, failure phase, or success conflict")
		case r.HandoffMalformed:
			return "", "", Policyf("malformed handoff cannot be a delivered terminal status")
		case r.Status == StatusNeedsParentOperation && r.Handoff == nil:
			return "", "", Policyf("handoff status requires handoff")
		case r.Handoff != nil:
			return OutcomeNeedsParentOp, "", nil
		}
		return OutcomeComplete, "", nil
	}
	if r.Error == nil {
		return "", "", Policyf("a non-complete receipt requires an error record (error {message, evidence})")
	}
	if r.Status == StatusUsageExhausted && strings.TrimSpace(r.Error.Evidence) == "" {
		return "", "", Policyf("a usage-exhausted receipt requires recorded classification evidence (error.evidence)")
	}

	// A settled child is real process evidence: a known exit code, or a
	// signal the runner delivered. Its absence on a started failure is the
	// launcher's own catch, not a backend failure.
	settled := r.ExitCode != nil || r.Signal != nil
	needsSettled := !notStarted && phase != PhasePreflight
	out := receiptOutcome[r.Status]
	switch {
	case successTrue:
		out = OutcomeFailed
	case needsSettled && !settled:
		out = OutcomeFailed
	case r.Status == StatusTimedOut:
		// An explicit deadline and a settled owned process (or none
		// started). A recorded exit code settles it without a terminalSuccess
		// assessment, as in the reference; a signal alone still needs one.
		if r.TimeoutMs == nil || (!settled && !notStarted) || (!notStarted && !successFalse && r.ExitCode == nil) {
			out = OutcomeFailed
		}
	case r.Status == StatusUsageExhausted:
		// Quota is only knowable after the workload ran.
		if phase != PhaseInvocation && phase != PhasePostprocess {
			out = OutcomeFailed
		}
	case r.Status == StatusUnavailableCLI || r.Status == StatusUnauthenticated || r.Status == StatusUnavailableModel:
		// Route proof exists only before the workload starts.
		if !notStarted {
			out = OutcomeFailed
		}
	case r.Status == StatusChildFailed || r.Status == StatusMalformedOutput:
		switch {
		case !successFalse:
			out = OutcomeFailed
		case verifiedDenial && r.ToolDenial.Cause == DenialPermission:
			return OutcomePermissionBlocked, DeniedPermission, nil
		case verifiedDenial:
			out = OutcomeFailed
		}
	case r.Status == StatusUnsupportedCapability:
		out = OutcomeFailed
	}
	return out, "", nil
}

func phaseName(p *FailurePhase) string {
	if p == nil {
		return "null"
	}
	return string(*p)
}
