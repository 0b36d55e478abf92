package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// FuzzParsePolicyFlags feeds arbitrary command lines (NUL-separated) to
// the `switchyard policy` option parser with the options of normalize, the
// command with the most. It proves: parsing never panics; a refusal is a
// *policy.UsageError; an accepted command line holds only known options,
// every required one, each value non-empty, not starting with "--" and
// exactly as given; the index options read back as non-negative integers
// or are refused as usage errors.
func FuzzParsePolicyFlags(f *testing.F) {
	specs := []flagSpec{optSheet, optRole, optParent, optLane, optAttempt, optReceipt, optMode, optContract}
	valid := strings.Join([]string{"--sheet", "s.sheet", "--role", "arena runners", "--parent", "claude",
		"--receipt", "/r.json", "--mode", "read-only"}, "\x00")
	for _, extra := range []string{"", "\x00--lane\x002", "\x00--attempt=01", "\x00--lane\x00-1", "\x00--lane\x00+1",
		"\x00--lane\x009999999999999999999999", "\x00--contract", "\x00-h", "\x00--", "\x00x", "\x00--sheet=t",
		"\x00--lane\x00--attempt\x000", "\x00--bogus"} {
		f.Add(valid + extra)
	}
	f.Add("")
	f.Add("--sheet=")
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\x00")
		vals, help, err := parsePolicyFlags(specs, args)
		if help {
			return
		}
		if err != nil {
			require.True(t, policy.IsUsage(err), "error %T %v", err, err)
			return
		}
		known := map[string]flagSpec{}
		for _, s := range specs {
			known[s.name] = s
		}
		for name, v := range vals {
			require.Contains(t, known, name)
			require.NotEmpty(t, v)
			require.False(t, strings.HasPrefix(v, "--"), "value %q", v)
			require.True(t, strings.Contains(line, v), "value %q is as given", v)
		}
		for _, s := range specs {
			if s.required {
				require.True(t, vals.has(s.name), "required --%s", s.name)
			}
		}
		for _, name := range []string{"lane", "attempt"} {
			n, err := vals.index(name, 0)
			if err != nil {
				require.True(t, policy.IsUsage(err))
				continue
			}
			require.GreaterOrEqual(t, n, 0)
		}
	})
}
