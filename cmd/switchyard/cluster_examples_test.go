package main

import (
	"bytes"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
)

// TestClusterExamplesRun (issue 28, findings 5 and 30): the cluster
// example in every command's help names that command by its full path,
// carries the options the command requires, and the NATS user of the role
// the command connects as. Each context example is run: it must get past
// option parsing to the context lookup (no such context here), so a
// missing required option or an unknown command fails the test.
func TestClusterExamplesRun(t *testing.T) {
	t.Parallel()
	root := newRootCmd(io.Discard, io.Discard)
	home := t.TempDir()
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		_, block, ok := strings.Cut(c.Example, clusterExampleMarker)
		if !ok {
			return
		}
		n++
		path := c.CommandPath()
		require.Contains(t, block, "NATS_USER=switchyard-"+string(commandRole(path))+" NATS_PASSWORD=... "+path+" ", path)
		_, ctxExample, ok := strings.Cut(block, "nats context save prod ...):\n")
		require.True(t, ok, "%s: no context example:\n%s", path, block)
		line := strings.ReplaceAll(ctxExample, "\\\n", " ")
		args := splitWords(strings.TrimSpace(line))
		require.Equal(t, strings.Fields(path), args[:len(strings.Fields(path))], "%s: context example runs another command: %s", path, line)
		require.Equal(t, "prod", args[len(args)-1], line)

		cmd := exec.Command(binPath, args[1:]...)
		cmd.Dir = t.TempDir()
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "config")}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		_ = cmd.Run()
		require.Contains(t, stderr.String(), "context", "%s: %s\n%s", path, line, stderr.String())
		require.Contains(t, stderr.String(), "prod", "%s: %s\n%s", path, line, stderr.String())
		require.NotContains(t, stderr.String(), "missing required", "%s: %s", path, line)
		require.NotContains(t, stderr.String(), "unknown command", "%s: %s", path, line)
	}
	walk(root)
	require.Greater(t, n, 15, "cluster examples found")
}
