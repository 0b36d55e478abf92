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
	t.Run("opencode denies bash", func(t *testing.T) {
		t.Parallel()
		perm := openCodePermission(policy.IsolatedWrite)
		i := slices.IndexFunc(perm, func(m jsonMember) bool { return m.Key == "bash" })
		require.GreaterOrEqual(t, i, 0)
		require.Equal(t, "deny", perm[i].Value)
		require.False(t, mustLookup(t, policy.OpenCode).Writer.Shell)
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
