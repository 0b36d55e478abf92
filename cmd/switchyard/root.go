package main

import (
	"io"

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
	root.AddCommand(newWorkerCmd(stdout, stderr))
	root.AddCommand(newStatusCmd(stdout, stderr))
	root.AddCommand(newReportCmd(stdout, stderr))
	root.AddCommand(newPruneCmd(stdout, stderr))
	root.AddCommand(newReplayCmd(stdout, stderr))
	root.AddCommand(newHistoryCmd(stdout, stderr))
	root.AddCommand(newInspectCmd(stdout, stderr))
	root.AddCommand(newCancelCmd(stdout, stderr))
	root.AddCommand(newNativeCmd(stdout, stderr))
	root.AddCommand(newOperationCmd(stdout, stderr))
	root.AddCommand(newContractCmd(stdout, stderr))
	root.AddCommand(newRecoverCmd(stdout, stderr))
	root.AddCommand(newUsageCmd(stdout, stderr))
	root.AddCommand(newDoctorCmd(stdout, stderr))
	root.AddCommand(newModelsCmd(stdout, stderr))
	root.AddCommand(newSetupCmd(stdout, stderr))
	root.AddCommand(newAntigravityHookCmd(hookStdin, stdout, stderr))
	return root
}
