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
