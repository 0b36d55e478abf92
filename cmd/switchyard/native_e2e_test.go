package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestNativeNextSkipsCancelledLaneCLI: the parent cancels a native lane (or
// its whole run) with `switchyard cancel` from one process, while the run
// serves its data directory or after it stopped; `switchyard native next`
// from another process never hands the cancelled lane's job out.
func TestNativeNextSkipsCancelledLaneCLI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		lane     []string
		runStops bool // the run process stops before the cancel
	}{
		{"lane cancel while served", []string{"--lane", "0"}, false},
		{"run cancel while served", nil, false},
		{"lane cancel after the run stopped", []string{"--lane", "0"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newEngineSandbox(t, nil, nativeSheet)
			p := s.start(t, s.runArgs("how explorer", "--run-id", "cancelled")...)
			waitOutput(t, p, "waiting for the parent: switchyard native next --parent claude --data-dir "+s.data+"\n")
			if tc.runStops {
				p.stop(t)
			}
			args := append([]string{"cancel", "--run", "cancelled", "--reason", "superseded", "--data-dir", s.data}, tc.lane...)
			r := s.run(t, 30*time.Second, args...)
			require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			r = s.run(t, 30*time.Second, "native", "next", "--parent", "claude", "--data-dir", s.data, "--json")
			require.Equal(t, 0, r.code, r.stderr)
			var got map[string]any
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &got), r.stdout)
			require.Equal(t, "none", got["status"], "the cancelled lane's job was handed out: %s", r.stdout)
		})
	}
}
