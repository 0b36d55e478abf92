package policy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	fxExecJSON = `{"id":"exec-1","outputPath":"/runs/r1/exec-1/output.md","receiptPath":"/runs/r1/exec-1/receipt.json","workspacePath":"/runs/r1/wt-1","descriptor":"grok:grok-4.7@xhigh","apiSpend":"deny","access":"isolated-write","contract":"strict"}`
	fxNextJSON = `{"id":"exec-2","outputPath":"/runs/r1/exec-2/output.md","receiptPath":"/runs/r1/exec-2/receipt.json","workspacePath":"/runs/r1/wt-2","descriptor":"grok:grok-4.7@xhigh","apiSpend":"deny","access":"isolated-write","contract":"strict"}`
	fxRecJSON  = `{"correction":"granted the denied edit tool (blockage 1)","blockageId":"blk-1","snapshotRef":"refs/snapshots/r1/1","snapshotDigest":"` + fxDigest + `","partialWorkRef":"partial-1.patch","sideEffectsRef":"side-effects-1.md","stoppedWritersRef":"stopped-1.json","nextExecution":` + fxNextJSON + `}`
	// fxFullEventJSON uses every event key, including the dropped correction.
	fxFullEventJSON = `{"attemptIndex":0,"status":"permission-blocked","processStarted":true,` +
		`"inspection":{"state":"clear","evidenceRef":"diff, output and tool effects reviewed"},"receiptPath":"/runs/r1/exec-1/receipt.json",` +
		`"continuationOrdinal":0,"deniedCause":"permission","execution":` + fxExecJSON + `,"recovery":` + fxRecJSON + `,"correction":"dropped"}`
)

// fxDoc wraps one event in a writer lane state.
func fxDoc(event string) string {
	return `{"events":[` + event + `],"exhaustedGroups":[],"access":"isolated-write"}`
}

// fxWithEvent builds a one-event document from a base event with extra
// members appended (later members may not repeat earlier ones).
func fxWithEvent(extra string) string {
	return fxDoc(`{"attemptIndex":0,"status":"usage-exhausted"` + extra + `}`)
}

type decodeAccept struct {
	name string
	in   string
	want LaneState
}

func decodeAccepts() []decodeAccept {
	t, f := true, false
	full := fxBlockedRun(1, IsolatedWrite, fxOrdinal(0), func(e *Event) { e.ReceiptPath = "/runs/r1/exec-1/receipt.json" })
	return []decodeAccept{
		{"seed example", `{"events":[{"attemptIndex":0,"status":"usage-exhausted","processStarted":false}],"exhaustedGroups":["grok"],"access":"read-only"}`,
			LaneState{Events: []Event{{AttemptIndex: 0, Status: OutcomeUsageExhausted, ProcessStarted: &f}}, ExhaustedGroups: []Provider{Grok}, Access: ReadOnly}},
		{"exhaustedGroups defaults to empty", `{"events":[],"access":"isolated-write"}`,
			LaneState{Events: []Event{}, ExhaustedGroups: []Provider{}, Access: IsolatedWrite}},
		{"every provider is a group", `{"events":[],"exhaustedGroups":["claude","codex","grok","devin","cursor","antigravity","opencode"],"access":"read-only"}`,
			LaneState{Events: []Event{}, ExhaustedGroups: Providers, Access: ReadOnly}},
		{"every event key, correction dropped", fxDoc(fxFullEventJSON),
			LaneState{Events: []Event{full}, ExhaustedGroups: []Provider{}, Access: IsolatedWrite}},
		{"correction of any JSON type is dropped", fxWithEvent(`,"correction":{"nested":[1,null]}`),
			fxState(IsolatedWrite, nil, fxEvent(0, OutcomeUsageExhausted))},
		{"integers written as JSON numbers", fxDoc(`{"attemptIndex":1.0,"status":"failed","continuationOrdinal":0e3}`),
			fxState(IsolatedWrite, nil, fxEvent(1, OutcomeFailed, fxOrdinal(0)))},
		{"handoff with ref", fxDoc(`{"attemptIndex":0,"status":"needs-parent-operation","processStarted":true,"handoff":{"operation":"commit-checkpoint","taskId":"t","checkpointId":"c","ref":"r"}}`),
			fxState(IsolatedWrite, nil, fxEvent(0, OutcomeNeedsParentOp, fxStarted(t), fxHandoff(OpCommitCheckpoint, "t", "c", "r")))},
		{"parent operation", fxDoc(`{"attemptIndex":0,"status":"failed","parentOperation":{"kind":"run-checks","taskId":"t","checkpointId":"c"}}`),
			fxState(IsolatedWrite, nil, fxOp(0, OutcomeFailed, OpRunChecks, "t", "c"))},
		{"permission-blocked with a cause", fxDoc(`{"attemptIndex":0,"status":"permission-blocked","deniedCause":"guard"}`),
			fxState(IsolatedWrite, nil, fxEvent(0, OutcomePermissionBlocked, fxDenied(DeniedGuard)))},
		{"deniedCause none off permission-blocked", fxWithEvent(`,"deniedCause":"none"`),
			fxState(IsolatedWrite, nil, fxEvent(0, OutcomeUsageExhausted, fxDenied(DeniedNone)))},
		{"surrounding whitespace", " \n" + `{"events":[],"access":"read-only"}` + "\n\t ",
			LaneState{Events: []Event{}, ExhaustedGroups: []Provider{}, Access: ReadOnly}},
	}
}

func TestDecodeLaneStateAccepts(t *testing.T) {
	t.Parallel()
	for _, tc := range decodeAccepts() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := DecodeLaneState([]byte(tc.in))
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

type decodeReject struct {
	name string
	in   string
	want string // error substring
}

func decodeRejects() []decodeReject {
	return []decodeReject{
		// document
		{"over 1 MiB", `{"events":[],"access":"read-only","x":"` + strings.Repeat("a", MaxLaneStateBytes) + `"}`, "over the 1048576-byte (1 MiB) limit"},
		{"empty input", "", "state is empty"},
		{"whitespace only", " \n", "state is empty"},
		{"not JSON", `{"events":[`, "state is not valid JSON"},
		{"trailing garbage", `{"events":[],"access":"read-only"} x`, "state: trailing data after the JSON value"},
		{"second document", `{"events":[],"access":"read-only"}{}`, "state: trailing data after the JSON value"},
		{"array document", `[]`, "state: must be a JSON object, got an array"},
		{"null document", `null`, "state: must be a JSON object, got null"},
		{"unknown top-level key", `{"events":[],"access":"read-only","lane":0}`, `state: unknown key "lane"`},
		{"duplicate top-level key", `{"events":[],"access":"read-only","access":"read-only"}`, `state: duplicate key "access"`},
		{"top-level key is case-sensitive", `{"Events":[],"access":"read-only"}`, `state: unknown key "Events"`},
		{"missing access", `{"events":[]}`, `state: missing required key "access"`},
		{"unknown access", `{"events":[],"access":"write"}`, `state access: unknown access mode "write" (want read-only|isolated-write)`},
		{"null access", `{"events":[],"access":null}`, "state access: must be a string, got null"},
		{"missing events", `{"access":"read-only"}`, `state: missing required key "events"`},
		{"null events", `{"events":null,"access":"read-only"}`, "state events: must be an array, got null"},
		{"object events", `{"events":{},"access":"read-only"}`, "state events: must be an array, got an object"},
		{"null exhaustedGroups", `{"events":[],"exhaustedGroups":null,"access":"read-only"}`, "state exhaustedGroups: must be an array, got null"},
		{"unknown provider group", `{"events":[],"exhaustedGroups":["grok","gemini"],"access":"read-only"}`, `state exhaustedGroups[1]: unknown provider "gemini"`},
		{"numeric group", `{"events":[],"exhaustedGroups":[1],"access":"read-only"}`, "state exhaustedGroups[0]: must be a string, got a number"},

		// event
		{"null event", fxDoc(`null`), "state events[0]: must be a JSON object, got null"},
		{"unknown event key", fxWithEvent(`,"lane":1`), `state events[0]: unknown key "lane"`},
		{"unknown key on the third event", `{"events":[{"attemptIndex":0,"status":"usage-exhausted"},{"attemptIndex":1,"status":"usage-exhausted"},{"attemptIndex":2,"status":"failed","inspection":{"state":"clear","evidenceRef":"e","foo":1}}],"access":"read-only"}`,
			`state events[2].inspection: unknown key "foo"`},
		{"duplicate event key", fxDoc(`{"attemptIndex":0,"attemptIndex":1,"status":"failed"}`), `state events[0]: duplicate key "attemptIndex"`},
		{"missing attemptIndex", fxDoc(`{"status":"failed"}`), `state events[0]: missing required key "attemptIndex"`},
		{"negative attemptIndex", fxDoc(`{"attemptIndex":-1,"status":"failed"}`), "state events[0].attemptIndex: must be a non-negative integer, got -1"},
		{"fractional attemptIndex", fxDoc(`{"attemptIndex":0.5,"status":"failed"}`), "state events[0].attemptIndex: must be a non-negative integer, got 0.5"},
		{"huge attemptIndex", fxDoc(`{"attemptIndex":1e300,"status":"failed"}`), "state events[0].attemptIndex: must be a non-negative integer"},
		{"overflowing attemptIndex", fxDoc(`{"attemptIndex":1e400,"status":"failed"}`), "state events[0].attemptIndex: must be a non-negative integer"},
		{"string attemptIndex", fxDoc(`{"attemptIndex":"0","status":"failed"}`), "state events[0].attemptIndex: must be a non-negative integer, got a string"},
		{"missing status", fxDoc(`{"attemptIndex":0}`), `state events[0]: missing required key "status"`},
		{"receipt status as event status", fxDoc(`{"attemptIndex":0,"status":"cancelled"}`), `state events[0].status: unknown status "cancelled"`},
		{"null processStarted", fxWithEvent(`,"processStarted":null`), "state events[0].processStarted: must be a boolean, got null"},
		{"string processStarted", fxWithEvent(`,"processStarted":"false"`), "state events[0].processStarted: must be a boolean, got a string"},
		{"numeric receiptPath", fxWithEvent(`,"receiptPath":7`), "state events[0].receiptPath: must be a string, got a number"},
		{"negative continuationOrdinal", fxWithEvent(`,"continuationOrdinal":-2`), "state events[0].continuationOrdinal: must be a non-negative integer"},
		{"unknown deniedCause", fxWithEvent(`,"deniedCause":"safety"`), `state events[0].deniedCause: unknown deniedCause "safety" (want none|permission|unsupported-tool|changed-files|guard|other)`},

		// inspection
		{"null inspection", fxWithEvent(`,"inspection":null`), "state events[0].inspection: must be a JSON object, got null"},
		{"inspection as string", fxWithEvent(`,"inspection":"clear"`), "state events[0].inspection: must be a JSON object, got a string"},
		{"inspection without state", fxWithEvent(`,"inspection":{"evidenceRef":"e"}`), `state events[0].inspection: missing required key "state"`},
		{"unknown inspection state", fxWithEvent(`,"inspection":{"state":"ok","evidenceRef":"e"}`), `state events[0].inspection.state: unknown inspection state "ok" (want clear|unsafe|none)`},
		// Section 4: the reference's exact wording.
		{"inspection without evidenceRef", fxWithEvent(`,"inspection":{"state":"clear"}`), "events[0].inspection.evidenceRef must be a nonempty string"},
		{"empty evidenceRef", fxWithEvent(`,"inspection":{"state":"clear","evidenceRef":""}`), "events[0].inspection.evidenceRef must be a nonempty string"},
		{"numeric evidenceRef", fxWithEvent(`,"inspection":{"state":"unsafe","evidenceRef":7}`), "events[0].inspection.evidenceRef must be a nonempty string"},
		// Section 4, second pass: whitespace alone counts as empty.
		{"blank evidenceRef", fxWithEvent(`,"inspection":{"state":"clear","evidenceRef":" \t\n"}`), "events[0].inspection.evidenceRef must be a nonempty string"},
		{"correction inside inspection", fxWithEvent(`,"inspection":{"state":"clear","evidenceRef":"e","correction":"x"}`), `state events[0].inspection: unknown key "correction"`},

		// execution
		// Section 4: every defect of an execution identity is one message.
		{"null execution", fxWithEvent(`,"execution":null`), "events[0].execution has invalid execution identity"},
		{"execution without id", fxWithEvent(`,"execution":` + strings.Replace(fxExecJSON, `"id":"exec-1",`, "", 1)), "events[0].execution has invalid execution identity"},
		{"execution with an empty id", fxWithEvent(`,"execution":` + strings.Replace(fxExecJSON, `"id":"exec-1"`, `"id":""`, 1)), "events[0].execution has invalid execution identity"},
		{"execution with a blank id", fxWithEvent(`,"execution":` + strings.Replace(fxExecJSON, `"id":"exec-1"`, `"id":" \t"`, 1)), "events[0].execution has invalid execution identity"},
		{"unknown execution key", fxWithEvent(`,"execution":` + strings.Replace(fxExecJSON, `{`, `{"pid":1,`, 1)), "events[0].execution has invalid execution identity"},
		{"unknown execution apiSpend", fxWithEvent(`,"execution":` + strings.Replace(fxExecJSON, `"apiSpend":"deny"`, `"apiSpend":"allow"`, 1)), "events[0].execution has invalid execution identity"},
		{"unknown execution access", fxWithEvent(`,"execution":` + strings.Replace(fxExecJSON, `"access":"isolated-write"`, `"access":"rw"`, 1)), "events[0].execution has invalid execution identity"},
		{"unknown execution contract", fxWithEvent(`,"execution":` + strings.Replace(fxExecJSON, `"contract":"strict"`, `"contract":"loose"`, 1)), "events[0].execution has invalid execution identity"},
		// Section 4, second pass: legacy is a receipt's word only.
		{"execution with legacy apiSpend", fxWithEvent(`,"execution":` + strings.Replace(fxExecJSON, `"apiSpend":"deny"`, `"apiSpend":"legacy"`, 1)), "events[0].execution has invalid execution identity"},
		{"numeric execution outputPath", fxWithEvent(`,"execution":` + strings.Replace(fxExecJSON, `{`, `{"outputPath":1,`, 1)), "events[0].execution has invalid execution identity"},

		// recovery
		{"null recovery", fxWithEvent(`,"recovery":null`), "state events[0].recovery: must be a JSON object, got null"},
		// Section 4: a recovery missing a field is incomplete; its prepared
		// execution is an execution identity like any other.
		{"recovery without nextExecution", fxWithEvent(`,"recovery":` + strings.Replace(fxRecJSON, `,"nextExecution":`+fxNextJSON, "", 1)), "events[0].recovery is incomplete"},
		{"empty recovery", fxWithEvent(`,"recovery":{}`), "events[0].recovery is incomplete"},
		{"null nextExecution", fxWithEvent(`,"recovery":` + strings.Replace(fxRecJSON, fxNextJSON, "null", 1)), "events[0].recovery.nextExecution has invalid execution identity"},
		{"unknown nextExecution key", fxWithEvent(`,"recovery":` + strings.Replace(fxRecJSON, fxNextJSON, strings.Replace(fxNextJSON, `{`, `{"x":1,`, 1), 1)), "events[0].recovery.nextExecution has invalid execution identity"},
		{"nextExecution with an unknown apiSpend", fxWithEvent(`,"recovery":` + strings.Replace(fxRecJSON, fxNextJSON, strings.Replace(fxNextJSON, `"apiSpend":"deny"`, `"apiSpend":"yes"`, 1), 1)), "events[0].recovery.nextExecution has invalid execution identity"},
		{"nextExecution with legacy apiSpend", fxWithEvent(`,"recovery":` + strings.Replace(fxRecJSON, fxNextJSON, strings.Replace(fxNextJSON, `"apiSpend":"deny"`, `"apiSpend":"legacy"`, 1), 1)), "events[0].recovery.nextExecution has invalid execution identity"},
		{"recovery without blockageId", fxWithEvent(`,"recovery":` + strings.Replace(fxRecJSON, `"blockageId":"blk-1",`, "", 1)), "events[0].recovery is incomplete"},
		{"numeric snapshotDigest", fxWithEvent(`,"recovery":` + strings.Replace(fxRecJSON, `"`+fxDigest+`"`, "12", 1)), "events[0].recovery is incomplete"},
		{"unknown recovery key", fxWithEvent(`,"recovery":` + strings.Replace(fxRecJSON, `{`, `{"note":"x",`, 1)), `state events[0].recovery: unknown key "note"`},

		// handoff and parent operations
		{"unknown handoff operation", fxDoc(`{"attemptIndex":0,"status":"needs-parent-operation","handoff":{"operation":"push","taskId":"t","checkpointId":"c"}}`),
			`state events[0].handoff.operation: unknown operation "push" (want commit-checkpoint|run-checks)`},
		{"handoff without taskId", fxDoc(`{"attemptIndex":0,"status":"needs-parent-operation","handoff":{"operation":"run-checks","checkpointId":"c"}}`),
			"events[0].handoff.taskId must be a nonempty string"},
		{"empty handoff taskId", fxDoc(`{"attemptIndex":0,"status":"needs-parent-operation","handoff":{"operation":"run-checks","taskId":"","checkpointId":"c"}}`),
			"events[0].handoff.taskId must be a nonempty string"},
		{"empty handoff checkpointId", fxDoc(`{"attemptIndex":0,"status":"needs-parent-operation","handoff":{"operation":"run-checks","taskId":"t","checkpointId":""}}`),
			"events[0].handoff.checkpointId must be a nonempty string"},
		{"blank handoff taskId", fxDoc(`{"attemptIndex":0,"status":"needs-parent-operation","handoff":{"operation":"run-checks","taskId":"  ","checkpointId":"c"}}`),
			"events[0].handoff.taskId must be a nonempty string"},
		{"blank handoff checkpointId", fxDoc(`{"attemptIndex":0,"status":"needs-parent-operation","handoff":{"operation":"run-checks","taskId":"t","checkpointId":"\t"}}`),
			"events[0].handoff.checkpointId must be a nonempty string"},
		{"empty handoff ref", fxDoc(`{"attemptIndex":0,"status":"needs-parent-operation","handoff":{"operation":"run-checks","taskId":"t","checkpointId":"c","ref":""}}`),
			"events[0].handoff.ref must be a nonempty string"},
		{"numeric handoff ref", fxDoc(`{"attemptIndex":0,"status":"needs-parent-operation","handoff":{"operation":"run-checks","taskId":"t","checkpointId":"c","ref":1}}`),
			"events[0].handoff.ref must be a nonempty string"},
		{"unknown parentOperation kind", fxDoc(`{"attemptIndex":0,"status":"complete","parentOperation":{"kind":"deploy","taskId":"t","checkpointId":"c"}}`),
			`state events[0].parentOperation.kind: unknown operation kind "deploy"`},
		{"parentOperation with a ref", fxDoc(`{"attemptIndex":0,"status":"complete","parentOperation":{"kind":"run-checks","taskId":"t","checkpointId":"c","ref":"r"}}`),
			`state events[0].parentOperation: unknown key "ref"`},

		// cross-field rules
		{"permission-blocked without deniedCause", fxDoc(`{"attemptIndex":0,"status":"permission-blocked"}`),
			"state events[0]: status permission-blocked requires a deniedCause other than none"},
		{"permission-blocked with deniedCause none", fxDoc(`{"attemptIndex":0,"status":"permission-blocked","deniedCause":"none"}`),
			"state events[0]: status permission-blocked requires a deniedCause other than none"},
		{"needs-parent-operation without handoff", fxDoc(`{"attemptIndex":0,"status":"needs-parent-operation"}`),
			"state events[0]: status needs-parent-operation requires handoff"},
		{"parentOperation with status usage-exhausted", fxDoc(`{"attemptIndex":0,"status":"usage-exhausted","parentOperation":{"kind":"run-checks","taskId":"t","checkpointId":"c"}}`),
			`state events[0]: a parentOperation event must have status complete or failed, got "usage-exhausted"`},
		{"parentOperation with needs-parent-operation", fxDoc(`{"attemptIndex":0,"status":"needs-parent-operation","handoff":{"operation":"run-checks","taskId":"t","checkpointId":"c"},"parentOperation":{"kind":"run-checks","taskId":"t","checkpointId":"c"}}`),
			"state events[0]: a parentOperation event must have status complete or failed"},
		{"parentOperation carrying a handoff", fxDoc(`{"attemptIndex":0,"status":"complete","handoff":{"operation":"run-checks","taskId":"t","checkpointId":"c"},"parentOperation":{"kind":"run-checks","taskId":"t","checkpointId":"c"}}`),
			"state events[0]: a parentOperation event must not also carry handoff"},
	}
}

func TestDecodeLaneStateRejects(t *testing.T) {
	t.Parallel()
	for _, tc := range decodeRejects() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := DecodeLaneState([]byte(tc.in))
			require.Error(t, err)
			require.True(t, IsUsage(err), "want a *UsageError, got %T: %v", err, err)
			require.Contains(t, err.Error(), tc.want)
			if strings.HasPrefix(tc.want, "events[") {
				require.Equal(t, tc.want, err.Error(), "section 4 fixes the reference's exact message")
			}
		})
	}
}

// TestDecodeLaneStateRoundTrip proves that a decoded state marshals back
// to a document that decodes to the same state: LaneState's JSON form is
// the wire form.
func TestDecodeLaneStateRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range decodeAccepts() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st, err := DecodeLaneState([]byte(tc.in))
			require.NoError(t, err)
			b, err := json.Marshal(st)
			require.NoError(t, err)
			again, err := DecodeLaneState(b)
			require.NoError(t, err)
			require.Equal(t, st, again)
		})
	}
}
