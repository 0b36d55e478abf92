package main

import (
	"io"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
)

// TestEveryEngineCommandHasItsRole: every command that connects to the
// events names its role in commandRoles, and its flags know their
// command, so no command falls back to the reader role by omission (a
// writer would then fail on its first publish).
func TestEveryEngineCommandHasItsRole(t *testing.T) {
	root := newRootCmd(io.Discard, io.Discard)
	var walk func(c *cobra.Command)
	seen := 0
	walk = func(c *cobra.Command) {
		if c.Flags().Lookup("nats") != nil {
			seen++
			r := commandRole(c.CommandPath())
			_, listed := commandRoles[topCommand(c)]
			require.True(t, listed, "%s connects to the events but has no entry in commandRoles", c.CommandPath())
			require.Contains(t, events.Roles, r)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	require.Greater(t, seen, 10)
	require.Equal(t, events.RoleParent, commandRole("switchyard operation done"))
	require.Equal(t, events.RoleWorker, commandRole("switchyard worker"))
	require.Equal(t, events.RoleReader, commandRole("switchyard status"))
	require.Equal(t, events.RoleReader, commandRole("switchyard some-new-command"), "unknown commands only read")
}

// topCommand is the first word after the root of c's path.
func topCommand(c *cobra.Command) string {
	for c.HasParent() && c.Parent().HasParent() {
		c = c.Parent()
	}
	return c.Name()
}
