package main

import (
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// newRootCmd builds the `switchyard` command tree writing to stdout and
// stderr.
func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "switchyard",
		Short: "Durable lanes for AI coding-agent CLIs",
		Long: `Switchyard runs lanes of AI coding-agent CLIs (claude, codex, grok, devin,
cursor, antigravity, opencode) as durable state machines, deciding each
lane's next step from a frozen model sheet.

Exit codes: 0 success; 64 a usage error (a bad or missing option, an
unknown command); 65 a policy or input refusal; 1 an operational failure.
Each command's --help lists its own codes.`,
		Version:       version,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetVersionTemplate("switchyard {{.Version}}\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newPolicyCmd(stdout, stderr))
	root.AddCommand(newRunnerCmd(stdout, stderr))
	root.AddCommand(newRunCmd(stdout, stderr))
	root.AddCommand(newServeCmd(stdout, stderr))
	root.AddCommand(newConsoleURLCmd(stdout, stderr))
	worker := newWorkerCmd(stdout, stderr)
	worker.AddCommand(newWorkerIdentityCmd(stdout, stderr))
	root.AddCommand(worker)
	root.AddCommand(newStatusCmd(stdout, stderr))
	root.AddCommand(newReportCmd(stdout, stderr))
	root.AddCommand(newPruneCmd(stdout, stderr))
	root.AddCommand(newReplayCmd(stdout, stderr))
	root.AddCommand(newHistoryCmd(stdout, stderr))
	root.AddCommand(newLogsCmd(stdout, stderr))
	root.AddCommand(newInspectCmd(stdout, stderr))
	root.AddCommand(newCancelCmd(stdout, stderr))
	root.AddCommand(newNativeCmd(stdout, stderr))
	root.AddCommand(newOperationCmd(stdout, stderr))
	root.AddCommand(newContractCmd(stdout, stderr))
	root.AddCommand(newRecoverCmd(stdout, stderr))
	root.AddCommand(newUsageCmd(stdout, stderr))
	root.AddCommand(newWorkersCmd(stdout, stderr))
	root.AddCommand(newDoctorCmd(stdout, stderr))
	root.AddCommand(newModelsCmd(stdout, stderr))
	root.AddCommand(newSetupCmd(stdout, stderr))
	root.AddCommand(newAntigravityHookCmd(hookStdin, stdout, stderr))
	root.SetHelpCommand(newHelpCmd(stderr))
	strictCompletion(root, stderr)
	addFlagCompletions(root)
	fixClusterExamples(root)
	return root
}

// newHelpCmd is `switchyard help [command]`: cobra's own prints the root's
// usage and exits 0 for a topic it does not know; this one says which
// argument is not a command, lists the ones there are, and exits 64.
func newHelpCmd(stderr io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long: `Print the help of a command: switchyard help status is switchyard status --help.

Exit codes: 0 the help was printed; 64 no such command.`,
		Args: cobra.ArbitraryArgs,
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			cmd, _, err := c.Root().Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []cobra.Completion
			for _, sub := range cmd.Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
					out = append(out, cobra.CompletionWithDesc(sub.Name(), sub.Short))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err == nil && len(rest) == 0 {
				cmd.InitDefaultHelpFlag()
				cmd.InitDefaultVersionFlag()
				return cmd.Help()
			}
			// The deepest command the arguments name, whose subcommands
			// are the choices at the bad argument.
			parent, bad := c.Root(), args[0]
			for i, a := range args {
				next := findSub(parent, a)
				if next == nil {
					bad = args[i]
					break
				}
				parent = next
			}
			return reportCLIError(stderr, "switchyard help", usagef("no help topic %q: %s has the commands %s",
				bad, parent.CommandPath(), strings.Join(subNames(parent), ", ")))
		},
	}
}

// findSub is parent's visible subcommand called name (or aliased), or nil.
func findSub(parent *cobra.Command, name string) *cobra.Command {
	for _, sub := range parent.Commands() {
		if sub.IsAvailableCommand() && (sub.Name() == name || sub.HasAlias(name)) {
			return sub
		}
	}
	return nil
}

// subNames are the names of parent's visible subcommands.
func subNames(parent *cobra.Command) []string {
	var names []string
	for _, sub := range parent.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	return names
}

// completionExit is the exit-code paragraph of the completion commands.
const completionExit = `

Exit codes: 0 the script was printed; 64 usage error (no shell, or one
switchyard has no script for).`

// strictCompletion adds cobra's completion command now, so that
// "switchyard completion tcsh" (a shell it has no script for) is a usage
// error naming the shells there are, not its help and exit 0.
func strictCompletion(root *cobra.Command, stderr io.Writer) {
	root.InitDefaultCompletionCmd()
	comp := findSub(root, "completion")
	if comp == nil {
		return
	}
	comp.Long += strings.TrimPrefix(completionExit, "\n")
	for _, sub := range comp.Commands() {
		sub.Long += completionExit
	}
	comp.Args = cobra.ArbitraryArgs
	comp.RunE = func(c *cobra.Command, args []string) error {
		shells := strings.Join(subNames(c), ", ")
		if len(args) == 0 {
			return reportCLIError(stderr, c.CommandPath(), usagef("%s needs a shell: one of %s", c.CommandPath(), shells))
		}
		return reportCLIError(stderr, c.CommandPath(), usagef("no completion script for shell %q: want one of %s", args[0], shells))
	}
}
