package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Fixture paths, relative to the repository root where the binary runs.
const (
	panelSheet   = "testdata/sheets/panel.sheet"
	legacySheet  = "testdata/sheets/legacy.sheet"
	partialSheet = "cmd/switchyard/testdata/sheets/partial.sheet"
	invalidSheet = "cmd/switchyard/testdata/sheets/invalid.sheet"
	emptyState   = "testdata/states/empty.json"
	receiptsDir  = "policy/testdata/receipts"
	statesDir    = "cmd/switchyard/testdata/states"

	unauthorizedSheet      = "cmd/switchyard/testdata/sheets/unauthorized.sheet"
	strictSheet            = "cmd/switchyard/testdata/sheets/strict.sheet"
	legacyAntigravitySheet = "cmd/switchyard/testdata/sheets/legacy-antigravity.sheet"
)

// cliCase is one golden run of the binary. "$TMP" in args is replaced with
// a fresh temporary directory that setup may fill.
type cliCase struct {
	name  string
	args  []string
	setup func(t *testing.T, tmp string)
}

// next builds `policy next` args on the panel sheet for the swarm workers
// role, followed by extra.
func nextArgs(state string, extra ...string) []string {
	return append([]string{"policy", "next", "--sheet", panelSheet, "--role", "swarm workers",
		"--parent", "claude", "--state", state}, extra...)
}

// normalizeArgs builds `policy normalize` args for the codex seat of arena
// runners (lane 1, attempt 0), which the receipts in policy/testdata match.
func normalizeArgs(receipt string, extra ...string) []string {
	return append([]string{"policy", "normalize", "--sheet", panelSheet, "--role", "arena runners",
		"--parent", "claude", "--lane", "1", "--attempt", "0", "--receipt", receipt}, extra...)
}

// schema2Receipt copies a schema-2 receipt fixture into tmp/receipt.json,
// moving its run paths into tmp so that receiptPath names the file.
func schema2Receipt(name string) func(t *testing.T, tmp string) {
	return func(t *testing.T, tmp string) {
		src, err := os.ReadFile(filepath.Join(repoRoot, receiptsDir, name))
		require.NoError(t, err)
		out := strings.ReplaceAll(string(src), "/srv/switchyard/runs/run-7/lane-1", tmp)
		require.NoError(t, os.WriteFile(filepath.Join(tmp, "receipt.json"), []byte(out), 0o600))
	}
}

// editedReceipt writes the receipt fixture name to tmp/receipt.json after
// moving its run paths into tmp (as schema2Receipt does) and applying edit
// to its top-level object; a nil value in set deletes the key.
func editedReceipt(name string, set map[string]any) func(t *testing.T, tmp string) {
	return func(t *testing.T, tmp string) {
		src, err := os.ReadFile(filepath.Join(repoRoot, receiptsDir, name))
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(strings.ReplaceAll(string(src), "/srv/switchyard/runs/run-7/lane-1", tmp)), &m))
		for k, v := range set {
			if v == nil {
				delete(m, k)
				continue
			}
			if sub, ok := v.(map[string]any); ok && m[k] != nil {
				// Edit one level down: {"handoff": {"summary": nil}}.
				inner := m[k].(map[string]any)
				for ik, iv := range sub {
					if iv == nil {
						delete(inner, ik)
					} else {
						inner[ik] = iv
					}
				}
				continue
			}
			m[k] = v
		}
		out, err := json.MarshalIndent(m, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(tmp, "receipt.json"), out, 0o600))
	}
}

// oversized makes tmp/name one byte over the input limit (sparse, so cheap).
func oversized(name string) func(t *testing.T, tmp string) {
	return func(t *testing.T, tmp string) {
		f, err := os.Create(filepath.Join(tmp, name))
		require.NoError(t, err)
		require.NoError(t, f.Truncate(maxInputBytes+1))
		require.NoError(t, f.Close())
	}
}

func TestCLIGolden(t *testing.T) {
	t.Parallel()
	cases := []cliCase{
		// The root command and `policy` itself.
		{name: "root-no-args", args: []string{}},
		{name: "root-version", args: []string{"--version"}},
		{name: "root-unknown-command", args: []string{"bogus"}},
		{name: "policy-no-command", args: []string{"policy"}},
		{name: "policy-help", args: []string{"policy", "--help"}},
		{name: "policy-h", args: []string{"policy", "-h"}},
		{name: "policy-unknown-command", args: []string{"policy", "bogus"}},

		// validate
		{name: "validate-ok-claude", args: []string{"policy", "validate", "--sheet", panelSheet, "--parent", "claude"}},
		{name: "validate-ok-codex", args: []string{"policy", "validate", "--sheet", panelSheet, "--parent", "codex"}},
		{name: "validate-invalid-legacy", args: []string{"policy", "validate", "--sheet", legacySheet, "--parent", "claude"}},
		{name: "validate-invalid-grammar", args: []string{"policy", "validate", "--sheet", invalidSheet, "--parent", "claude"}},
		{name: "validate-missing-sheet", args: []string{"policy", "validate", "--sheet", "missing.sheet", "--parent", "claude"}},
		{name: "validate-help", args: []string{"policy", "validate", "--help"}},
		// Section 4: authorization wording after "<seat id>: <descriptor> is
		// not authorized: "; indented headers and comments, auto on
		// OpenCode/Antigravity and a string max are invalid.
		{name: "validate-unauthorized-wording", args: []string{"policy", "validate", "--sheet", unauthorizedSheet, "--parent", "claude"}},
		{name: "validate-strict-grammar", args: []string{"policy", "validate", "--sheet", strictSheet, "--parent", "claude"}},

		// resolve
		{name: "resolve-resolved", args: []string{"policy", "resolve", "--sheet", panelSheet, "--role", "swarm workers", "--parent", "claude"}},
		{name: "resolve-resolved-codex-native", args: []string{"policy", "resolve", "--sheet", panelSheet, "--role", "swarm workers", "--parent", "codex"}},
		{name: "resolve-leaf-judgment", args: []string{"policy", "resolve", "--sheet", panelSheet, "--role", "judgment", "--parent", "claude"}},
		{name: "resolve-legacy-unset-funding", args: []string{"policy", "resolve", "--sheet", legacySheet, "--role", "how explorer", "--parent", "claude"}},
		{name: "resolve-unconfigured-missing-sheet", args: []string{"policy", "resolve", "--sheet", "missing.sheet", "--role", "bug-fix", "--parent", "codex"}},
		{name: "resolve-unconfigured-legacy", args: []string{"policy", "resolve", "--sheet", legacySheet, "--role", "bug-fix", "--parent", "codex"}},
		{name: "resolve-policy-enabled-missing-role", args: []string{"policy", "resolve", "--sheet", partialSheet, "--role", "bug-fix", "--parent", "claude"}},
		{name: "resolve-directory-sheet", args: []string{"policy", "resolve", "--sheet", "testdata/sheets", "--role", "bug-fix", "--parent", "claude"}},
		{name: "resolve-ambiguous-synthesizer", args: []string{"policy", "resolve", "--sheet", panelSheet, "--role", "synthesizer", "--parent", "claude"}},
		{name: "resolve-invalid-sheet", args: []string{"policy", "resolve", "--sheet", invalidSheet, "--role", "how explorer", "--parent", "claude"}},
		{name: "resolve-sheet-too-large", args: []string{"policy", "resolve", "--sheet", "$TMP/huge.sheet", "--role", "bug-fix", "--parent", "claude"}, setup: oversized("huge.sheet")},
		{name: "resolve-help", args: []string{"policy", "resolve", "-h"}},
		// Section 4: --role "" on a legacy sheet is unconfigured; blocked
		// attempts carry the reference's reasons.
		{name: "resolve-empty-role-legacy", args: []string{"policy", "resolve", "--sheet", legacySheet, "--role", "", "--parent", "claude"}},
		{name: "resolve-blocked-reasons", args: []string{"policy", "resolve", "--sheet", unauthorizedSheet, "--role", "swarm workers", "--parent", "claude"}},

		// next: decisions
		{name: "next-launch-empty", args: nextArgs(emptyState, "--lane", "0")},
		{name: "next-lane-defaults-to-0", args: nextArgs(emptyState)},
		{name: "next-launch-second-lane", args: nextArgs(emptyState, "--lane", "1")},
		{name: "next-launch-skips-exhausted", args: nextArgs("testdata/states/grok-exhausted.json")},
		{name: "next-inspect-started-writer", args: nextArgs("testdata/states/writer-started.json")},
		{name: "next-launch-after-clear-inspection", args: nextArgs("testdata/states/writer-cleared.json")},
		{name: "next-stop-unsafe-writer", args: nextArgs("testdata/states/writer-unsafe.json")},
		{name: "next-stop-complete", args: nextArgs("testdata/states/complete.json")},
		{name: "next-stop-not-eligible", args: nextArgs("testdata/states/failed.json")},
		{name: "next-stop-chain-exhausted", args: nextArgs("testdata/states/chain-exhausted.json")},
		{name: "next-parent-operation", args: nextArgs("testdata/states/handoff.json")},
		{name: "next-policy-denied-no-continuation", args: nextArgs("testdata/states/handoff-done.json")},
		// next: section 4 gate order and decision shapes
		{name: "next-permission-unsafe-stops-before-cause", args: nextArgs(statesDir + "/permission-unsafe.json")},
		{name: "next-permission-started-writer-inspects", args: nextArgs(statesDir + "/permission-started-writer.json")},
		{name: "next-handoff-identity-mismatch-over-unsafe", args: nextArgs(statesDir + "/handoff-identity-mismatch.json")},
		{name: "next-handoff-started-writer-inspects", args: nextArgs(statesDir + "/handoff-started-writer.json")},
		// next: section 4 state validation (exit 64, nothing on stdout)
		{name: "next-state-empty-evidence-ref", args: nextArgs(statesDir + "/empty-evidence-ref.json")},
		{name: "next-state-empty-handoff-task", args: nextArgs(statesDir + "/empty-handoff-task.json")},
		{name: "next-state-invalid-execution", args: nextArgs(statesDir + "/invalid-execution.json")},
		{name: "next-state-invalid-next-execution", args: nextArgs(statesDir + "/invalid-next-execution.json")},
		{name: "next-state-recovery-incomplete", args: nextArgs(statesDir + "/recovery-incomplete.json")},
		{name: "next-history-uninspected-writer-handoff-answered", args: nextArgs(statesDir + "/handoff-writer-answered.json")},
		{name: "next-unconfigured-missing-sheet", args: []string{"policy", "next", "--sheet", "missing.sheet", "--role", "bug-fix", "--parent", "claude", "--state", emptyState}},
		{name: "next-unconfigured-legacy", args: []string{"policy", "next", "--sheet", legacySheet, "--role", "bug-fix", "--parent", "claude", "--state", emptyState}},
		// next: errors
		{name: "next-state-error-wins-over-missing-sheet", args: []string{"policy", "next", "--sheet", "missing.sheet", "--role", "bug-fix", "--parent", "claude", "--state", "cmd/switchyard/testdata/states/unknown-key.json"}},
		{name: "next-missing-state-file", args: nextArgs("missing.json")},
		{name: "next-state-too-large", args: nextArgs("$TMP/huge.json"), setup: oversized("huge.json")},
		{name: "next-history-out-of-range", args: nextArgs("cmd/switchyard/testdata/states/attempt-out-of-range.json")},
		{name: "next-lane-out-of-range", args: nextArgs(emptyState, "--lane", "2")},
		{name: "next-lane-not-an-integer", args: nextArgs(emptyState, "--lane", "-1")},
		{name: "next-bad-parent", args: []string{"policy", "next", "--sheet", panelSheet, "--role", "swarm workers", "--parent", "grok", "--state", emptyState}},
		{name: "next-flag-value-starting-with-dashes", args: []string{"policy", "next", "--sheet", "--role", "swarm workers", "--parent", "claude", "--state", emptyState}},
		{name: "next-unknown-flag", args: nextArgs(emptyState, "--verbose")},
		{name: "next-positional-argument", args: nextArgs(emptyState, "extra")},
		{name: "next-missing-required-option", args: []string{"policy", "next", "--sheet", panelSheet, "--role", "swarm workers", "--parent", "claude"}},
		{name: "next-repeated-option", args: nextArgs(emptyState, "--lane", "0", "--lane", "1")},
		{name: "next-help-wins-over-errors", args: []string{"policy", "next", "--bogus", "--help"}},

		// normalize
		{name: "normalize-complete-v1", args: normalizeArgs(receiptsDir+"/complete-v1.json", "--mode", "isolated-write")},
		{name: "normalize-complete-v2", args: normalizeArgs("$TMP/receipt.json", "--mode", "isolated-write", "--contract", "legacy"), setup: schema2Receipt("complete-v2.json")},
		{name: "normalize-usage-exhausted-v2", args: normalizeArgs("$TMP/receipt.json", "--mode", "isolated-write"), setup: schema2Receipt("usage-exhausted-v2.json")},
		{name: "normalize-child-failed-v2", args: normalizeArgs("$TMP/receipt.json", "--mode", "isolated-write"), setup: schema2Receipt("child-failed-v2.json")},
		{name: "normalize-needs-parent-operation-v2", args: normalizeArgs("$TMP/receipt.json", "--mode", "isolated-write"), setup: schema2Receipt("needs-parent-operation-v2.json")},
		{name: "normalize-mode-mismatch", args: normalizeArgs(receiptsDir+"/complete-v1.json", "--mode", "read-only")},
		{name: "normalize-contract-mismatch", args: normalizeArgs(receiptsDir+"/complete-v1.json", "--mode", "isolated-write", "--contract", "strict")},
		{name: "normalize-wrong-attempt", args: []string{"policy", "normalize", "--sheet", panelSheet, "--role", "arena runners", "--parent", "claude", "--lane", "2", "--receipt", receiptsDir + "/complete-v1.json", "--mode", "isolated-write"}},
		{name: "normalize-native-refused", args: []string{"policy", "normalize", "--sheet", panelSheet, "--role", "swarm workers", "--parent", "claude", "--attempt", "1", "--receipt", receiptsDir + "/complete-v1.json", "--mode", "read-only"}},
		{name: "normalize-attempt-out-of-range", args: []string{"policy", "normalize", "--sheet", panelSheet, "--role", "arena runners", "--parent", "claude", "--lane", "1", "--attempt", "1", "--receipt", receiptsDir + "/complete-v1.json", "--mode", "isolated-write"}},
		{name: "normalize-bad-mode", args: normalizeArgs(receiptsDir+"/complete-v1.json", "--mode", "write")},
		{name: "normalize-bad-contract", args: normalizeArgs(receiptsDir+"/complete-v1.json", "--mode", "isolated-write", "--contract", "loose")},
		{name: "normalize-missing-receipt", args: normalizeArgs("missing.json", "--mode", "isolated-write")},
		{name: "normalize-receipt-too-large", args: normalizeArgs("$TMP/huge.json", "--mode", "isolated-write"), setup: oversized("huge.json")},
		{name: "normalize-unconfigured-role", args: []string{"policy", "normalize", "--sheet", legacySheet, "--role", "bug-fix", "--parent", "claude", "--receipt", receiptsDir + "/complete-v1.json", "--mode", "read-only"}},
		{name: "normalize-help", args: []string{"policy", "normalize", "--help"}},
		// normalize: section 4
		{name: "normalize-unconfigured-missing-sheet", args: []string{"policy", "normalize", "--sheet", "missing.sheet", "--role", "bug-fix", "--parent", "claude", "--receipt", "missing.json", "--mode", "read-only"}},
		{name: "normalize-relative-receipt-kept", args: normalizeArgs("./"+receiptsDir+"/../receipts/complete-v1.json", "--mode", "isolated-write")},
		{name: "normalize-v2-optional-fields-absent", args: normalizeArgs("$TMP/receipt.json", "--mode", "isolated-write"),
			setup: editedReceipt("complete-v2.json", map[string]any{"processStarted": nil, "contract": nil, "timeoutMs": nil})},
		{name: "normalize-v2-handoff-without-summary", args: normalizeArgs("$TMP/receipt.json", "--mode", "isolated-write"),
			setup: editedReceipt("needs-parent-operation-v2.json", map[string]any{"handoff": map[string]any{"summary": nil}})},
		{name: "normalize-legacy-antigravity", args: []string{"policy", "normalize", "--sheet", legacyAntigravitySheet, "--role", "how explorer", "--parent", "claude",
			"--receipt", "$TMP/receipt.json", "--mode", "isolated-write"},
			setup: editedReceipt("complete-v1.json", map[string]any{"provider": "antigravity", "model": "gemini-3.1-pro", "effort": "default", "apiSpend": nil})},
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		require.False(t, seen[tc.name], "duplicate case %s", tc.name)
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tmp := ""
			args := tc.args
			if tc.setup != nil || strings.Contains(strings.Join(args, "\x00"), "$TMP") {
				tmp = t.TempDir()
				if tc.setup != nil {
					tc.setup(t, tmp)
				}
				args = make([]string, len(tc.args))
				for i, a := range tc.args {
					args[i] = strings.ReplaceAll(a, "$TMP", tmp)
				}
			}
			res := runBinary(t, args...)
			checkGolden(t, tc.name, res.render(args, tmp))
		})
	}
}

// TestGoldenFilesHaveCases fails on golden files no case writes any more,
// so renamed cases do not leave stale expectations behind.
func TestGoldenFilesHaveCases(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.golden"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	src, err := os.ReadFile("policy_cli_test.go")
	require.NoError(t, err)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".golden")
		require.Contains(t, string(src), `name: "`+name+`"`, "golden file %s has no test case", f)
	}
}
