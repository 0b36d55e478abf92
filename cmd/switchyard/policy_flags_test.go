package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// TestParsePolicyFlags proves the option rules of the contract: values that
// start with "--" count as missing, unknown options and positional arguments
// are usage errors, and --help wins over everything.
func TestParsePolicyFlags(t *testing.T) {
	t.Parallel()
	specs := []flagSpec{optSheet, optRole, optLane}
	tests := []struct {
		name     string
		args     []string
		want     parsedFlags
		wantHelp bool
		wantErr  string
	}{
		{name: "all given", args: []string{"--sheet", "s", "--role", "r", "--lane", "2"}, want: parsedFlags{"sheet": "s", "role": "r", "lane": "2"}},
		{name: "optional omitted", args: []string{"--role", "r", "--sheet", "s"}, want: parsedFlags{"sheet": "s", "role": "r"}},
		{name: "inline value", args: []string{"--sheet=s", "--role=a b"}, want: parsedFlags{"sheet": "s", "role": "a b"}},
		{name: "single-dash value is a value", args: []string{"--sheet", "s", "--role", "-x"}, want: parsedFlags{"sheet": "s", "role": "-x"}},
		{name: "value starting with -- is missing", args: []string{"--sheet", "--role", "r"}, wantErr: "option --sheet needs a value"},
		{name: "inline value starting with -- is missing", args: []string{"--sheet=--x", "--role", "r"}, wantErr: "option --sheet needs a value"},
		// Section 4: --role "" is a value (a role no row has), not a missing one.
		{name: "empty value is a value", args: []string{"--sheet", "s", "--role", ""}, want: parsedFlags{"sheet": "s", "role": ""}},
		{name: "empty inline value is a value", args: []string{"--sheet", "s", "--role="}, want: parsedFlags{"sheet": "s", "role": ""}},
		{name: "trailing option without value", args: []string{"--role", "r", "--sheet"}, wantErr: "option --sheet needs a value"},
		{name: "required missing", args: []string{"--sheet", "s"}, wantErr: "missing required option --role"},
		{name: "unknown long option", args: []string{"--sheet", "s", "--role", "r", "--verbose"}, wantErr: "unknown option --verbose"},
		{name: "unknown short option", args: []string{"-v"}, wantErr: "unknown option -v"},
		{name: "positional", args: []string{"--sheet", "s", "--role", "r", "x"}, wantErr: `unexpected argument "x"`},
		{name: "double dash", args: []string{"--", "--sheet", "s"}, wantErr: `unexpected argument "--"`},
		{name: "repeated", args: []string{"--sheet", "s", "--sheet", "t", "--role", "r"}, wantErr: "option --sheet given more than once"},
		{name: "first error wins", args: []string{"--bogus", "x"}, wantErr: "unknown option --bogus"},
		{name: "help", args: []string{"--help"}, wantHelp: true},
		{name: "short help after errors", args: []string{"--bogus", "-h"}, wantHelp: true},
		{name: "help as a value is a value", args: []string{"--sheet", "s", "--role", "-h"}, want: parsedFlags{"sheet": "s", "role": "-h"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, help, err := parsePolicyFlags(specs, tt.args)
			require.Equal(t, tt.wantHelp, help)
			if tt.wantHelp {
				return
			}
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				require.True(t, policy.IsUsage(err), "want a usage error, got %T", err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestParsedFlagsIndex(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		val     string
		given   bool
		want    int
		wantErr bool
	}{
		{name: "default", want: 7},
		{name: "zero", val: "0", given: true, want: 0},
		{name: "decimal", val: "12", given: true, want: 12},
		{name: "negative", val: "-1", given: true, wantErr: true},
		{name: "plus sign", val: "+1", given: true, wantErr: true},
		{name: "not a number", val: "one", given: true, wantErr: true},
		{name: "float", val: "1.0", given: true, wantErr: true},
		{name: "overflow", val: "99999999999999999999", given: true, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := parsedFlags{}
			if tt.given {
				f["lane"] = tt.val
			}
			got, err := f.index("lane", 7)
			if tt.wantErr {
				require.Error(t, err)
				require.True(t, policy.IsUsage(err))
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}
