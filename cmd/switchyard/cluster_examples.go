package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// clusterExampleMarker starts the cluster example addNATSFlags appends to
// a command's help.
const clusterExampleMarker = "  # Against a NATS cluster with TLS, as the role's user"

// fixClusterExamples rewrites, once the tree is built, the cluster example
// of every command that has one: from the command's own first example, so
// it names the command by its full path (operation validate, not
// "validate") with the options that command requires, and the NATS user of
// the role that command connects as.
func fixClusterExamples(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		own, _, ok := strings.Cut(c.Example, clusterExampleMarker)
		if !ok {
			return
		}
		first := firstExample(own, c.CommandPath())
		role := string(commandRole(c.CommandPath()))
		indented := strings.Join(first, "\n")
		c.Example = own + clusterExampleMarker + ` (docs/DEPLOY.md); the
  # password comes from NATS_PASSWORD (or pass --creds FILE, --nkey FILE):
  NATS_USER=switchyard-` + role + ` NATS_PASSWORD=... ` + strings.TrimPrefix(indented, "  ") + ` \
    --nats tls://n1:4222,tls://n2:4222 --tls-ca ca.pem

  # The same through a nats CLI context (nats context save prod ...):
` + indented + ` --context prod`
	}
	walk(root)
}

// firstExample returns the lines of the first example in examples that
// runs path (continuation lines included), without a --data-dir option
// (the cluster is where the data lives), or path alone when there is none.
func firstExample(examples, path string) []string {
	lines := strings.Split(examples, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), path+" ") && strings.TrimSpace(l) != path {
			continue
		}
		var out []string
		for j := i; j < len(lines); j++ {
			out = append(out, dropDataDir(lines[j]))
			if !strings.HasSuffix(strings.TrimSpace(lines[j]), `\`) {
				break
			}
		}
		return out
	}
	return []string{"  " + path}
}

// dropDataDir removes a "--data-dir VALUE" pair from an example line.
func dropDataDir(l string) string {
	f := strings.Split(l, " ")
	for i := 0; i < len(f); i++ {
		if f[i] == "--data-dir" && i+1 < len(f) {
			f = append(f[:i], f[i+2:]...)
			i--
		}
	}
	return strings.Join(f, " ")
}
