package contract

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

func TestInterpretVerdicts(t *testing.T) {
	t.Parallel()
	v := Interpret([]byte("Done: fixed the parser; go test ./... passed.\n"))
	require.Equal(t, Verdict{Verdict: "complete"}, v)

	v = Interpret(handoffResponse("T-1", "C-1", "commit-checkpoint", `["src/a.txt"]`, `["unit"]`))
	require.Equal(t, "needs-parent-operation", v.Verdict)
	require.Equal(t, &policy.ReceiptHandoff{Task: "T-1", Checkpoint: "C-1", Operation: policy.OpCommitCheckpoint,
		Files: []string{"src/a.txt"}, Checks: []string{"unit"}, Summary: "commit the parser fix"}, v.Handoff)
	require.Empty(t, v.Error)

	good := string(handoffResponse("T-1", "C-1", "commit-checkpoint", `["src/a.txt"]`, `[]`))
	for name, resp := range map[string]string{
		"empty":     "",
		"truncated": "text\n```pstack-handoff\n{\"task\":\"T-1\"",
		"repeated":  good + good,
		"malformed": "text\n```pstack-handoff\n{\"task\":\"T-1\",\"checkpoint\":\"C\",\"operation\":\"push\",\"files\":[],\"checks\":[],\"summary\":\"s\"}\n```\n",
		"trailing":  good + "and one more thing\n",
		"unknown":   "text\n```pstack-handoff\n{\"task\":\"T\",\"checkpoint\":\"C\",\"operation\":\"run-checks\",\"files\":[],\"checks\":[\"u\"],\"summary\":\"s\",\"shell\":\"rm -rf /\"}\n```\n",
	} {
		v := Interpret([]byte(resp))
		require.Equal(t, "malformed-output", v.Verdict, name)
		require.Nil(t, v.Handoff, name)
		require.NotEmpty(t, v.Error, name)
	}
}
