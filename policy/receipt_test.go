package policy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// obj is a receipt (or nested member) under construction in a test.
type obj = map[string]any

// absent deletes a key when used as an override value.
const absent = "\x00absent"

// receiptFixtures are the shared receipts under testdata/receipts; the CLI
// tests reuse them.
var receiptFixtures = []string{"complete-v2.json", "complete-v1.json", "usage-exhausted-v2.json",
	"child-failed-v2.json", "needs-parent-operation-v2.json"}

func fixtureBytes(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "receipts", name))
	require.NoError(tb, err)
	return b
}

func fixture(tb testing.TB, name string) obj {
	tb.Helper()
	var m obj
	require.NoError(tb, json.Unmarshal(fixtureBytes(tb, name), &m))
	return m
}

// with returns a deep copy of base with overrides applied. A dotted key
// ("error.evidence") sets a nested member; the value absent deletes.
func with(tb testing.TB, base obj, overrides ...obj) []byte {
	tb.Helper()
	var m obj
	b, err := json.Marshal(base)
	require.NoError(tb, err)
	require.NoError(tb, json.Unmarshal(b, &m))
	for _, o := range overrides {
		// Whole members first, so "error" then "error.evidence" compose.
		keys := make([]string, 0, len(o))
		for k := range o {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			di, dj := strings.Count(keys[i], "."), strings.Count(keys[j], ".")
			return di < dj || (di == dj && keys[i] < keys[j])
		})
		for _, k := range keys {
			v := o[k]
			parts := strings.Split(k, ".")
			target := m
			for _, p := range parts[:len(parts)-1] {
				next, ok := target[p].(obj)
				require.True(tb, ok, "override %s: %s is not an object", k, p)
				target = next
			}
			last := parts[len(parts)-1]
			if v == absent {
				delete(target, last)
			} else {
				target[last] = deepCopy(tb, v) // overrides may share package-level maps
			}
		}
	}
	out, err := json.Marshal(m)
	require.NoError(tb, err)
	return out
}

// deepCopy copies a JSON-shaped value so that writing into the result never
// touches the original.
func deepCopy(tb testing.TB, v any) any {
	tb.Helper()
	if v == absent {
		return v
	}
	b, err := json.Marshal(v)
	require.NoError(tb, err)
	var out any
	require.NoError(tb, json.Unmarshal(b, &out))
	if m, ok := out.(map[string]any); ok {
		return obj(m)
	}
	return out
}

func TestReceiptFixturesDecodeAndRoundTrip(t *testing.T) {
	t.Parallel()
	for _, name := range receiptFixtures {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r, err := DecodeReceipt(fixtureBytes(t, name))
			require.NoError(t, err)
			out, err := json.MarshalIndent(r, "", "  ")
			require.NoError(t, err)
			again, err := DecodeReceipt(out)
			require.NoError(t, err)
			require.Equal(t, r, again)
			// A marshalled receipt keeps the runner's key order and content.
			require.JSONEq(t, string(fixtureBytes(t, name)), string(out))
		})
	}
}

func TestDecodeReceiptFields(t *testing.T) {
	t.Parallel()
	r, err := DecodeReceipt(fixtureBytes(t, "complete-v2.json"))
	require.NoError(t, err)
	require.Equal(t, 2, r.SchemaVersion)
	require.Equal(t, StatusComplete, r.Status)
	require.Equal(t, Codex, r.Provider)
	require.Equal(t, "/srv/switchyard/runs/run-7/lane-1/receipt.json", r.ReceiptPath)
	require.Equal(t, &CanonicalPaths{Cwd: "/srv/switchyard/worktrees/run-7-lane-1",
		Output:  "/srv/switchyard/runs/run-7/lane-1/output.md",
		Receipt: "/srv/switchyard/runs/run-7/lane-1/receipt.json"}, r.CanonicalPaths)
	require.Equal(t, int64(461512), r.ElapsedMs)
	require.Equal(t, PreflightPassed, r.Preflight.Status)
	require.NotNil(t, r.ExitCode)
	require.Equal(t, 0, *r.ExitCode)
	require.Nil(t, r.Signal)
	require.Nil(t, r.ReportedModel)
	require.Equal(t, EvidencePinnedArgv, *r.ModelEvidence)
	require.Equal(t, int64(182340), *r.Usage.InputTokens)
	require.Nil(t, r.Usage.CacheCreationInputTokens)
	require.Nil(t, r.CostUSD)
	require.Nil(t, r.Error)
	require.Nil(t, r.FailurePhase)
	require.True(t, *r.ProcessStarted)
	require.Equal(t, APISpendDeny, r.APISpend)
	require.Equal(t, ContractLegacy, r.Contract)
	require.Equal(t, int64(1800000), *r.TimeoutMs)
	require.Nil(t, r.TerminalSuccess)

	h, err := DecodeReceipt(fixtureBytes(t, "needs-parent-operation-v2.json"))
	require.NoError(t, err)
	require.Equal(t, &ReceiptHandoff{Task: "task-42", Checkpoint: "cp-3", Operation: OpCommitCheckpoint,
		Files:   []string{"internal/engine/lane.go", "internal/engine/lane_test.go"},
		Checks:  []string{"go-test-engine"},
		Summary: "lane retry loop extracted; tests pass locally"}, h.Handoff)
}

func TestDecodeReceiptAccepts(t *testing.T) {
	t.Parallel()
	v1, v2 := fixture(t, "complete-v1.json"), fixture(t, "complete-v2.json")
	tests := []struct {
		name  string
		base  obj
		over  obj
		check func(t *testing.T, r *Receipt)
	}{
		{"gemini provider", v2, obj{"provider": "gemini"}, func(t *testing.T, r *Receipt) {
			require.Equal(t, Gemini, r.Provider)
		}},
		{"containment verified by the kernel, with the proxy's denials", v2,
			obj{"containment": obj{"class": "READ_ONLY_NO_NETWORK", "by": "the kernel (Landlock ABI 7)", "denied": []any{"egress proxy refused CONNECT x:443: not on the provider's allowlist"}}},
			func(t *testing.T, r *Receipt) {
				require.Equal(t, &ReceiptContainment{Class: ContainmentReadOnly, By: "the kernel (Landlock ABI 7)",
					Denied: []string{"egress proxy refused CONNECT x:443: not on the provider's allowlist"}}, r.Containment)
			}},
		{"containment unrestricted", v2, obj{"containment": obj{"class": "UNVERIFIED", "by": "", "unrestricted": true}},
			func(t *testing.T, r *Receipt) {
				require.Equal(t, &ReceiptContainment{Class: ContainmentUnverified, Unrestricted: true}, r.Containment)
			}},
		{"schema 1 predating processStarted, apiSpend, contract and timeoutMs", v1,
			obj{"processStarted": absent, "apiSpend": absent, "contract": absent, "timeoutMs": absent},
			func(t *testing.T, r *Receipt) {
				require.Nil(t, r.ProcessStarted)
				require.Equal(t, APISpend(""), r.APISpend)
				require.Equal(t, Contract(""), r.Contract)
				require.Nil(t, r.TimeoutMs)
			}},
		// Section 4: schema 2 fields that may be absent.
		{"schema 2 without processStarted, contract and timeoutMs", v2,
			obj{"processStarted": absent, "contract": absent, "timeoutMs": absent},
			func(t *testing.T, r *Receipt) {
				require.Nil(t, r.ProcessStarted)
				require.Equal(t, Contract(""), r.Contract)
				require.Nil(t, r.TimeoutMs)
				require.Equal(t, APISpendDeny, r.APISpend)
			}},
		{"schema 2 handoff without summary", v2,
			obj{"status": "needs-parent-operation", "handoff": obj{"task": "t", "checkpoint": "c", "operation": "run-checks", "files": []any{}, "checks": []any{}}},
			func(t *testing.T, r *Receipt) {
				require.Equal(t, "t", r.Handoff.Task)
				require.Equal(t, "", r.Handoff.Summary)
			}},
		{"schema 1 with contract", v1, obj{"contract": "strict"}, func(t *testing.T, r *Receipt) {
			require.Equal(t, ContractStrict, r.Contract)
		}},
		{"null timeoutMs", v2, obj{"timeoutMs": nil}, func(t *testing.T, r *Receipt) {
			require.Nil(t, r.TimeoutMs)
		}},
		// Section 4, second pass: any positive number is a deadline.
		{"fractional timeoutMs", v2, obj{"timeoutMs": 1500.5}, func(t *testing.T, r *Receipt) {
			require.Equal(t, int64(1501), *r.TimeoutMs)
		}},
		{"sub-millisecond timeoutMs stays positive", v2, obj{"timeoutMs": 0.25}, func(t *testing.T, r *Receipt) {
			require.Equal(t, int64(1), *r.TimeoutMs)
		}},
		{"integral float exitCode", v2, obj{"exitCode": 1.0, "elapsedMs": 1e3}, func(t *testing.T, r *Receipt) {
			require.Equal(t, 1, *r.ExitCode)
			require.Equal(t, int64(1000), r.ElapsedMs)
		}},
		{"signal and cost", v2, obj{"exitCode": nil, "signal": "SIGTERM", "costUsd": 0.125}, func(t *testing.T, r *Receipt) {
			require.Nil(t, r.ExitCode)
			require.Equal(t, "SIGTERM", *r.Signal)
			require.Equal(t, 0.125, *r.CostUSD)
		}},
		{"null usage and empty usage", v2, obj{"usage": obj{}}, func(t *testing.T, r *Receipt) {
			require.Equal(t, &Usage{}, r.Usage)
		}},
		{"tool denial without cause", v2, obj{"toolDenial": obj{"verified": false, "tool": nil, "requestedAction": nil, "evidence": ""}},
			func(t *testing.T, r *Receipt) {
				require.Equal(t, &ToolDenial{}, r.ToolDenial)
			}},
		{"tool denial with cause", v2, obj{"toolDenial": obj{"verified": true, "cause": "permission", "tool": "Write", "requestedAction": "write src/a.go", "evidence": "diagnostic: claude_permission_denied"}},
			func(t *testing.T, r *Receipt) {
				require.Equal(t, DenialPermission, r.ToolDenial.Cause)
				require.Equal(t, "Write", *r.ToolDenial.Tool)
			}},
		{"handoffMalformed false and terminalSuccess", v2, obj{"handoffMalformed": false, "terminalSuccess": true},
			func(t *testing.T, r *Receipt) {
				require.False(t, r.HandoffMalformed)
				require.True(t, *r.TerminalSuccess)
			}},
		{"schema 1 handoff is left to Normalize", v1, obj{"status": "child-failed", "handoff": obj{"task": "t", "checkpoint": "c", "operation": "run-checks", "files": []any{}, "checks": []any{}, "summary": ""}},
			func(t *testing.T, r *Receipt) {
				require.Equal(t, OpRunChecks, r.Handoff.Operation)
				require.Equal(t, []string{}, r.Handoff.Files)
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := DecodeReceipt(with(t, tc.base, tc.over))
			require.NoError(t, err)
			tc.check(t, r)
		})
	}
}

func TestDecodeReceiptRejects(t *testing.T) {
	t.Parallel()
	v1, v2 := fixture(t, "complete-v1.json"), fixture(t, "complete-v2.json")
	denial := obj{"verified": true, "cause": "permission", "tool": "Write", "requestedAction": nil, "evidence": "e"}
	handoff := obj{"task": "t", "checkpoint": "c", "operation": "run-checks", "files": []any{"a"}, "checks": []any{"x"}, "summary": "s"}
	tests := []struct {
		name string
		base obj
		over obj
		want string
	}{
		{"schemaVersion 3", v2, obj{"schemaVersion": 3}, "receipt schemaVersion must be 1 or 2, found 3"},
		{"schemaVersion string", v2, obj{"schemaVersion": "2"}, `receipt schemaVersion must be 1 or 2, found "2"`},
		{"schemaVersion absent", v2, obj{"schemaVersion": absent}, "receipt schemaVersion must be 1 or 2, found undefined"},
		{"unknown key", v2, obj{"extra": 1}, `receipt has unknown key "extra"`},
		{"containment of an unknown class", v2, obj{"containment": obj{"class": "SANDBOXED", "by": "x"}}, "containment.class"},
		{"containment not an object", v2, obj{"containment": "kernel"}, "containment"},
		{"containment with an unknown key", v2, obj{"containment": obj{"class": "UNVERIFIED", "by": "", "extra": 1}}, "extra"},
		{"case-folded key", v2, obj{"ExitCode": 0}, `receipt has unknown key "ExitCode"`},
		{"schema 1 receiptPath", v1, obj{"receiptPath": "/r"}, "receipt receiptPath is a schema 2 field; a schema 1 receipt must not carry it"},
		{"schema 1 executionId", v1, obj{"executionId": "x"}, "receipt executionId is a schema 2 field"},
		{"schema 1 canonicalPaths", v1, obj{"canonicalPaths": obj{"cwd": "/", "output": "/o", "receipt": "/r"}}, "receipt canonicalPaths is a schema 2 field"},
		{"schema 1 needs-parent-operation", v1, obj{"status": "needs-parent-operation"}, "receipt status needs-parent-operation requires schemaVersion 2"},
		{"missing status", v2, obj{"status": absent}, "receipt status is required on a schema 2 receipt"},
		{"missing exitCode", v1, obj{"exitCode": absent}, "receipt exitCode is required on a schema 1 receipt"},
		{"missing error", v1, obj{"error": absent}, "receipt error is required"},
		{"missing preflight", v2, obj{"preflight": absent}, "receipt preflight is required"},
		{"schema 2 missing receiptPath", v2, obj{"receiptPath": absent}, "receipt receiptPath is required on a schema 2 receipt"},
		{"schema 2 missing executionId", v2, obj{"executionId": absent}, "receipt executionId is required on a schema 2 receipt"},
		{"schema 2 missing canonicalPaths", v2, obj{"canonicalPaths": absent}, "receipt canonicalPaths is required on a schema 2 receipt"},
		{"schema 2 empty receiptPath", v2, obj{"receiptPath": ""}, "receipt receiptPath must be a non-empty string"},
		{"schema 2 empty executionId", v2, obj{"executionId": ""}, "receipt executionId must be a non-empty string"},
		{"schema 2 missing apiSpend", v2, obj{"apiSpend": absent}, "receipt apiSpend is required on a schema 2 receipt"},
		{"schema 2 handoff missing task", v2, obj{"status": "needs-parent-operation", "handoff": obj{"checkpoint": "c", "operation": "run-checks", "files": []any{}, "checks": []any{}}}, "receipt handoff.task is required"},
		{"schema 2 handoff with a numeric summary", v2, obj{"status": "needs-parent-operation", "handoff": obj{"task": "t", "checkpoint": "c", "operation": "run-checks", "files": []any{}, "checks": []any{}, "summary": 1}}, "receipt handoff.summary must be a string"},
		{"unknown status", v2, obj{"status": "succeeded"}, `receipt status must be one of "complete", "needs-parent-operation"`},
		{"status number", v2, obj{"status": 0}, "receipt status must be a string"},
		{"unknown parent", v2, obj{"parent": "gemini"}, `receipt parent must be "claude" or "codex"`},
		{"unknown provider", v2, obj{"provider": "openai"}, `receipt provider must be one of "claude", "codex", "grok", "devin", "cursor", "antigravity", "opencode", "gemini"`},
		{"blank model", v2, obj{"model": " "}, "receipt model must be a non-empty string"},
		{"unknown effort", v2, obj{"effort": "ultra"}, "receipt effort must be one of"},
		{"unknown mode", v2, obj{"mode": "write"}, `receipt mode must be "read-only" or "isolated-write"`},
		{"cwd number", v2, obj{"cwd": 7}, "receipt cwd must be a string"},
		{"negative elapsedMs", v2, obj{"elapsedMs": -1}, "receipt elapsedMs must be a non-negative integer"},
		{"executable number", v2, obj{"executable": 5}, "receipt executable must be a string or null"},
		{"preflight null", v2, obj{"preflight": nil}, "receipt preflight must be an object"},
		{"preflight unknown status", v2, obj{"preflight.status": "ok"}, "receipt preflight.status must be one of"},
		{"preflight missing evidence", v2, obj{"preflight.evidence": absent}, "receipt preflight.evidence is required"},
		{"preflight unknown key", v2, obj{"preflight.code": 1}, `receipt preflight has unknown key "code"`},
		{"argv null", v2, obj{"argv": nil}, "receipt argv must be an array of strings"},
		{"argv numbers", v2, obj{"argv": []any{1}}, "receipt argv must be an array of strings"},
		{"fractional exitCode", v2, obj{"exitCode": 1.5}, "receipt exitCode must be null or an integer"},
		{"string exitCode", v2, obj{"exitCode": "0"}, "receipt exitCode must be null or an integer"},
		{"blank signal", v2, obj{"signal": ""}, "receipt signal must be null or a non-empty string"},
		{"numeric signal", v2, obj{"signal": 15}, "receipt signal must be a string or null"},
		{"modelVerified null", v2, obj{"modelVerified": nil}, "receipt modelVerified must be a boolean"},
		{"unknown modelEvidence", v2, obj{"modelEvidence": "guess"}, `receipt modelEvidence must be "provider-report", "pinned-argv" or null`},
		{"usage unknown key", v2, obj{"usage.tokens": 1}, `receipt usage has unknown key "tokens"`},
		{"usage negative", v2, obj{"usage.inputTokens": -1}, "receipt usage.inputTokens must be a non-negative integer"},
		{"usage array", v2, obj{"usage": []any{}}, "receipt usage must be an object"},
		{"negative cost", v2, obj{"costUsd": -1}, "receipt costUsd must be null or a non-negative number"},
		{"error string", v2, obj{"error": "boom"}, "receipt error must be an object"},
		{"error without evidence", v2, obj{"error": obj{"message": "m"}}, "receipt error.evidence is required"},
		{"error numeric message", v2, obj{"error": obj{"message": 1, "evidence": "e"}}, "receipt error.message must be a string"},
		{"unknown failurePhase", v2, obj{"failurePhase": "setup"}, `receipt failurePhase must be "preflight", "invocation", "postprocess" or null`},
		{"processStarted null", v2, obj{"processStarted": nil}, "receipt processStarted must be a boolean when present"},
		{"apiSpend unset", v2, obj{"apiSpend": "unset"}, `receipt apiSpend must be "deny", "approved" or "legacy"`},
		{"unknown contract", v1, obj{"contract": "loose"}, `receipt contract must be "legacy" or "strict"`},
		{"zero timeoutMs", v2, obj{"timeoutMs": 0}, "receipt timeoutMs must be a positive number or null"},
		{"negative fractional timeoutMs", v2, obj{"timeoutMs": -0.5}, "receipt timeoutMs must be a positive number or null"},
		{"string timeoutMs", v2, obj{"timeoutMs": "30000"}, "receipt timeoutMs must be a positive number or null"},
		{"toolDenial null", v2, obj{"toolDenial": nil}, "receipt toolDenial must be an object"},
		{"toolDenial verified string", v2, obj{"toolDenial": with2(denial, obj{"verified": "yes"})}, "receipt toolDenial.verified must be a boolean"},
		{"toolDenial guard cause", v2, obj{"toolDenial": with2(denial, obj{"cause": "guard"})}, `receipt toolDenial.cause must be "permission" or "unknown"`},
		{"toolDenial blank tool", v2, obj{"toolDenial": with2(denial, obj{"tool": " "})}, "receipt toolDenial.tool must be null or a non-empty string"},
		{"toolDenial missing tool", v2, obj{"toolDenial": with2(denial, obj{"tool": absent})}, "receipt toolDenial.tool is required"},
		{"toolDenial blank requestedAction", v2, obj{"toolDenial": with2(denial, obj{"requestedAction": ""})}, "receipt toolDenial.requestedAction must be null or a non-empty string"},
		{"toolDenial missing evidence", v2, obj{"toolDenial": with2(denial, obj{"evidence": absent})}, "receipt toolDenial.evidence is required"},
		{"handoff null", v2, obj{"handoff": nil}, "receipt handoff must be an object"},
		{"handoff unknown operation", v2, obj{"handoff": with2(handoff, obj{"operation": "push"})}, `receipt handoff.operation must be "commit-checkpoint" or "run-checks"`},
		{"handoff blank task", v2, obj{"handoff": with2(handoff, obj{"task": ""})}, "receipt handoff.task must be a non-empty string"},
		{"handoff blank checkpoint", v2, obj{"handoff": with2(handoff, obj{"checkpoint": "  "})}, "receipt handoff.checkpoint must be a non-empty string"},
		{"handoff missing files", v2, obj{"handoff": with2(handoff, obj{"files": absent})}, "receipt handoff.files is required"},
		{"handoff checks not strings", v2, obj{"handoff": with2(handoff, obj{"checks": []any{true}})}, "receipt handoff.checks must be an array of strings"},
		{"handoff unknown key", v2, obj{"handoff": with2(handoff, obj{"ref": "r"})}, `receipt handoff has unknown key "ref"`},
		{"handoffMalformed string", v2, obj{"handoffMalformed": "true"}, "receipt handoffMalformed must be a boolean when present"},
		{"terminalSuccess number", v2, obj{"terminalSuccess": 1}, "receipt terminalSuccess must be a boolean when present"},
		{"canonicalPaths null", v2, obj{"canonicalPaths": nil}, "receipt canonicalPaths must be an object"},
		{"canonicalPaths missing receipt", v2, obj{"canonicalPaths.receipt": absent}, "receipt canonicalPaths.receipt is required"},
		{"canonicalPaths unknown key", v2, obj{"canonicalPaths.prompt": "/p"}, `receipt canonicalPaths has unknown key "prompt"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := DecodeReceipt(with(t, tc.base, tc.over))
			require.Nil(t, r)
			require.True(t, IsPolicy(err), "want a PolicyError, got %T %v", err, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

// with2 is with for nested members: a shallow copy of base with overrides.
func with2(base, over obj) obj {
	out := obj{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		if v == absent {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

func TestDecodeReceiptRejectsBytes(t *testing.T) {
	t.Parallel()
	valid := fixtureBytes(t, "complete-v2.json")
	tests := []struct {
		name     string
		in       []byte
		sentinel error
		want     string
	}{
		{"empty", nil, ErrReceiptNotJSON, ""},
		{"truncated", valid[:len(valid)/2], ErrReceiptNotJSON, ""},
		{"two values", append(append([]byte{}, valid...), valid...), ErrReceiptNotJSON, ""},
		{"too large", append(append([]byte{}, valid...), make([]byte, MaxReceiptBytes)...), ErrReceiptTooLarge, ""},
		{"array", []byte(`[]`), nil, "receipt must be a JSON object"},
		{"null", []byte(`null`), nil, "receipt must be a JSON object"},
		{"duplicate key", []byte(`{"schemaVersion":2,"schemaVersion":2}`), nil, `receipt has duplicate key "schemaVersion"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := DecodeReceipt(tc.in)
			require.Nil(t, r)
			require.Error(t, err)
			if tc.sentinel != nil {
				require.ErrorIs(t, err, tc.sentinel)
				return
			}
			require.True(t, IsPolicy(err), "want a PolicyError, got %T %v", err, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestExitCodeForStatus(t *testing.T) {
	t.Parallel()
	want := map[ReceiptStatus]int{
		StatusComplete:              0,
		StatusNeedsParentOperation:  0,
		StatusCancelled:             130,
		StatusMalformedOutput:       65,
		StatusUnavailableCLI:        69,
		StatusUnavailableModel:      69,
		StatusChildFailed:           70,
		StatusUsageExhausted:        75,
		StatusUnauthenticated:       77,
		StatusBillingPolicyBlocked:  78,
		StatusUnsupportedCapability: 79,
		StatusTimedOut:              124,
	}
	require.Len(t, ReceiptStatuses, 12)
	for _, s := range ReceiptStatuses {
		require.True(t, s.Valid())
		require.Equal(t, want[s], ExitCodeForStatus(s), "status %s", s)
	}
	require.Len(t, want, len(ReceiptStatuses))
	require.False(t, ReceiptStatus("succeeded").Valid())
	require.Equal(t, 70, ExitCodeForStatus("succeeded"))
}

func TestReceiptOutcomeTableIsTotal(t *testing.T) {
	t.Parallel()
	require.Len(t, receiptOutcome, len(ReceiptStatuses))
	for _, s := range ReceiptStatuses {
		o, ok := receiptOutcome[s]
		require.True(t, ok, "status %s", s)
		require.True(t, o.Valid(), "status %s", s)
	}
}
