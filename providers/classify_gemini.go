package providers

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/switchyard-dev/switchyard/policy"
)

// The Gemini CLI's stop lines, captured from gemini 0.61.0 signed out
// (testdata/transcripts/gemini): the warnings it prints when it drops a
// requested approval mode (in a folder it does not trust; plan mode turned
// off by general.plan.enabled in the user's or the trusted checkout's
// settings), and the sign-in error of a run with no auth method, after
// which it exits 41 (FATAL_AUTHENTICATION_ERROR) before any model request.
// The sign-in line names the user settings file under the child's HOME.
const (
	geminiModeOverridden = `Approval mode overridden to "default" because the current folder is not trusted.`
	geminiPlanDisabled   = `Approval mode "plan" is disabled in your settings. Falling back to "default".`
	geminiSignedOutExit  = 41
)

// geminiModeOverrides are the lines saying the CLI replaced the requested
// approval mode with "default".
var geminiModeOverrides = []string{geminiModeOverridden, geminiPlanDisabled}

var geminiSignedOut = regexp.MustCompile(`^Please set an Auth method in your \S.*[/\\]\.gemini[/\\]settings\.json ` +
	`or specify one of the following environment variables before running: GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA$`)

// geminiStop is Gemini's stop adapter (Classify step 0). A mode override
// comes first: an attempt whose approval mode the CLI replaced never ran
// under the requested access mode, so it cannot count whatever it printed
// after (a success included). Then the sign-in stop: exit 41 with no
// terminal success and exactly one stderr line reading the known sign-in
// error.
func geminiStop(_ Request, c Capture, p Parsed) *providerStop {
	if lines := stderrFrames(c.Stderr, func(s string) bool { return slices.Contains(geminiModeOverrides, s) }); len(lines) > 0 {
		return &providerStop{
			Status: policy.StatusUnsupportedCapability,
			Code:   "gemini_approval_mode_overridden",
			Note:   "gemini overrode the requested approval mode, so the attempt did not run under its access mode",
			Words:  lines[0],
		}
	}
	if c.ExitCode == nil || *c.ExitCode != geminiSignedOutExit || c.Signal != "" || p.TerminalSuccess {
		return nil
	}
	lines := stderrFrames(c.Stderr, geminiSignedOut.MatchString)
	if len(lines) != 1 {
		return nil
	}
	return &providerStop{
		Status: policy.StatusUnauthenticated,
		Code:   "gemini_no_auth_method",
		Note:   fmt.Sprintf("gemini stopped at its sign-in check (exit %d) before any model request", geminiSignedOutExit),
		Words:  lines[0],
	}
}
