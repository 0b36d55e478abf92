package providers

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// TestWriterToolsMatchTheConfiguration: the writer guidance a spec gives
// the worker contract agrees with what its configuration grants, so the
// prompt never asks for a denied tool.
func TestWriterToolsMatchTheConfiguration(t *testing.T) {
	t.Parallel()
	t.Run("opencode writers get the sandboxed shell, read-only lanes none", func(t *testing.T) {
		t.Parallel()
		shell := func(mode policy.Access) (v1, v2 any) {
			perm := openCodeV1Permission(mode)
			i := slices.IndexFunc(perm, func(m jsonMember) bool { return m.Key == "bash" })
			require.GreaterOrEqual(t, i, 0)
			rules := openCodeV2Permissions(mode)
			j := slices.IndexFunc(rules, func(r jsonObject) bool { return r.mustGet("action") == "shell" })
			require.GreaterOrEqual(t, j, 0)
			return perm[i].Value, rules[j].mustGet("effect")
		}
		v1, v2 := shell(policy.IsolatedWrite)
		require.Equal(t, []any{"allow", "allow"}, []any{v1, v2})
		v1, v2 = shell(policy.ReadOnly)
		require.Equal(t, []any{"deny", "deny"}, []any{v1, v2})
		require.True(t, mustLookup(t, policy.OpenCode).Writer.Shell)
		require.Contains(t, mustLookup(t, policy.OpenCode).Writer.Guidance, "sandbox")
	})
	t.Run("antigravity grants sandboxed run_command and manage_task", func(t *testing.T) {
		t.Parallel()
		tools := antigravityTools(policy.IsolatedWrite)
		for _, tool := range tools {
			require.Contains(t, mustLookup(t, policy.Antigravity).Writer.Guidance, tool, "the guidance names every granted tool")
		}
		require.Contains(t, tools, "run_command")
		require.Contains(t, tools, "manage_task")
		require.Contains(t, string(antigravityAgent(contractRequest(policy.Antigravity, policy.IsolatedWrite, policy.APISpendApproved))),
			"commandExecutionPolicy: sandbox", "commands run under the native sandbox policy")
		require.True(t, mustLookup(t, policy.Antigravity).Writer.Shell)
		require.NotContains(t, antigravityTools(policy.ReadOnly), "run_command", "read-only lanes get no command tool")
	})
	t.Run("gemini auto_edit approves edits only", func(t *testing.T) {
		t.Parallel()
		cmd, err := mustLookup(t, policy.Gemini).Invocation(contractRequest(policy.Gemini, policy.IsolatedWrite, policy.APISpendApproved))
		require.NoError(t, err)
		require.Contains(t, strings.Join(cmd.Argv, " "), "--approval-mode auto_edit")
		require.False(t, mustLookup(t, policy.Gemini).Writer.Shell)
	})
	t.Run("claude's writer keeps a sandboxed Bash", func(t *testing.T) {
		t.Parallel()
		cmd, err := mustLookup(t, policy.Claude).Invocation(contractRequest(policy.Claude, policy.IsolatedWrite, policy.APISpendApproved))
		require.NoError(t, err)
		require.Contains(t, cmd.Argv, "Read,Write,Edit,Grep,Glob,Bash")
		require.True(t, mustLookup(t, policy.Claude).Writer.Shell)
	})
	for _, p := range Names() {
		g := mustLookup(t, p).Writer.Guidance
		if !mustLookup(t, p).Writer.Shell {
			for _, s := range []string{"run checks", "shell to", "sandboxed shell", "sandboxed commands"} {
				require.NotContains(t, g, s, "%s grants no shell", p)
			}
		}
	}
}
