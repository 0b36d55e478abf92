package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// continuationSheet allows permission continuations of a single grok seat.
const continuationSheet = `# access: {"provider":"grok","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
# continuation: {"on":["permission"],"max":4}
swarm workers: grok:grok-4.7@xhigh
`

// execIdentity is execution n of the grok attempt with its paths under dir.
func execIdentity(dir string, n int) map[string]any {
	return map[string]any{
		"id":            fmt.Sprintf("exec-%d", n),
		"outputPath":    filepath.Join(dir, fmt.Sprintf("exec-%d", n), "output.md"),
		"receiptPath":   filepath.Join(dir, fmt.Sprintf("exec-%d", n), "receipt.json"),
		"workspacePath": filepath.Join(dir, fmt.Sprintf("wt-%d", n)),
		"descriptor":    "grok:grok-4.7@xhigh", "apiSpend": "deny", "access": "isolated-write", "contract": "legacy",
	}
}

// blockedEvent is execution n, permission-blocked on blockage blk,
// inspected clear, with execution n+1 prepared.
func blockedEvent(dir string, n int, blk string) map[string]any {
	return map[string]any{
		"attemptIndex": 0, "status": "permission-blocked", "processStarted": true, "deniedCause": "permission",
		"continuationOrdinal": n - 1,
		"inspection":          map[string]any{"state": "clear", "evidenceRef": "review/exec-" + fmt.Sprint(n) + ".md"},
		"execution":           execIdentity(dir, n),
		"recovery": map[string]any{
			"correction": "correction for " + blk, "blockageId": blk,
			"snapshotRef": fmt.Sprintf("refs/snapshots/%d", n), "snapshotDigest": "3b5d5c3712955042212316173ccf37be800000000000000000000000000000ab",
			"partialWorkRef": "partial.patch", "sideEffectsRef": "side-effects.md", "stoppedWritersRef": "stopped.json",
			"nextExecution": execIdentity(dir, n+1),
		},
	}
}

// TestPolicyNextContinuationOnDisk runs `policy next` against real files to
// pin section 4's continuation details: the prepared workspace must exist
// but need not be a directory; a history path that resolves (through a
// symlink) to a prepared path is reuse; only the execution immediately
// before may not repeat the blockage or correction.
func TestPolicyNextContinuationOnDisk(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// blockages names each execution's blockageId; the last execution is
		// the one to continue.
		blockages []string
		prepare   func(t *testing.T, dir string, next int)
		kind      string
		reason    string
		execution int
	}{
		{name: "prepared directory workspace continues", blockages: []string{"blk-1"}, kind: "continue", execution: 2,
			prepare: func(t *testing.T, dir string, next int) { mkdir(t, dir, fmt.Sprintf("wt-%d", next)) }},
		{name: "prepared workspace that is a file continues", blockages: []string{"blk-1"}, kind: "continue", execution: 2,
			prepare: func(t *testing.T, dir string, next int) {
				require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("wt-%d", next)), nil, 0o600))
			}},
		{name: "missing prepared workspace is missing-readiness", blockages: []string{"blk-1"}, kind: "policy-denied", reason: "missing-readiness",
			prepare: func(t *testing.T, dir string, next int) {}},
		{name: "prior workspace linking to the prepared one is reuse", blockages: []string{"blk-1"}, kind: "policy-denied", reason: "missing-readiness",
			prepare: func(t *testing.T, dir string, next int) {
				mkdir(t, dir, "wt-2")
				require.NoError(t, os.Remove(filepath.Join(dir, "wt-1")))
				require.NoError(t, os.Symlink(filepath.Join(dir, "wt-2"), filepath.Join(dir, "wt-1")))
			}},
		{name: "an older execution's blockage may repeat", blockages: []string{"blk-1", "blk-2", "blk-1"}, kind: "continue", execution: 4,
			prepare: func(t *testing.T, dir string, next int) { mkdir(t, dir, fmt.Sprintf("wt-%d", next)) }},
		{name: "the previous execution's blockage may not repeat", blockages: []string{"blk-1", "blk-2", "blk-2"}, kind: "policy-denied", reason: "missing-readiness",
			prepare: func(t *testing.T, dir string, next int) { mkdir(t, dir, fmt.Sprintf("wt-%d", next)) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			n := len(tc.blockages)
			var events []any
			for i, blk := range tc.blockages {
				events = append(events, blockedEvent(dir, i+1, blk))
				mkdir(t, dir, fmt.Sprintf("wt-%d", i+1))
				mkdir(t, dir, fmt.Sprintf("exec-%d", i+1))
				require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("exec-%d", i+1), "receipt.json"), []byte("{}"), 0o600))
			}
			mkdir(t, dir, fmt.Sprintf("exec-%d", n+1))
			tc.prepare(t, dir, n+1)
			state, err := json.Marshal(map[string]any{"events": events, "exhaustedGroups": []any{}, "access": "isolated-write"})
			require.NoError(t, err)
			statePath, sheetPath := filepath.Join(dir, "state.json"), filepath.Join(dir, "sheet")
			require.NoError(t, os.WriteFile(statePath, state, 0o600))
			require.NoError(t, os.WriteFile(sheetPath, []byte(continuationSheet), 0o600))

			res := runBinary(t, "policy", "next", "--sheet", sheetPath, "--role", "swarm workers", "--parent", "claude", "--state", statePath)
			require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
			var out struct {
				Decision map[string]any `json:"decision"`
			}
			require.NoError(t, json.Unmarshal([]byte(res.stdout), &out), res.stdout)
			require.Equal(t, tc.kind, out.Decision["kind"], res.stdout)
			if tc.kind == "continue" {
				require.EqualValues(t, tc.execution, out.Decision["execution"])
				prepared := out.Decision["preparedExecution"].(map[string]any)
				require.Equal(t, fmt.Sprintf("exec-%d", n+1), prepared["id"])
				return
			}
			require.Equal(t, map[string]any{"kind": tc.kind, "reason": tc.reason}, out.Decision)
		})
	}
}

func mkdir(t *testing.T, dir, name string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, name), 0o755))
}
