package providers

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// PreflightDeferredEvidence is the receipt's preflight evidence when a spec
// returns no probes (Claude read-only): the real invocation is the first
// authentication check, and nothing has established the billing route.
const PreflightDeferredEvidence = "authentication deferred to invocation; billing route unverified"

// argv0 is the executable a probe or workload runs: the resolved binary, or
// the spec's first candidate when the request has none (contract tests).
func argv0(spec *Spec, req Request) string {
	if req.Executable != "" {
		return req.Executable
	}
	return spec.Binaries[0]
}

// cliArgv builds an argv for the spec's CLI: a preflight probe or the
// workload.
func cliArgv(spec *Spec, req Request, args ...string) []string {
	return append([]string{argv0(spec, req)}, args...)
}

// pass is a passing verdict with its evidence.
func pass(format string, args ...any) PreflightVerdict {
	return PreflightVerdict{Evidence: fmt.Sprintf(format, args...)}
}

// fail is a failing verdict: status and launcher-authored evidence.
func fail(status policy.ReceiptStatus, format string, args ...any) PreflightVerdict {
	return PreflightVerdict{Status: status, Evidence: fmt.Sprintf(format, args...)}
}

// exited0 reports whether the probe exited normally with code 0.
func exited0(c Capture) bool { return c.ExitCode != nil && *c.ExitCode == 0 }

// exitText describes how a probe ended, for evidence.
func exitText(c Capture) string {
	switch {
	case c.ExitCode != nil:
		return fmt.Sprintf("exit %d", *c.ExitCode)
	case c.Signal != "":
		return "signal " + c.Signal
	}
	return "no exit status"
}

// probeText is a probe's stdout and stderr together: several CLIs print
// their status on stderr (codex login status).
func probeText(c Capture) string {
	return string(c.Stdout) + "\n" + string(c.Stderr)
}

// unauthenticatedText matches the sign-in failures the CLIs print
// (case-insensitive): "Not logged in", "not authenticated", "login
// required", "please log in", "run … login", "authentication required".
var unauthenticatedText = regexp.MustCompile(`(?i)\bnot (logged|signed) in\b|\bnot authenticated\b|\bunauthenticated\b|\blog ?in required\b|\bplease (log|sign) ?in\b|\bauthentication (is )?required\b|\bauth(entication)? failed\b|\bunauthori[sz]ed\b`)

// looksUnauthenticated reports whether probe output reads as a sign-in
// failure rather than a broken CLI.
func looksUnauthenticated(c Capture) bool {
	return unauthenticatedText.MatchString(probeText(c))
}

// failedProbe is the verdict for a probe that did not pass its own check:
// unauthenticated when the output reads as a sign-in failure, else
// unavailable-cli.
func failedProbe(what string, c Capture) PreflightVerdict {
	if looksUnauthenticated(c) {
		return fail(policy.StatusUnauthenticated, "%s reported no usable login (%s)", what, exitText(c))
	}
	return fail(policy.StatusUnavailableCLI, "%s failed (%s) without a recognizable login answer", what, exitText(c))
}

// unknownProbe is the verdict for a probe index a spec never returned.
func unknownProbe(p policy.Provider, probe int) PreflightVerdict {
	return fail(policy.StatusUnavailableCLI, "%s has no preflight probe %d", p, probe)
}

// nonEmptyLines returns the lines of s with surrounding space trimmed,
// dropping blank ones.
func nonEmptyLines(s string) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// containsToken reports whether tok appears in s delimited by whitespace,
// quotes, commas, brackets or line ends: a model slug listed by a CLI, not a
// substring of a longer slug.
func containsToken(s, tok string) bool {
	if tok == "" {
		return false
	}
	fields := strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '"' || r == '\'' ||
			r == ',' || r == '(' || r == ')' || r == '[' || r == ']' || r == '`'
	})
	for _, f := range fields {
		if f == tok {
			return true
		}
	}
	return false
}
