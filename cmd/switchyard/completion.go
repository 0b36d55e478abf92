package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// addFlagCompletions registers shell completion for the options whose
// values are a fixed set: every --provider (a comma list: the last item
// is completed), every --parent, and status --state (a comma list).
func addFlagCompletions(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if f := c.Flags().Lookup("provider"); f != nil {
			_ = c.RegisterFlagCompletionFunc("provider", commaListCompletion(providerNames()))
		}
		if f := c.Flags().Lookup("parent"); f != nil {
			_ = c.RegisterFlagCompletionFunc("parent", cobra.FixedCompletions([]cobra.Completion{"claude", "codex"}, cobra.ShellCompDirectiveNoFileComp))
		}
		if c.Name() == "status" && c.HasParent() && !c.Parent().HasParent() {
			_ = c.RegisterFlagCompletionFunc("state", commaListCompletion(runStates))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// commaListCompletion completes the item after the last comma of a comma
// list with the choices not listed yet.
func commaListCompletion(choices []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		done, last := "", toComplete
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			done, last = toComplete[:i+1], toComplete[i+1:]
		}
		listed := strings.Split(done, ",")
		var out []cobra.Completion
		for _, c := range choices {
			if strings.HasPrefix(c, last) && !slices.Contains(listed, c) {
				out = append(out, done+c)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}
