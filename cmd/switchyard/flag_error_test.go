package main

import (
	"errors"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
)

// TestFlagErrorHouseForm: a bad option value, parsed by pflag, comes back
// as a usage error naming the long option, the value exactly as typed
// (quoted once) and what the option wants; other parse errors keep pflag's
// words. The engine command goldens pin the same form end to end.
func TestFlagErrorHouseForm(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"duration", []string{"--timeout", "soon"}, `--timeout "soon": want a duration such as 90s, 20m or 1h30m`},
		{"int by shorthand", []string{"-c", "many"}, `--concurrency "many": want a whole number`},
		{"int with equals", []string{"--concurrency=1.5"}, `--concurrency "1.5": want a whole number`},
		{"bool", []string{"--json=maybe"}, `--json "maybe": want true or false`},
		{"other type", []string{"--ratio", "half"}, `--ratio "half": want a valid value`},
		{"value quoted once", []string{"--concurrency", `a"b`}, `--concurrency "a\"b": want a whole number`},
		{"unknown option", []string{"--bogus"}, "unknown flag: --bogus"},
		{"missing value", []string{"--timeout"}, "flag needs an argument: --timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmd := &cobra.Command{Use: "x"}
			cmd.Flags().Duration("timeout", 0, "")
			cmd.Flags().IntP("concurrency", "c", 1, "")
			cmd.Flags().Bool("json", false, "")
			cmd.Flags().Float64("ratio", 0, "")
			perr := cmd.ParseFlags(tc.args)
			require.Error(t, perr)
			err := flagError(perr)
			var ce *cliError
			require.True(t, errors.As(err, &ce), "%T", err)
			require.Equal(t, exitUsage, ce.code)
			require.Equal(t, tc.want, ce.msg)
		})
	}
}
