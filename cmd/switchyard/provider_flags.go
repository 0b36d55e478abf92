package main

import (
	"slices"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// parseProviderList parses the values of a repeatable provider flag, each
// one provider or a comma list, refusing any name outside known (a usage
// error naming the valid ones). Repeats are folded; the result is in
// known's order, empty when the values name none.
func parseProviderList(flag string, vals []string, known []string) ([]policy.Provider, error) {
	seen := map[string]bool{}
	for _, v := range vals {
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			if !slices.Contains(known, name) {
				return nil, usagef("%s %q: unknown provider; want one or more of %s", flag, name, strings.Join(known, ", "))
			}
			seen[name] = true
		}
	}
	var out []policy.Provider
	for _, n := range known {
		if seen[n] {
			out = append(out, policy.Provider(n))
		}
	}
	return out, nil
}

// parseSheetProviders parses a repeatable provider-list flag among the
// providers a sheet may name (gemini is receipt-only: no lane launches it,
// so there is nothing to override for it), refusing values that name none.
func parseSheetProviders(flag string, vals []string) ([]policy.Provider, error) {
	known := make([]string, len(policy.Providers))
	for i, p := range policy.Providers {
		known[i] = string(p)
	}
	out, err := parseProviderList(flag, vals, known)
	if err == nil && len(vals) > 0 && len(out) == 0 {
		return nil, usagef("%s names no provider; for example %s codex", flag, flag)
	}
	return out, err
}
