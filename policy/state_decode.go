package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// MaxLaneStateBytes caps a lane-state document. A real lane holds at most a
// few dozen events; the cap keeps a corrupt or hostile file from costing
// more than a bounded decode.
const MaxLaneStateBytes = 1 << 20

// Inspection verdicts a parent may record on a started writer.
const (
	InspectionClear  = "clear"  // the parent inspected and found nothing unsafe.
	InspectionUnsafe = "unsafe" // the parent found unsafe effects; the lane stops.
	InspectionNone   = "none"   // no verdict yet; a started writer stays in inspect.
)

// inspectionStates is the closed vocabulary of Inspection.State.
var inspectionStates = []string{InspectionClear, InspectionUnsafe, InspectionNone}

// The closed vocabularies an execution identity may carry.
var (
	// legacy is a receipt's word, never an execution identity's.
	stateAPISpends  = []APISpend{APISpendDeny, APISpendApproved, APISpendUnset}
	stateAccesses   = []Access{ReadOnly, IsolatedWrite}
	stateContracts  = []Contract{ContractLegacy, ContractStrict}
	stateOperations = []OperationKind{OpCommitCheckpoint, OpRunChecks}
)

// Key lists per object. The event-level "correction" key is accepted and
// dropped, as the reference helper does; every other key outside these lists
// is an error.
var (
	laneStateKeys  = []string{"events", "exhaustedGroups", "access"}
	eventKeys      = []string{"attemptIndex", "status", "processStarted", "inspection", "receiptPath", "continuationOrdinal", "deniedCause", "execution", "recovery", "handoff", "parentOperation", "correction"}
	inspectionKeys = []string{"state", "evidenceRef"}
	executionKeys  = []string{"id", "outputPath", "receiptPath", "workspacePath", "descriptor", "apiSpend", "access", "contract"}
	recoveryKeys   = []string{"correction", "blockageId", "snapshotRef", "snapshotDigest", "partialWorkRef", "sideEffectsRef", "stoppedWritersRef", "nextExecution"}
	handoffKeys    = []string{"operation", "taskId", "checkpointId", "ref"}
	parentOpKeys   = []string{"kind", "taskId", "checkpointId"}
)

// DecodeLaneState strictly decodes a lane-state JSON document (the parent's
// --state file for next).
//
// Every object rejects unknown and duplicate keys. access is required
// (read-only or isolated-write); events is a required array; exhaustedGroups
// defaults to [] and accepts only the seven provider names. Per event,
// attemptIndex (a non-negative integer) and status are required; status,
// inspection.state, deniedCause and the execution vocabularies are closed;
// inspection.evidenceRef and the handoff's taskId, checkpointId and ref
// (when given) are non-blank strings ("events[i].inspection.evidenceRef must
// be a nonempty string", for "" and whitespace alike); an execution identity (the event's, and the
// recovery's nextExecution) names all eight of its fields with a non-blank
// id and known vocabularies, else "events[i].execution has invalid
// execution identity"; a recovery names all eight of its fields, else
// "events[i].recovery is incomplete" (their content is judged later, by the
// continuation readiness gate, so that an unprepared recovery is a
// policy-denied decision rather than a usage error);
// permission-blocked needs a deniedCause other than none;
// needs-parent-operation needs a handoff; a parentOperation event has status
// complete or failed and no handoff. An event-level "correction" key is
// accepted and dropped. null is never accepted in place of a value, and
// trailing data after the document is an error.
//
// Every error is a *UsageError (exit 64) that names the path of the
// offending value, e.g. `state events[2].inspection: unknown key "foo"`.
// Input over MaxLaneStateBytes is rejected before parsing.
func DecodeLaneState(b []byte) (LaneState, error) {
	if len(b) > MaxLaneStateBytes {
		return LaneState{}, Usagef("state is %d bytes, over the %d-byte (1 MiB) limit (policy.MaxLaneStateBytes)", len(b), MaxLaneStateBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return LaneState{}, Usagef("state is empty; want a JSON object")
		}
		return LaneState{}, Usagef("state is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return LaneState{}, Usagef("state: trailing data after the JSON value")
	}

	o, err := stateObjectOf(raw, "state", laneStateKeys)
	if err != nil {
		return LaneState{}, err
	}
	var st LaneState

	rawEvents, err := o.required("events")
	if err != nil {
		return LaneState{}, err
	}
	items, err := stateArray(rawEvents, o.child("events"))
	if err != nil {
		return LaneState{}, err
	}
	st.Events = make([]Event, 0, len(items))
	for i, item := range items {
		ev, err := decodeEvent(item, fmt.Sprintf("%s[%d]", o.child("events"), i))
		if err != nil {
			return LaneState{}, err
		}
		st.Events = append(st.Events, ev)
	}

	st.ExhaustedGroups = []Provider{}
	if rawGroups, ok := o.members["exhaustedGroups"]; ok {
		groups, err := stateArray(rawGroups, o.child("exhaustedGroups"))
		if err != nil {
			return LaneState{}, err
		}
		for i, g := range groups {
			p, err := stateEnum(g, fmt.Sprintf("%s[%d]", o.child("exhaustedGroups"), i), "provider", Providers)
			if err != nil {
				return LaneState{}, err
			}
			st.ExhaustedGroups = append(st.ExhaustedGroups, p)
		}
	}

	rawAccess, err := o.required("access")
	if err != nil {
		return LaneState{}, err
	}
	if st.Access, err = stateEnum(rawAccess, o.child("access"), "access mode", stateAccesses); err != nil {
		return LaneState{}, err
	}
	return st, nil
}

// decodeEvent decodes one history event and applies the cross-field rules.
func decodeEvent(raw json.RawMessage, path string) (Event, error) {
	o, err := stateObjectOf(raw, path, eventKeys)
	if err != nil {
		return Event{}, err
	}
	var ev Event
	if ev.AttemptIndex, err = o.requiredInt("attemptIndex"); err != nil {
		return Event{}, err
	}
	rawStatus, err := o.required("status")
	if err != nil {
		return Event{}, err
	}
	if ev.Status, err = stateEnum(rawStatus, o.child("status"), "status", Outcomes); err != nil {
		return Event{}, err
	}
	if v, ok := o.members["processStarted"]; ok {
		b, err := stateBool(v, o.child("processStarted"))
		if err != nil {
			return Event{}, err
		}
		ev.ProcessStarted = &b
	}
	if v, ok := o.members["inspection"]; ok {
		if ev.Inspection, err = decodeInspection(v, o.child("inspection")); err != nil {
			return Event{}, err
		}
	}
	if v, ok := o.members["receiptPath"]; ok {
		if ev.ReceiptPath, err = stateString(v, o.child("receiptPath")); err != nil {
			return Event{}, err
		}
	}
	if v, ok := o.members["continuationOrdinal"]; ok {
		n, err := stateInt(v, o.child("continuationOrdinal"))
		if err != nil {
			return Event{}, err
		}
		ev.ContinuationOrdinal = &n
	}
	if v, ok := o.members["deniedCause"]; ok {
		if ev.DeniedCause, err = stateEnum(v, o.child("deniedCause"), "deniedCause", DeniedCauses); err != nil {
			return Event{}, err
		}
	}
	if v, ok := o.members["execution"]; ok {
		if ev.Execution, err = decodeExecution(v, o.child("execution")); err != nil {
			return Event{}, err
		}
	}
	if v, ok := o.members["recovery"]; ok {
		if ev.Recovery, err = decodeRecovery(v, o.child("recovery")); err != nil {
			return Event{}, err
		}
	}
	if v, ok := o.members["handoff"]; ok {
		if ev.Handoff, err = decodeHandoff(v, o.child("handoff")); err != nil {
			return Event{}, err
		}
	}
	if v, ok := o.members["parentOperation"]; ok {
		if ev.ParentOperation, err = decodeParentOperation(v, o.child("parentOperation")); err != nil {
			return Event{}, err
		}
	}

	switch {
	case ev.ParentOperation != nil && ev.Status != OutcomeComplete && ev.Status != OutcomeFailed:
		return Event{}, Usagef("%s: a parentOperation event must have status complete or failed, got %q", path, ev.Status)
	case ev.ParentOperation != nil && ev.Handoff != nil:
		return Event{}, Usagef("%s: a parentOperation event must not also carry handoff", path)
	case ev.Status == OutcomePermissionBlocked && (ev.DeniedCause == "" || ev.DeniedCause == DeniedNone):
		return Event{}, Usagef("%s: status permission-blocked requires a deniedCause other than none", path)
	case ev.Status == OutcomeNeedsParentOp && ev.Handoff == nil:
		return Event{}, Usagef("%s: status needs-parent-operation requires handoff", path)
	}
	return ev, nil
}

func decodeInspection(raw json.RawMessage, path string) (*Inspection, error) {
	o, err := stateObjectOf(raw, path, inspectionKeys)
	if err != nil {
		return nil, err
	}
	v, err := o.required("state")
	if err != nil {
		return nil, err
	}
	var in Inspection
	if in.State, err = stateEnum(v, o.child("state"), "inspection state", inspectionStates); err != nil {
		return nil, err
	}
	if in.EvidenceRef, err = o.nonemptyString("evidenceRef"); err != nil {
		return nil, err
	}
	return &in, nil
}

// decodeExecution decodes an execution identity. Any defect (not an
// object, an unknown, missing or mistyped key, a value outside its
// vocabulary, a blank id) is the reference's one message
// "<path> has invalid execution identity".
func decodeExecution(raw json.RawMessage, path string) (*ExecutionIdentity, error) {
	x, err := decodeExecutionFields(raw, path)
	if err != nil {
		return nil, Usagef("%s has invalid execution identity", refPath(path))
	}
	if blank(x.ID) {
		return nil, Usagef("%s has invalid execution identity", refPath(path))
	}
	return x, nil
}

func decodeExecutionFields(raw json.RawMessage, path string) (*ExecutionIdentity, error) {
	o, err := stateObjectOf(raw, path, executionKeys)
	if err != nil {
		return nil, err
	}
	var x ExecutionIdentity
	for _, f := range []struct {
		key string
		dst *string
	}{
		{"id", &x.ID},
		{"outputPath", &x.OutputPath},
		{"receiptPath", &x.ReceiptPath},
		{"workspacePath", &x.WorkspacePath},
		{"descriptor", &x.Descriptor},
	} {
		if *f.dst, err = o.requiredString(f.key); err != nil {
			return nil, err
		}
	}
	v, err := o.required("apiSpend")
	if err != nil {
		return nil, err
	}
	if x.APISpend, err = stateEnum(v, o.child("apiSpend"), "apiSpend", stateAPISpends); err != nil {
		return nil, err
	}
	if v, err = o.required("access"); err != nil {
		return nil, err
	}
	if x.Access, err = stateEnum(v, o.child("access"), "access mode", stateAccesses); err != nil {
		return nil, err
	}
	if v, err = o.required("contract"); err != nil {
		return nil, err
	}
	if x.Contract, err = stateEnum(v, o.child("contract"), "contract", stateContracts); err != nil {
		return nil, err
	}
	return &x, nil
}

func decodeRecovery(raw json.RawMessage, path string) (*Recovery, error) {
	o, err := stateObjectOf(raw, path, recoveryKeys)
	if err != nil {
		return nil, err
	}
	var r Recovery
	for _, key := range recoveryKeys {
		v, ok := o.members[key]
		if !ok || (key != "nextExecution" && stateKind(v) != "a string") {
			return nil, Usagef("%s is incomplete", refPath(path))
		}
	}
	for _, f := range []struct {
		key string
		dst *string
	}{
		{"correction", &r.Correction},
		{"blockageId", &r.BlockageID},
		{"snapshotRef", &r.SnapshotRef},
		{"snapshotDigest", &r.SnapshotDigest},
		{"partialWorkRef", &r.PartialWorkRef},
		{"sideEffectsRef", &r.SideEffectsRef},
		{"stoppedWritersRef", &r.StoppedWritersRef},
	} {
		if *f.dst, err = o.requiredString(f.key); err != nil {
			return nil, err
		}
	}
	v, err := o.required("nextExecution")
	if err != nil {
		return nil, err
	}
	if r.NextExecution, err = decodeExecution(v, o.child("nextExecution")); err != nil {
		return nil, err
	}
	return &r, nil
}

func decodeHandoff(raw json.RawMessage, path string) (*Handoff, error) {
	o, err := stateObjectOf(raw, path, handoffKeys)
	if err != nil {
		return nil, err
	}
	var h Handoff
	v, err := o.required("operation")
	if err != nil {
		return nil, err
	}
	if h.Operation, err = stateEnum(v, o.child("operation"), "operation", stateOperations); err != nil {
		return nil, err
	}
	if h.TaskID, err = o.nonemptyString("taskId"); err != nil {
		return nil, err
	}
	if h.CheckpointID, err = o.nonemptyString("checkpointId"); err != nil {
		return nil, err
	}
	if _, ok := o.members["ref"]; ok {
		if h.Ref, err = o.nonemptyString("ref"); err != nil {
			return nil, err
		}
	}
	return &h, nil
}

func decodeParentOperation(raw json.RawMessage, path string) (*ParentOperation, error) {
	o, err := stateObjectOf(raw, path, parentOpKeys)
	if err != nil {
		return nil, err
	}
	var p ParentOperation
	v, err := o.required("kind")
	if err != nil {
		return nil, err
	}
	if p.Kind, err = stateEnum(v, o.child("kind"), "operation kind", stateOperations); err != nil {
		return nil, err
	}
	if p.TaskID, err = o.requiredString("taskId"); err != nil {
		return nil, err
	}
	if p.CheckpointID, err = o.requiredString("checkpointId"); err != nil {
		return nil, err
	}
	return &p, nil
}

// stateObject is one decoded JSON object of a lane state with the path
// used in error messages.
type stateObject struct {
	path    string
	members map[string]json.RawMessage
}

// stateObjectOf decodes raw as an object whose keys all appear in allowed.
// Duplicate keys are rejected: JSON.parse would keep the last one silently,
// and a history that says two things about one event is not decidable.
func stateObjectOf(raw json.RawMessage, path string, allowed []string) (*stateObject, error) {
	if k := stateKind(raw); k != "an object" {
		return nil, Usagef("%s: must be a JSON object, got %s", path, k)
	}
	members, err := ObjectMembers(raw, allowed)
	var je *JSONError
	if errors.As(err, &je) {
		switch je.Fault {
		case JSONUnknownKey:
			return nil, Usagef("%s: unknown key %q", path, je.Key)
		case JSONDuplicateKey:
			return nil, Usagef("%s: duplicate key %q", path, je.Key)
		case JSONSyntax, JSONBadValue:
			return nil, Usagef("%s: not valid JSON: %v", path, je.Err)
		}
	}
	if err != nil {
		// raw is one value of an already valid document, so a non-object
		// or trailing data cannot reach here; refuse it all the same.
		return nil, Usagef("%s: not valid JSON: %v", path, err)
	}
	return &stateObject{path: path, members: members}, nil
}

// child names a member: "state events" at the top, "….inspection" below.
func (o *stateObject) child(key string) string {
	if o.path == "state" {
		return "state " + key
	}
	return o.path + "." + key
}

func (o *stateObject) required(key string) (json.RawMessage, error) {
	v, ok := o.members[key]
	if !ok {
		return nil, Usagef("%s: missing required key %q", o.path, key)
	}
	return v, nil
}

func (o *stateObject) requiredString(key string) (string, error) {
	v, err := o.required(key)
	if err != nil {
		return "", err
	}
	return stateString(v, o.child(key))
}

// nonemptyString reads a required string member that must not be empty,
// failing with the reference's message "<path> must be a nonempty string"
// when it is missing, not a string, or blank: as in the reference, a string
// of only whitespace counts as empty.
func (o *stateObject) nonemptyString(key string) (string, error) {
	v, ok := o.members[key]
	if ok && stateKind(v) == "a string" {
		if s, err := stateString(v, o.child(key)); err == nil && !blank(s) {
			return s, nil
		}
	}
	return "", Usagef("%s must be a nonempty string", refPath(o.child(key)))
}

// refPath renders a value's path the way the reference helper's state
// messages name it: "events[2].inspection", without the "state " prefix.
func refPath(path string) string { return strings.TrimPrefix(path, "state ") }

func (o *stateObject) requiredInt(key string) (int, error) {
	v, err := o.required(key)
	if err != nil {
		return 0, err
	}
	return stateInt(v, o.child(key))
}

// stateKind names the JSON type of raw for error messages.
func stateKind(raw json.RawMessage) string {
	t := bytes.TrimLeft(raw, " \t\r\n")
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func stateArray(raw json.RawMessage, path string) ([]json.RawMessage, error) {
	if k := stateKind(raw); k != "an array" {
		return nil, Usagef("%s: must be an array, got %s", path, k)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, Usagef("%s: not valid JSON: %v", path, err)
	}
	return items, nil
}

func stateString(raw json.RawMessage, path string) (string, error) {
	if k := stateKind(raw); k != "a string" {
		return "", Usagef("%s: must be a string, got %s", path, k)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", Usagef("%s: not a valid string: %v", path, err)
	}
	return s, nil
}

func stateBool(raw json.RawMessage, path string) (bool, error) {
	if k := stateKind(raw); k != "a boolean" {
		return false, Usagef("%s: must be a boolean, got %s", path, k)
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, Usagef("%s: not a valid boolean: %v", path, err)
	}
	return b, nil
}

// stateInt accepts what JavaScript's Number.isInteger accepts (so 1.0 and
// 1e2 are integers), bounded to a non-negative int32: no lane has more
// attempts or executions than that.
func stateInt(raw json.RawMessage, path string) (int, error) {
	if k := stateKind(raw); k != "a number" {
		return 0, Usagef("%s: must be a non-negative integer, got %s", path, k)
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f != math.Trunc(f) || f < 0 || f > math.MaxInt32 {
		return 0, Usagef("%s: must be a non-negative integer, got %s", path, strings.TrimSpace(string(raw)))
	}
	return int(f), nil
}

// stateEnum decodes a string that must be one of allowed.
func stateEnum[T ~string](raw json.RawMessage, path, what string, allowed []T) (T, error) {
	s, err := stateString(raw, path)
	if err != nil {
		return "", err
	}
	if !slices.Contains(allowed, T(s)) {
		names := make([]string, len(allowed))
		for i, a := range allowed {
			names[i] = string(a)
		}
		return "", Usagef("%s: unknown %s %q (want %s)", path, what, s, strings.Join(names, "|"))
	}
	return T(s), nil
}
