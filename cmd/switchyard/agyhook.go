package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/providers"
)

// newAntigravityHookCmd is the fixed approval hook an Antigravity writer's
// .agents/hooks.json runs before every command, task and file-edit call.
// It is internal (hidden): the runner writes its invocation into the
// attempt's control directory; people never run it.
func newAntigravityHookCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var control string
	cmd := &cobra.Command{
		Use:    "antigravity-hook --control DIR",
		Short:  "Internal: the approval hook of an Antigravity writer attempt",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if control == "" || !filepath.IsAbs(control) || filepath.Clean(control) != control {
				fmt.Fprintln(stderr, "error: antigravity-hook needs --control with the attempt's absolute control directory")
				fmt.Fprintln(stdout, `{"decision":"deny","reason":"switchyard approval hook: hook_failure"}`)
				return &exitError{code: exitUsage}
			}
			out, code := providers.RunAntigravityHook(control, stdin)
			_, _ = stdout.Write(out)
			if code != 0 {
				return &exitError{code: code}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&control, "control", "", "the attempt's control directory (absolute)")
	return cmd
}

// hookStdin is the hook's input: the process's stdin.
var hookStdin io.Reader = os.Stdin
