package policy

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/testdata/golden"
)

// fixtureReceiptPath is the receiptPath of every v2 fixture.
const fixtureReceiptPath = "/srv/switchyard/runs/run-7/lane-1/receipt.json"

// solAttempt is the frozen attempt every fixture receipt ran: an external
// Codex descriptor on a Claude parent with apiSpend deny.
func solAttempt() AttemptPolicy {
	return AttemptPolicy{
		Descriptor:      "codex:gpt-5.6-sol@max",
		Attempt:         Attempt{Kind: KindDescriptor, Provider: Codex, Model: "gpt-5.6-sol", Effort: EffortMax},
		ExhaustionGroup: Codex,
		Funding:         FundingIncluded,
		APISpend:        APISpendDeny,
		Route:           RouteExternal,
		Authorization:   Authorization{State: "allowed"},
	}
}

func solInput(receipt []byte) NormalizeInput {
	return NormalizeInput{
		Parent:       ParentClaude,
		Attempt:      solAttempt(),
		AttemptIndex: 1,
		Mode:         IsolatedWrite,
		ReceiptPath:  fixtureReceiptPath,
		Receipt:      receipt,
	}
}

// Override sets turning the complete fixture into an eligible receipt of
// each status.
var (
	failedRecord      = obj{"message": "child failed", "evidence": "diagnostic: child_exit_nonzero"}
	invocationFailure = obj{"exitCode": 1, "error": failedRecord, "failurePhase": "invocation", "terminalSuccess": false}
	preflightFailure  = obj{"exitCode": nil, "processStarted": false, "error": failedRecord, "failurePhase": "preflight", "preflight.status": "failed"}
	handoffRequest    = obj{"task": "task-42", "checkpoint": "cp-3", "operation": "run-checks",
		"files": []any{"a.go"}, "checks": []any{"go-test"}, "summary": "ready for checks"}
	permissionDenial = obj{"verified": true, "cause": "permission", "tool": "Bash", "requestedAction": nil,
		"evidence": "diagnostic: devin_atif_write_permission_denied"}
)

func merge(sets ...obj) obj {
	out := obj{}
	for _, s := range sets {
		for k, v := range s {
			out[k] = v
		}
	}
	return out
}

// eligible returns overrides for an eligible receipt of status s: one whose
// evidence supports the undowngraded mapping.
func eligible(s ReceiptStatus) obj {
	st := obj{"status": string(s)}
	switch s {
	case StatusComplete:
		return st
	case StatusNeedsParentOperation:
		return merge(st, obj{"handoff": handoffRequest})
	case StatusCancelled:
		return merge(st, invocationFailure, obj{"exitCode": nil, "signal": "SIGTERM"})
	case StatusUnavailableCLI, StatusUnauthenticated, StatusUnavailableModel,
		StatusBillingPolicyBlocked, StatusUnsupportedCapability:
		return merge(st, preflightFailure)
	case StatusUsageExhausted:
		return merge(st, invocationFailure, obj{"error": obj{"message": "codex usage limit",
			"evidence": "diagnostic: codex_usage_limit_exceeded"}})
	case StatusTimedOut:
		return merge(st, invocationFailure, obj{"exitCode": nil, "signal": "SIGTERM", "timeoutMs": 60000})
	case StatusChildFailed:
		return merge(st, invocationFailure)
	case StatusMalformedOutput:
		return merge(st, invocationFailure, obj{"exitCode": 0, "failurePhase": "postprocess"})
	}
	panic("unknown status " + s)
}

// v1 turns overrides for the v2 fixture into a schema 1 receipt.
func v1(tb testing.TB, over ...obj) []byte {
	tb.Helper()
	return with(tb, fixture(tb, "complete-v1.json"), over...)
}

func v2(tb testing.TB, over ...obj) []byte {
	tb.Helper()
	return with(tb, fixture(tb, "complete-v2.json"), over...)
}

func TestNormalizeMapsEveryStatus(t *testing.T) {
	t.Parallel()
	want := map[ReceiptStatus]Outcome{
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
	for _, schema := range []int{1, 2} {
		for _, s := range ReceiptStatuses {
			if schema == 1 && s == StatusNeedsParentOperation {
				continue // schema 1 has no handoff status; see TestNormalizeRejects.
			}
			t.Run(fmt.Sprintf("v%d/%s", schema, s), func(t *testing.T) {
				t.Parallel()
				b := v2(t, eligible(s))
				if schema == 1 {
					b = v1(t, eligible(s))
				}
				ev, err := Normalize(solInput(b))
				require.NoError(t, err)
				require.Equal(t, want[s], ev.Status)
				require.Equal(t, 1, ev.AttemptIndex)
				require.Equal(t, fixtureReceiptPath, ev.ReceiptPath)
				require.Equal(t, DeniedCause(""), ev.DeniedCause)
				require.Equal(t, schema == 2, ev.Execution != nil)
				require.Equal(t, s == StatusNeedsParentOperation, ev.Handoff != nil)
			})
		}
	}
}

func TestNormalizeDowngradesToFailed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		schema int
		over   []obj
		want   Outcome
	}{
		// A recorded terminal success vetoes replaying any failure.
		{"child-failed with terminalSuccess true", 2, []obj{eligible(StatusChildFailed), {"terminalSuccess": true}}, OutcomeFailed},
		{"usage-exhausted with terminalSuccess true", 2, []obj{eligible(StatusUsageExhausted), {"terminalSuccess": true}}, OutcomeFailed},
		{"timed-out with terminalSuccess true", 2, []obj{eligible(StatusTimedOut), {"terminalSuccess": true}}, OutcomeFailed},
		// A started failure without a settled child is the launcher's catch.
		{"child-failed without exitCode or signal", 2, []obj{eligible(StatusChildFailed), {"exitCode": nil}}, OutcomeFailed},
		{"usage-exhausted without exitCode or signal", 2, []obj{eligible(StatusUsageExhausted), {"exitCode": nil}}, OutcomeFailed},
		{"unknown start without settled child", 1, []obj{eligible(StatusChildFailed), {"exitCode": nil, "processStarted": absent}}, OutcomeFailed},
		{"settled by signal alone", 2, []obj{eligible(StatusChildFailed), {"exitCode": nil, "signal": "SIGKILL"}}, OutcomeTerminalFailure},
		// timed-out needs an explicit deadline and, once started, an assessment.
		{"timed-out with null timeoutMs", 2, []obj{eligible(StatusTimedOut), {"timeoutMs": nil}}, OutcomeFailed},
		{"timed-out schema 1 without timeoutMs", 1, []obj{eligible(StatusTimedOut), {"timeoutMs": absent}}, OutcomeFailed},
		{"timed-out started without assessment", 2, []obj{eligible(StatusTimedOut), {"terminalSuccess": absent}}, OutcomeFailed},
		// Section 4: an exit code settles a timed-out receipt without an
		// assessment; without timeoutMs it is still failed.
		{"timed-out with an exit code without assessment", 2, []obj{eligible(StatusTimedOut), {"exitCode": 124, "signal": nil, "terminalSuccess": absent}}, OutcomeDeadlineExceeded},
		{"timed-out with an exit code of unknown start", 2, []obj{eligible(StatusTimedOut), {"exitCode": 124, "signal": nil, "terminalSuccess": absent, "processStarted": absent}}, OutcomeDeadlineExceeded},
		// Section 4, second pass: a fractional deadline is a deadline.
		{"timed-out with a fractional timeoutMs and an exit code", 2, []obj{eligible(StatusTimedOut), {"exitCode": 143, "signal": nil, "timeoutMs": 1500.5}}, OutcomeDeadlineExceeded},
		{"timed-out schema 2 without the timeoutMs key", 2, []obj{eligible(StatusTimedOut), {"exitCode": 124, "timeoutMs": absent}}, OutcomeFailed},
		// Section 4: a schema 2 receipt may lack processStarted; the route
		// rule then reads it as not proven unstarted.
		{"usage-exhausted schema 2 of unknown start", 2, []obj{eligible(StatusUsageExhausted), {"processStarted": absent}}, OutcomeUsageExhausted},
		{"unauthenticated schema 2 of unknown start", 2, []obj{preflightFailure, {"status": "unauthenticated", "processStarted": absent}}, OutcomeFailed},
		{"timed-out in preflight needs no assessment", 2, []obj{preflightFailure, {"status": "timed-out", "timeoutMs": 60000}}, OutcomeDeadlineExceeded},
		{"timed-out in preflight of unknown start", 1, []obj{preflightFailure, {"status": "timed-out", "timeoutMs": 60000, "processStarted": absent}}, OutcomeFailed},
		// Quota is only knowable after the workload ran.
		{"usage-exhausted in postprocess", 2, []obj{eligible(StatusUsageExhausted), {"exitCode": 0, "failurePhase": "postprocess"}}, OutcomeUsageExhausted},
		{"usage-exhausted in preflight", 2, []obj{preflightFailure, {"status": "usage-exhausted"}}, OutcomeFailed},
		{"usage-exhausted without phase", 2, []obj{eligible(StatusUsageExhausted), {"failurePhase": nil}}, OutcomeFailed},
		// Route claims prove nothing once the workload may have started.
		{"unavailable-cli started", 2, []obj{invocationFailure, {"status": "unavailable-cli"}}, OutcomeFailed},
		{"unauthenticated started", 2, []obj{invocationFailure, {"status": "unauthenticated"}}, OutcomeFailed},
		{"unavailable-model started", 2, []obj{invocationFailure, {"status": "unavailable-model"}}, OutcomeFailed},
		{"unavailable-model of unknown start", 1, []obj{preflightFailure, {"status": "unavailable-model", "processStarted": absent}}, OutcomeFailed},
		// Terminal failures need the runner's terminalSuccess:false assessment.
		{"child-failed without assessment", 2, []obj{eligible(StatusChildFailed), {"terminalSuccess": absent}}, OutcomeFailed},
		{"malformed-output without assessment", 2, []obj{eligible(StatusMalformedOutput), {"terminalSuccess": absent}}, OutcomeFailed},
		{"malformed-output with terminalSuccess true", 2, []obj{eligible(StatusMalformedOutput), {"terminalSuccess": true}}, OutcomeFailed},
		// unsupported-capability never advances, started or not.
		{"unsupported-capability started", 2, []obj{invocationFailure, {"status": "unsupported-capability"}}, OutcomeFailed},
		{"unsupported-capability not started", 2, []obj{eligible(StatusUnsupportedCapability)}, OutcomeFailed},
		// Cancellation and billing blocks are failed even with full evidence.
		{"cancelled settled", 2, []obj{eligible(StatusCancelled)}, OutcomeFailed},
		{"billing-policy-blocked not started", 1, []obj{eligible(StatusBillingPolicyBlocked)}, OutcomeFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := v2(t, tc.over...)
			if tc.schema == 1 {
				b = v1(t, tc.over...)
			}
			ev, err := Normalize(solInput(b))
			require.NoError(t, err)
			require.Equal(t, tc.want, ev.Status)
			require.Equal(t, DeniedCause(""), ev.DeniedCause)
		})
	}
}

func TestNormalizeToolDenial(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		over   []obj
		want   Outcome
		denied DeniedCause
	}{
		{"verified permission on child-failed", []obj{eligible(StatusChildFailed), {"toolDenial": permissionDenial}}, OutcomePermissionBlocked, DeniedPermission},
		{"verified permission on malformed-output", []obj{eligible(StatusMalformedOutput), {"toolDenial": permissionDenial}}, OutcomePermissionBlocked, DeniedPermission},
		{"verified unknown cause", []obj{eligible(StatusChildFailed), {"toolDenial": with2(permissionDenial, obj{"cause": "unknown"})}}, OutcomeFailed, ""},
		{"verified without cause", []obj{eligible(StatusChildFailed), {"toolDenial": with2(permissionDenial, obj{"cause": absent})}}, OutcomeFailed, ""},
		{"unverified permission", []obj{eligible(StatusChildFailed), {"toolDenial": with2(permissionDenial, obj{"verified": false})}}, OutcomeTerminalFailure, ""},
		{"verified permission without assessment", []obj{eligible(StatusChildFailed), {"terminalSuccess": absent, "toolDenial": permissionDenial}}, OutcomeFailed, ""},
		{"verified permission on usage-exhausted", []obj{eligible(StatusUsageExhausted), {"toolDenial": permissionDenial}}, OutcomeUsageExhausted, ""},
		{"verified permission on cancelled", []obj{eligible(StatusCancelled), {"toolDenial": permissionDenial}}, OutcomeFailed, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ev, err := Normalize(solInput(v2(t, tc.over...)))
			require.NoError(t, err)
			require.Equal(t, tc.want, ev.Status)
			require.Equal(t, tc.denied, ev.DeniedCause)
		})
	}
}

func TestNormalizeIdentity(t *testing.T) {
	t.Parallel()
	unset := solAttempt()
	unset.APISpend = APISpendUnset
	unset.Funding = FundingUnset
	approved := solAttempt()
	approved.APISpend = APISpendApproved
	tests := []struct {
		name     string
		schema   int
		attempt  AttemptPolicy
		parent   Parent
		mode     Access
		contract Contract
		over     obj
		want     string // "" means accepted
	}{
		{name: "parent", over: obj{"parent": "codex"}, want: "receipt identity mismatch on parent: receipt is codex/codex:gpt-5.6-sol@max"},
		{name: "provider", over: obj{"provider": "grok"}, want: "mismatch on provider: receipt is claude/grok:gpt-5.6-sol@max"},
		{name: "gemini provider", over: obj{"provider": "gemini"}, want: "mismatch on provider:"},
		{name: "model", over: obj{"model": "gpt-5.6-luna"}, want: "mismatch on model: receipt is claude/codex:gpt-5.6-luna@max"},
		{name: "model is not alias-normalized", over: obj{"model": "GPT-5.6-SOL"}, want: "mismatch on model"},
		{name: "effort", over: obj{"effort": "high"}, want: "mismatch on effort: receipt is claude/codex:gpt-5.6-sol@high"},
		{name: "mode", over: obj{"mode": "read-only"}, want: "mismatch on mode: receipt is claude/codex:gpt-5.6-sol@max (mode read-only, apiSpend deny, contract legacy), expected claude/codex:gpt-5.6-sol@max (mode isolated-write, apiSpend deny, contract legacy)"},
		{name: "apiSpend approved for deny", over: obj{"apiSpend": "approved"}, want: "mismatch on apiSpend: receipt is claude/codex:gpt-5.6-sol@max (mode isolated-write, apiSpend approved, contract legacy), expected claude/codex:gpt-5.6-sol@max (mode isolated-write, apiSpend deny"},
		{name: "apiSpend legacy for deny", over: obj{"apiSpend": "legacy"}, want: "mismatch on apiSpend"},
		{name: "apiSpend absent for deny", schema: 1, over: obj{"apiSpend": absent}, want: "mismatch on apiSpend: receipt is claude/codex:gpt-5.6-sol@max (mode isolated-write, apiSpend legacy"},
		{name: "apiSpend deny for approved", attempt: approved, want: "mismatch on apiSpend: receipt is claude/codex:gpt-5.6-sol@max (mode isolated-write, apiSpend deny, contract legacy), expected claude/codex:gpt-5.6-sol@max (mode isolated-write, apiSpend approved"},
		{name: "apiSpend deny for unset", attempt: unset, want: "expected claude/codex:gpt-5.6-sol@max (mode isolated-write, apiSpend legacy, contract legacy)"},
		{name: "apiSpend legacy matches unset", attempt: unset, over: obj{"apiSpend": "legacy"}},
		{name: "apiSpend absent matches unset", schema: 1, attempt: unset, over: obj{"apiSpend": absent}},
		{name: "contract strict for default legacy", over: obj{"contract": "strict"}, want: "mismatch on contract: receipt is claude/codex:gpt-5.6-sol@max (mode isolated-write, apiSpend deny, contract strict), expected claude/codex:gpt-5.6-sol@max (mode isolated-write, apiSpend deny, contract legacy)"},
		{name: "contract legacy for strict", contract: ContractStrict, want: "mismatch on contract"},
		{name: "contract absent for strict", schema: 1, contract: ContractStrict, want: "mismatch on contract: receipt is claude/codex:gpt-5.6-sol@max (mode isolated-write, apiSpend deny, contract legacy)"},
		{name: "contract absent matches legacy", schema: 1, contract: ContractLegacy},
		{name: "contract strict matches strict", contract: ContractStrict, over: obj{"contract": "strict"}},
		{name: "several fields", over: obj{"parent": "codex", "effort": "low", "apiSpend": "approved"}, want: "receipt identity mismatch on parent, effort, apiSpend:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			over := obj{}
			if tc.over != nil {
				over = tc.over
			}
			in := solInput(v2(t, over))
			if tc.schema == 1 {
				in.Receipt = v1(t, over)
			}
			if tc.attempt.Descriptor != "" {
				in.Attempt = tc.attempt
			}
			if tc.parent != "" {
				in.Parent = tc.parent
			}
			if tc.mode != "" {
				in.Mode = tc.mode
			}
			in.Contract = tc.contract
			ev, err := Normalize(in)
			if tc.want == "" {
				require.NoError(t, err)
				require.Equal(t, OutcomeComplete, ev.Status)
				return
			}
			require.True(t, IsPolicy(err), "want a PolicyError, got %T %v", err, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestNormalizeSchema2Execution(t *testing.T) {
	t.Parallel()
	ev, err := Normalize(solInput(v2(t, obj{
		"cwd":            "/srv/link/worktree",
		"canonicalPaths": obj{"cwd": "/srv/real/worktree", "output": "/srv/real/out.md", "receipt": "/srv/real/receipt.json"},
	})))
	require.NoError(t, err)
	require.Equal(t, &ExecutionIdentity{
		ID:            "run-7/lane-1/exec-1",
		OutputPath:    "/srv/real/out.md",
		ReceiptPath:   fixtureReceiptPath, // section 4: the --receipt path as given, not the canonical one
		WorkspacePath: "/srv/real/worktree",
		Descriptor:    "codex:gpt-5.6-sol@max",
		APISpend:      APISpendDeny,
		Access:        IsolatedWrite,
		Contract:      ContractLegacy,
	}, ev.Execution)

	// The execution records the attempt's saved apiSpend, not the receipt's.
	unset := solInput(v2(t, obj{"apiSpend": "legacy", "contract": "strict", "mode": "read-only"}))
	unset.Attempt.APISpend = APISpendUnset
	unset.Contract = ContractStrict
	unset.Mode = ReadOnly
	ev, err = Normalize(unset)
	require.NoError(t, err)
	require.Equal(t, APISpendUnset, ev.Execution.APISpend)
	require.Equal(t, ContractStrict, ev.Execution.Contract)
	require.Equal(t, ReadOnly, ev.Execution.Access)
}

func TestNormalizeSchema2Requirements(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		over        obj
		receiptPath string
		want        string
	}{
		{name: "blank executionId", over: obj{"executionId": "  "}, want: "receipt executionId must be nonempty"},
		{name: "relative outputPath", over: obj{"outputPath": "out.md"}, want: `receipt outputPath must be a normalized absolute path, found "out.md"`},
		{name: "unclean outputPath", over: obj{"outputPath": "/srv/a/../out.md"}, want: "receipt outputPath must be a normalized absolute path"},
		{name: "trailing slash receiptPath", over: obj{"receiptPath": fixtureReceiptPath + "/"}, want: "receipt receiptPath must be a normalized absolute path"},
		{name: "relative cwd", over: obj{"cwd": "worktree"}, want: "receipt cwd must be a normalized absolute path"},
		{name: "cwd with NUL", over: obj{"cwd": "/srv/a\x00b"}, want: "receipt cwd must be a normalized absolute path"},
		{name: "relative --receipt", receiptPath: "receipt.json", want: `expected receipt path must be a normalized absolute path, found "receipt.json"`},
		{name: "unclean --receipt", receiptPath: "/srv/switchyard/runs/run-7/./lane-1/receipt.json", want: "expected receipt path must be a normalized absolute path"},
		{name: "receiptPath differs from --receipt", receiptPath: "/srv/other/receipt.json", want: `receipt path differs from the normalized file path: receiptPath is "` + fixtureReceiptPath + `", expected "/srv/other/receipt.json"`},
		{name: "relative canonical output", over: obj{"canonicalPaths.output": "output.md"}, want: "receipt canonicalPaths.output must be a normalized absolute path"},
		{name: "unclean canonical receipt", over: obj{"canonicalPaths.receipt": "//srv/receipt.json"}, want: "receipt canonicalPaths.receipt must be a normalized absolute path"},
		{name: "relative canonical cwd", over: obj{"canonicalPaths.cwd": "."}, want: "receipt canonicalPaths.cwd must be a normalized absolute path"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			over := obj{}
			if tc.over != nil {
				over = tc.over
			}
			in := solInput(v2(t, over))
			if tc.receiptPath != "" {
				in.ReceiptPath = tc.receiptPath
			}
			_, err := Normalize(in)
			require.True(t, IsPolicy(err), "want a PolicyError, got %T %v", err, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}

	// Schema 1 has no execution identity, so a relative --receipt is kept
	// as given, like the reference's "rec.json".
	in := solInput(v1(t))
	in.ReceiptPath = "rec.json"
	ev, err := Normalize(in)
	require.NoError(t, err)
	require.Equal(t, "rec.json", ev.ReceiptPath)
	require.Nil(t, ev.Execution)
}

func TestNormalizeRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		schema int
		over   []obj
		want   string
	}{
		{"processStarted false in invocation", 2, []obj{eligible(StatusChildFailed), {"processStarted": false}}, "a receipt with processStarted false can only fail in the preflight phase (failurePhase is invocation)"},
		{"processStarted false on complete", 2, []obj{{"processStarted": false}}, "a receipt with processStarted false can only fail in the preflight phase (failurePhase is null)"},
		{"started preflight failure", 2, []obj{preflightFailure, {"status": "unavailable-cli", "processStarted": true}}, "a preflight failure cannot record processStarted true"},
		{"postprocess with exit 1", 2, []obj{eligible(StatusMalformedOutput), {"exitCode": 1}}, "a postprocess failure requires a settled clean child exit (exitCode 0)"},
		{"postprocess without exit", 2, []obj{eligible(StatusMalformedOutput), {"exitCode": nil, "signal": "SIGTERM"}}, "a postprocess failure requires a settled clean child exit"},
		{"complete with exit 1", 2, []obj{{"exitCode": 1}}, "a complete receipt requires exitCode 0 and no error, failure phase, or success conflict"},
		{"complete without exit", 1, []obj{{"exitCode": nil}}, "a complete receipt requires exitCode 0"},
		{"complete with error", 2, []obj{{"error": failedRecord}}, "a complete receipt requires exitCode 0"},
		{"complete with failure phase", 2, []obj{{"failurePhase": "postprocess"}}, "a complete receipt requires exitCode 0"},
		{"complete with terminalSuccess true", 2, []obj{{"terminalSuccess": true}}, "a complete receipt requires exitCode 0 and no error, failure phase, or success conflict"},
		{"needs-parent-operation with error", 2, []obj{eligible(StatusNeedsParentOperation), {"error": failedRecord}}, "a complete receipt requires exitCode 0"},
		{"needs-parent-operation with malformed handoff", 2, []obj{eligible(StatusNeedsParentOperation), {"handoffMalformed": true}}, "malformed handoff cannot be a delivered terminal status"},
		{"complete with malformed handoff", 2, []obj{{"handoffMalformed": true}}, "malformed handoff cannot be a delivered terminal status"},
		{"needs-parent-operation without handoff", 2, []obj{{"status": "needs-parent-operation"}}, "handoff status requires handoff"},
		{"failure without error record", 2, []obj{eligible(StatusChildFailed), {"error": nil}}, "a non-complete receipt requires an error record (error {message, evidence})"},
		{"usage-exhausted with blank evidence", 2, []obj{eligible(StatusUsageExhausted), {"error": obj{"message": "quota", "evidence": " \n"}}}, "a usage-exhausted receipt requires recorded classification evidence (error.evidence)"},
		{"handoff on complete", 2, []obj{{"handoff": handoffRequest}}, "only a schema 2 needs-parent-operation receipt may carry a handoff (receipt is schema 2 complete)"},
		{"handoff on schema 2 child-failed", 2, []obj{eligible(StatusChildFailed), {"handoff": handoffRequest}}, "only a schema 2 needs-parent-operation receipt may carry a handoff (receipt is schema 2 child-failed)"},
		{"handoff on schema 1 complete", 1, []obj{{"handoff": handoffRequest}}, "only a schema 2 needs-parent-operation receipt may carry a handoff (receipt is schema 1 complete)"},
		{"schema 1 needs-parent-operation", 1, []obj{eligible(StatusNeedsParentOperation)}, "receipt status needs-parent-operation requires schemaVersion 2"},
		{"verified denial on complete", 2, []obj{{"toolDenial": permissionDenial}}, "a delivered terminal receipt cannot carry verified tool-denial evidence"},
		{"verified denial on needs-parent-operation", 2, []obj{eligible(StatusNeedsParentOperation), {"toolDenial": permissionDenial}}, "a delivered terminal receipt cannot carry verified tool-denial evidence"},
		{"decode failure names the field", 2, []obj{{"exitCode": "0"}}, "receipt exitCode must be null or an integer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := v2(t, tc.over...)
			if tc.schema == 1 {
				b = v1(t, tc.over...)
			}
			_, err := Normalize(solInput(b))
			require.True(t, IsPolicy(err), "want a PolicyError, got %T %v", err, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestNormalizeAcceptsUnverifiedDenialOnComplete(t *testing.T) {
	t.Parallel()
	// An earlier, unverified refusal cannot replay a delivered completion.
	ev, err := Normalize(solInput(v2(t, obj{"toolDenial": with2(permissionDenial, obj{"verified": false})})))
	require.NoError(t, err)
	require.Equal(t, OutcomeComplete, ev.Status)
	// The reference accepts a delivered handoff whose run also recorded a
	// terminal success: transport success is not task completion.
	ev, err = Normalize(solInput(v2(t, eligible(StatusNeedsParentOperation), obj{"terminalSuccess": true})))
	require.NoError(t, err)
	require.Equal(t, OutcomeNeedsParentOp, ev.Status)
}

func TestNormalizeHandoff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		summary any
		want    *Handoff
	}{
		{"summary becomes ref", "ready for checks", &Handoff{Operation: OpRunChecks, TaskID: "task-42", CheckpointID: "cp-3", Ref: "ready for checks"}},
		{"blank summary has no ref", "  ", &Handoff{Operation: OpRunChecks, TaskID: "task-42", CheckpointID: "cp-3"}},
		{"absent summary has no ref", absent, &Handoff{Operation: OpRunChecks, TaskID: "task-42", CheckpointID: "cp-3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ev, err := Normalize(solInput(v2(t, eligible(StatusNeedsParentOperation), obj{"handoff.summary": tc.summary})))
			require.NoError(t, err)
			require.Equal(t, OutcomeNeedsParentOp, ev.Status)
			require.Equal(t, tc.want, ev.Handoff)
		})
	}
}

func TestNormalizeProcessStarted(t *testing.T) {
	t.Parallel()
	ev, err := Normalize(solInput(v2(t, eligible(StatusUnauthenticated))))
	require.NoError(t, err)
	require.NotNil(t, ev.ProcessStarted)
	require.False(t, *ev.ProcessStarted)

	for _, b := range [][]byte{v1(t, obj{"processStarted": absent}), v2(t, obj{"processStarted": absent})} {
		ev, err = Normalize(solInput(b))
		require.NoError(t, err)
		require.Nil(t, ev.ProcessStarted)
		out, err := json.Marshal(ev)
		require.NoError(t, err)
		require.NotContains(t, string(out), "processStarted", "section 4: an absent processStarted stays absent")
	}
}

// TestNormalizeSchema2ContractAbsent: a schema 2 receipt without contract
// ran the legacy contract (section 4).
func TestNormalizeSchema2ContractAbsent(t *testing.T) {
	t.Parallel()
	in := solInput(v2(t, obj{"contract": absent}))
	in.Contract = ContractLegacy
	ev, err := Normalize(in)
	require.NoError(t, err)
	require.Equal(t, ContractLegacy, ev.Execution.Contract)

	in.Contract = ContractStrict
	_, err = Normalize(in)
	require.ErrorContains(t, err, "receipt identity mismatch on contract")
}

// TestNormalizeRelativeReceiptPath: the event keeps --receipt exactly as
// given (section 4); a schema 2 receipt, whose own receiptPath is absolute,
// cannot match a relative argument.
func TestNormalizeRelativeReceiptPath(t *testing.T) {
	t.Parallel()
	in := solInput(v1(t))
	in.ReceiptPath = "runs/r1/receipt.json"
	ev, err := Normalize(in)
	require.NoError(t, err)
	require.Equal(t, "runs/r1/receipt.json", ev.ReceiptPath)

	in = solInput(v2(t, obj{"receiptPath": "/srv/runs/r1/receipt.json"}))
	in.ReceiptPath = "runs/r1/receipt.json"
	_, err = Normalize(in)
	require.ErrorContains(t, err, `expected receipt path must be a normalized absolute path, found "runs/r1/receipt.json"`)
}

func TestNormalizeUsageErrors(t *testing.T) {
	t.Parallel()
	inherit := AttemptPolicy{Descriptor: "inherit-parent", Attempt: Attempt{Kind: KindAlias, Alias: AliasInheritParent},
		ExhaustionGroup: Claude, Funding: FundingIncluded, APISpend: APISpendDeny, Route: RouteNative,
		Authorization: Authorization{State: "allowed"}}
	auto := inherit
	auto.Descriptor, auto.Attempt.Alias = "auto", AliasAuto
	nativeDescriptor := AttemptPolicy{Descriptor: "claude:opus@max", Attempt: Attempt{Kind: KindDescriptor, Provider: Claude, Model: "opus", Effort: EffortMax},
		ExhaustionGroup: Claude, Funding: FundingIncluded, APISpend: APISpendDeny, Route: RouteNative,
		Authorization: Authorization{State: "allowed"}}
	valid := fixtureBytes(t, "complete-v2.json")
	tests := []struct {
		name   string
		mutate func(in *NormalizeInput)
		want   string
	}{
		{"inherit-parent alias", func(in *NormalizeInput) { in.Attempt = inherit },
			"attempt 1 (inherit-parent) is a native lane; normalize native lanes only from explicit host terminal metadata, never a runner receipt or generated prose"},
		{"auto alias with garbage receipt", func(in *NormalizeInput) { in.Attempt = auto; in.Receipt = []byte("{") },
			"attempt 1 (auto) is a native lane; normalize native lanes only from explicit host terminal metadata"},
		{"native-routed descriptor", func(in *NormalizeInput) { in.Attempt = nativeDescriptor; in.AttemptIndex = 0 },
			"attempt 0 (claude:opus@max) is a native lane; normalize native lanes only from explicit host terminal metadata"},
		{"invalid JSON", func(in *NormalizeInput) { in.Receipt = []byte(`{"schemaVersion":`) },
			"receipt is not valid JSON: " + fixtureReceiptPath},
		{"empty receipt", func(in *NormalizeInput) { in.Receipt = nil }, "receipt is not valid JSON"},
		{"oversize receipt", func(in *NormalizeInput) {
			in.Receipt = append(append([]byte{}, valid...), []byte(strings.Repeat(" ", MaxReceiptBytes))...)
		}, "receipt " + fixtureReceiptPath + " exceeds 1048576 bytes"},
		{"bad parent", func(in *NormalizeInput) { in.Parent = "gemini" }, "--parent must be one of: claude, codex"},
		{"bad mode", func(in *NormalizeInput) { in.Mode = "write" }, "--mode must be one of: read-only, isolated-write"},
		{"bad contract", func(in *NormalizeInput) { in.Contract = "loose" }, "--contract must be one of: legacy, strict"},
		{"negative attempt", func(in *NormalizeInput) { in.AttemptIndex = -1 }, "--attempt must be a nonnegative integer"},
		{"missing receipt path", func(in *NormalizeInput) { in.ReceiptPath = "" }, "--receipt is required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := solInput(valid)
			tc.mutate(&in)
			_, err := Normalize(in)
			require.True(t, IsUsage(err), "want a UsageError, got %T %v", err, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestNormalizeFixtures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want Outcome
	}{
		{"complete-v2.json", OutcomeComplete},
		{"complete-v1.json", OutcomeComplete},
		{"usage-exhausted-v2.json", OutcomeUsageExhausted},
		{"child-failed-v2.json", OutcomeTerminalFailure},
		{"needs-parent-operation-v2.json", OutcomeNeedsParentOp},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			ev, err := Normalize(solInput(fixtureBytes(t, tc.file)))
			require.NoError(t, err)
			require.Equal(t, tc.want, ev.Status)
		})
	}
}

// TestNormalizeGolden pins the marshalled event of each outcome kind.
func TestNormalizeGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   func(t *testing.T) NormalizeInput
		want Outcome
	}{
		{"complete", func(t *testing.T) NormalizeInput { return solInput(fixtureBytes(t, "complete-v2.json")) }, OutcomeComplete},
		{"complete-v1", func(t *testing.T) NormalizeInput {
			in := solInput(fixtureBytes(t, "complete-v1.json"))
			in.ReceiptPath = "rec.json"
			in.AttemptIndex = 0
			return in
		}, OutcomeComplete},
		{"needs-parent-operation", func(t *testing.T) NormalizeInput {
			return solInput(fixtureBytes(t, "needs-parent-operation-v2.json"))
		}, OutcomeNeedsParentOp},
		{"usage-exhausted", func(t *testing.T) NormalizeInput { return solInput(fixtureBytes(t, "usage-exhausted-v2.json")) }, OutcomeUsageExhausted},
		{"route-unavailable", func(t *testing.T) NormalizeInput { return solInput(v2(t, eligible(StatusUnauthenticated))) }, OutcomeRouteUnavailable},
		{"terminal-failure", func(t *testing.T) NormalizeInput { return solInput(fixtureBytes(t, "child-failed-v2.json")) }, OutcomeTerminalFailure},
		{"deadline-exceeded", func(t *testing.T) NormalizeInput { return solInput(v2(t, eligible(StatusTimedOut))) }, OutcomeDeadlineExceeded},
		{"failed", func(t *testing.T) NormalizeInput { return solInput(v2(t, eligible(StatusCancelled))) }, OutcomeFailed},
		{"permission-blocked", func(t *testing.T) NormalizeInput {
			return solInput(v2(t, eligible(StatusChildFailed), obj{"toolDenial": permissionDenial}))
		}, OutcomePermissionBlocked},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ev, err := Normalize(tc.in(t))
			require.NoError(t, err)
			require.Equal(t, tc.want, ev.Status)
			out, err := json.MarshalIndent(ev, "", "  ")
			require.NoError(t, err)
			golden.Check(t, "testdata/normalize/"+tc.name+".golden", append(out, '\n'))
		})
	}
}

// TestNormalizeLegacyAntigravity: on a legacy sheet an Antigravity attempt
// has apiSpend unset and normalizes like any other external attempt: the
// receipt records legacy, or (schema 1) no apiSpend at all (section 4).
func TestNormalizeLegacyAntigravity(t *testing.T) {
	t.Parallel()
	s, err := ParseSheet([]byte("how explorer: antigravity:gemini-3.1-pro@default\n"), DefaultOptions())
	require.NoError(t, err)
	rp, err := Resolve(s, "how explorer", ParentClaude, DefaultOptions())
	require.NoError(t, err)
	att := rp.Lanes[0].Attempts[0]
	require.Equal(t, APISpendUnset, att.APISpend)
	require.Equal(t, RouteExternal, att.Route)

	ag := obj{"provider": "antigravity", "model": "gemini-3.1-pro", "effort": "default"}
	for _, tc := range []struct {
		name    string
		receipt []byte
		want    string // error substring; "" means it normalizes
	}{
		{"schema 2 legacy", v2(t, ag, obj{"apiSpend": "legacy"}), ""},
		{"schema 1 legacy", v1(t, ag, obj{"apiSpend": "legacy"}), ""},
		{"schema 1 without apiSpend", v1(t, ag, obj{"apiSpend": absent}), ""},
		{"schema 2 deny", v2(t, ag, obj{"apiSpend": "deny"}), "receipt identity mismatch on apiSpend"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := solInput(tc.receipt)
			in.Attempt, in.AttemptIndex = att, 0
			ev, err := Normalize(in)
			if tc.want != "" {
				require.ErrorContains(t, err, tc.want)
				return
			}
			require.NoError(t, err)
			require.Equal(t, OutcomeComplete, ev.Status)
			if ev.Execution != nil {
				require.Equal(t, APISpendUnset, ev.Execution.APISpend)
				require.Equal(t, "antigravity:gemini-3.1-pro@default", ev.Execution.Descriptor)
			}
		})
	}
}
