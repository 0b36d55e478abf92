package main

import (
	"fmt"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// guardFix is the fix line of a billing-guard problem. The guard names
// environment variables (unset them) and routes that are not variables,
// such as OpenCode's native authentication, which only an approved API
// spend lets run: telling a user to "unset" one would name nothing they
// can unset.
func guardFix(p policy.Provider, blocked []string) string {
	var vars, routes []string
	for _, b := range blocked {
		if isEnvName(b) {
			vars = append(vars, b)
		} else {
			routes = append(routes, b)
		}
	}
	approve := fmt.Sprintf("approve API spend for %s in the sheet (apiSpend \"approved\")", p)
	switch {
	case len(routes) == 0:
		return fmt.Sprintf("unset %s in the environment that launches %s, or %s", strings.Join(vars, ", "), p, approve)
	case len(vars) == 0:
		return fmt.Sprintf("%s: %s never runs under apiSpend \"deny\"", approve, strings.Join(routes, ", "))
	default:
		return fmt.Sprintf("unset %s in the environment that launches %s, and %s: %s never runs under apiSpend \"deny\"",
			strings.Join(vars, ", "), p, approve, strings.Join(routes, ", "))
	}
}

// isEnvName reports whether s can be an environment variable's name (a
// glob such as AGY_GATEWAY_* counts: it names variables).
func isEnvName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '*' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
