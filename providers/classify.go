package providers

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// Classify is the single place that turns a settled, started workload into
// its receipt status and quota code (STYLE.md "Outcomes are classified
// once"; provider-contract.md "Failures"). No other non-test file matches
// quota prose, "429" or usage-limit phrases (guardrail_test.go).
//
// It is called after the one workload child settled on its own. It does
// not decide cancellation, timeouts, preflight outcomes (unavailable-cli,
// unauthenticated, unavailable-model), billing-policy blocks or the strict
// contract: the runner decides those before or around the workload. After
// a workload starts, authentication or model wording is never proof of a
// route problem, so those failures are child-failed (provider-dispatch.md),
// with three exceptions proved in the CLI's exact words: a sign-in stop by
// its exit status and text (Gemini, step 0), Devin's upgrade-required
// answer, unavailable-model (step 0, docs/decisions.md D-26D), and the
// typed sign-in refusal
// of a provider that defers authentication to invocation (Claude has no
// authentication preflight), matched like a quota envelope (Spec.AuthAdapter).
//
// The order of decisions:
//
//  0. A provider's stop adapter proves, in the CLI's exact words, that
//     the attempt cannot count: the CLI overrode the requested access
//     mode (unsupported-capability, whatever else happened, a success
//     included), stopped at its sign-in check before any model request
//     (unauthenticated), or answered that the plan does not include the
//     model (unavailable-model). Gemini (classify_gemini.go) and Devin
//     (devin_upgrade.go) have one.
//  1. A provider's quota adapter proves usage-exhausted (phase invocation,
//     or postprocess after a clean exit). A real terminal success observed
//     by the parser vetoes every adapter, so a later success supersedes an
//     earlier error and a trusted success envelope vetoes stderr.
//     Antigravity and OpenCode have no adapter that can prove exhaustion;
//     a provider with no adapter at all is a launcher failure (child-failed
//     with no terminalSuccess assessment), never silently "not quota".
//     Then a provider's authentication adapter proves unauthenticated the
//     same way (the same veto, the same phases).
//  2. A non-zero exit or a signal is child-failed (invocation), even after
//     a terminal success, which is recorded so the attempt is not replayed.
//  3. After a clean exit (postprocess): a typed provider error envelope is
//     child-failed; a protocol violation, a missing terminal success or an
//     empty final response is malformed-output; then the model proof
//     (VerifyModel) and the pstack-handoff block (ParseHandoff) must hold,
//     else malformed-output (handoffMalformed for the block).
//  4. Otherwise complete, or needs-parent-operation with the handoff.
//
// Failures carry TerminalSuccess (the parser's assessment), a capped
// launcher-authored message and an evidence block (see Evidence). The
// receipt's toolDenial comes from Parsed.ToolDenial; parsers set it only
// when the provider did not deliver.
func Classify(spec *Spec, req Request, c Capture, p Parsed) Classification {
	provider := providerOf(spec, req)
	rules := behaviourOf(spec, req)
	if rules == nil {
		note := fmt.Sprintf("no failure classifier is implemented for provider %q", CapText(string(provider), 100))
		return Classification{
			Status: policy.StatusChildFailed,
			Phase:  policy.PhaseInvocation,
			Error: &policy.ReceiptError{
				Message:  note,
				Evidence: FailureEvidence(note, "classifier_missing", nil, c.Stdout, c.Stderr),
			},
		}
	}
	exitedClean := c.ExitCode != nil && *c.ExitCode == 0 && c.Signal == ""
	success := p.TerminalSuccess
	fail := func(status policy.ReceiptStatus, phase policy.FailurePhase, code, note string, terminal bool) Classification {
		message := note
		if p.TerminalError != "" && status != policy.StatusMalformedOutput {
			message += ": " + p.TerminalError
		}
		var fields []Field
		if terminal {
			fields = TerminalFields(spec, req, c)
		}
		out := Classification{
			Status:          status,
			Phase:           phase,
			TerminalSuccess: &success,
			ReportedModel:   p.ReportedModel,
			Error: &policy.ReceiptError{
				Message:  CapText(message, FieldCap),
				Evidence: FailureEvidence(note, code, fields, c.Stdout, c.Stderr),
			},
		}
		if status == policy.StatusUsageExhausted {
			out.QuotaCode = code
		}
		return out
	}

	if stop := rules.StopAdapter; stop != nil {
		if s := stop(req, c, p); s != nil {
			phase := policy.PhaseInvocation
			if exitedClean {
				phase = policy.PhasePostprocess
			}
			words := Field{Name: "stderr", Value: CapText(s.Words, FieldCap)}
			return Classification{
				Status:          s.Status,
				Phase:           phase,
				TerminalSuccess: &success,
				ReportedModel:   p.ReportedModel,
				Error: &policy.ReceiptError{
					Message:  CapText(s.Note+": "+s.Words, FieldCap),
					Evidence: FailureEvidence(s.Note, s.Code, []Field{words}, c.Stdout, c.Stderr),
				},
			}
		}
	}
	if !success {
		if code := rules.QuotaAdapter(req, c); code != "" {
			phase := policy.PhaseInvocation
			if exitedClean {
				phase = policy.PhasePostprocess
			}
			return fail(policy.StatusUsageExhausted, phase, code,
				fmt.Sprintf("%s reported usage exhaustion (%s)", provider, code), true)
		}
		if auth := rules.AuthAdapter; auth != nil {
			if code := auth(c); code != "" {
				phase := policy.PhaseInvocation
				if exitedClean {
					phase = policy.PhasePostprocess
				}
				return fail(policy.StatusUnauthenticated, phase, code,
					fmt.Sprintf("%s reported no usable login (%s)", provider, code), true)
			}
		}
	}
	if !exitedClean {
		note := fmt.Sprintf("%s %s", provider, exitDescription(c))
		if success {
			note += " after a successful terminal result"
		}
		return fail(policy.StatusChildFailed, policy.PhaseInvocation, denialCode(p, "child_exit"), note, true)
	}
	if !success && p.TerminalError != "" {
		return fail(policy.StatusChildFailed, policy.PhasePostprocess, denialCode(p, "provider_error_result"),
			fmt.Sprintf("%s reported a failed result", provider), true)
	}
	if success && p.ToolDenial != nil {
		// A verified denial despite a conversational success (an
		// Antigravity writer's approval hook denied a call): the lane
		// ends, and the recorded terminal success still vetoes replay.
		return fail(policy.StatusChildFailed, policy.PhasePostprocess, denialCode(p, "tool_denied"),
			fmt.Sprintf("%s had a tool call denied; a denial ends the lane even after a successful result", provider), false)
	}
	if p.ProtocolError != nil {
		return fail(policy.StatusMalformedOutput, policy.PhasePostprocess, denialCode(p, "protocol_violation"),
			fmt.Sprintf("%s output was rejected: %s", provider, p.ProtocolError), false)
	}
	if !success {
		return fail(policy.StatusMalformedOutput, policy.PhasePostprocess, "no_terminal_success",
			fmt.Sprintf("%s exited cleanly without a terminal success", provider), false)
	}
	if strings.TrimSpace(p.FinalText) == "" {
		return fail(policy.StatusMalformedOutput, policy.PhasePostprocess, "empty_final_response",
			fmt.Sprintf("%s delivered an empty final response", provider), false)
	}
	reported, verified, evidence, err := VerifyModel(spec, req, p)
	if err != nil {
		out := fail(policy.StatusMalformedOutput, policy.PhasePostprocess, "model_unverified",
			fmt.Sprintf("model proof failed: %s", err), false)
		out.ReportedModel = reported
		return out
	}
	handoff, present, err := ParseHandoff(p.FinalText)
	if present && err != nil {
		out := fail(policy.StatusMalformedOutput, policy.PhasePostprocess, "handoff_malformed",
			fmt.Sprintf("pstack-handoff block rejected: %s", err), false)
		out.HandoffMalformed = true
		out.ReportedModel = reported
		return out
	}
	out := Classification{
		Status:        policy.StatusComplete,
		ReportedModel: reported,
		ModelVerified: verified,
		ModelEvidence: evidence,
	}
	if present {
		out.Status, out.Handoff = policy.StatusNeedsParentOperation, handoff
	}
	return out
}

// denialCode prefers a provider denial's fixed evidence code.
func denialCode(p Parsed, code string) string {
	if p.ToolDenial != nil && p.ToolDenial.Evidence != "" {
		return p.ToolDenial.Evidence
	}
	return code
}

// exitDescription says how the child ended.
func exitDescription(c Capture) string {
	switch {
	case c.Signal != "":
		return "was ended by signal " + CapText(c.Signal, 20)
	case c.ExitCode != nil:
		return fmt.Sprintf("exited with status %d", *c.ExitCode)
	}
	return "did not exit normally"
}

// providerStop is an end a provider's CLI proves in its own fixed words,
// decided before the quota adapters: the CLI refused the attempt's
// contract (Gemini overriding the requested approval mode), stopped at
// its sign-in check before any model request (Gemini's exit 41), or
// answered that the account cannot run the model (Devin's upgrade
// required: unavailable-model).
type providerStop struct {
	Status policy.ReceiptStatus
	Code   string // the evidence block's diagnostic code
	Note   string // launcher-authored sentence
	Words  string // the CLI's own line, kept as evidence (a path, never an environment value)
}

// A spec's StopAdapter (Gemini's, Devin's) returns nil unless the capture carries
// one of its exact known texts. A spec's QuotaAdapter returns the
// canonical quota code when the capture proves usage exhaustion under its
// provider's source-backed contract, "" for everything else (unknown
// stays unknown); every spec sets one (register checks it).

// Canonical quota codes.
const (
	claudeQuotaCode = "claude_usage_limit_exceeded"
	codexQuotaCode  = "codex_usage_limit_exceeded"
	grokQuotaCode   = "grok_free_usage_exhausted"
	devinQuotaCode  = "devin_quota_exhausted"
	cursorQuotaCode = "cursor_usage_limit_exceeded"
	geminiQuotaCode = "gemini_terminal_quota_exhausted"
)

// noProvenQuota is the adapter of a provider without a captured quota
// envelope (Antigravity, OpenCode): quota-sounding text and HTTP 429 stay
// unknown.
func noProvenQuota(Request, Capture) string { return "" }

// normalizeDiagnostic trims surrounding white space and nothing else: the
// canonical diagnostics match exactly as the dispatch seed spells them,
// case and apostrophe included (Claude, Codex, Devin and Cursor print
// "You've" with U+0027, Grok "You\u2019ve" with U+2019). Lower-cased or
// re-punctuated text is not the provider's diagnostic and fails closed.
func normalizeDiagnostic(s string) string {
	return strings.TrimSpace(s)
}

// beginsAt reports whether text starts with diagnostic and continues with
// one of the separators or ends there.
func beginsAt(text, diagnostic string, separators ...string) bool {
	rest, ok := strings.CutPrefix(text, diagnostic)
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	for _, sep := range separators {
		if strings.HasPrefix(rest, sep) {
			return true
		}
	}
	return false
}

// Claude: the composer renders "You've hit your <name><tail>" and "You're
// out of usage credits<tail>", tail empty or starting " · ". Proof is the
// complete errored api_error result with status 429 and one of these
// diagnostics; a bare 429 or other limits ("out of extra usage") are not.
var claudeDiagnostics = []string{
	"You've hit your session limit",
	"You've hit your weekly limit",
	"You've hit your Opus limit",
	"You've hit your Sonnet limit",
	"You've hit your Fable limit",
	"You've hit your usage credit limit",
	"You've hit your usage limit",
	"You've hit your limit",
	"You've hit your team's shared budget",
	"You've hit your monthly spend limit",
	"You've hit your org's monthly spend limit",
	"You've hit your org's monthly usage limit",
	"You're out of usage credits",
}

func claudeQuota(_ Request, c Capture) string {
	r := claudeLastResult(c)
	if r == nil || r.typ() != "result" || r.text("terminal_reason") != "api_error" {
		return ""
	}
	if isError, _ := r.boolean("is_error"); !isError {
		return ""
	}
	if n, ok := r.number("api_error_status"); !ok || n.String() != "429" {
		return ""
	}
	text, ok := r.str("result")
	if !ok {
		return ""
	}
	text = normalizeDiagnostic(text)
	for _, d := range claudeDiagnostics {
		if beginsAt(text, d, " \u00b7 ") {
			return claudeQuotaCode
		}
	}
	return ""
}

// A spec's AuthAdapter returns a fixed evidence code when the capture is
// the provider's own typed sign-in refusal, "" for everything else. Only a
// provider whose authentication is deferred to the workload sets one
// (provider-dispatch.md: Claude has no authentication preflight). Every
// other provider's login is judged by its preflight, and its workload's
// authentication wording stays child-failed.

// claudeSignIn is one sign-in refusal Claude Code ends a -p run with: the
// exact result text and the api_error_status it carries (nil: JSON null).
type claudeSignIn struct {
	result string
	status *int
	code   string
}

var claude401 = 401

// claudeSignIns are the known refusals (PROVIDER-PROTOCOLS.md §1 "Failure
// example lines"). "Not logged in" was captured from claude 2.1.332 signed
// out (testdata/transcripts/claude/unauthenticated); the others are public
// captures of earlier versions. Texts compare whole, after trimming, never
// as substrings.
var claudeSignIns = []claudeSignIn{
	{result: "Not logged in · Please run /login", code: "claude_not_logged_in"},
	{result: "Failed to authenticate: OAuth session expired and could not be refreshed", code: "claude_oauth_expired"},
	{result: "Invalid API key · Fix external API key", status: &claude401, code: "claude_invalid_api_key"},
}

// claudeAuth proves a sign-in refusal: the last result is an errored
// api_error result (is_error true, terminal_reason "api_error") whose
// result text and api_error_status match one known refusal exactly.
func claudeAuth(c Capture) string {
	r := claudeLastResult(c)
	if r == nil || r.typ() != "result" || r.text("terminal_reason") != "api_error" {
		return ""
	}
	if isError, _ := r.boolean("is_error"); !isError {
		return ""
	}
	text, ok := r.str("result")
	if !ok {
		return ""
	}
	text = strings.TrimSpace(text)
	for _, s := range claudeSignIns {
		if text != s.result {
			continue
		}
		if s.status == nil {
			if !r.has("api_error_status") || !r.isNull("api_error_status") {
				return ""
			}
		} else if n, ok := r.number("api_error_status"); !ok || n.String() != fmt.Sprint(*s.status) {
			return ""
		}
		return s.code
	}
	return ""
}

// Codex: UsageLimitReached and QuotaExceeded Display strings, continued by
// "." or " ". Only the exec retry wrapper may precede them; UsageNotIncluded
// (an entitlement gate), rate limits and any other "<context>: " prefix do
// not classify.
var codexDiagnostics = []string{
	"You've hit your usage limit",
	"Your workspace is out of credits.",
	"You hit your spend cap set",
	"Quota exceeded. Check your plan and billing details.",
}

const codexRetryWrapper = "stream disconnected after retries: "

func codexQuota(_ Request, c Capture) string {
	e := codexTerminal(c)
	if e == nil || (e.typ() != "turn.failed" && e.typ() != "error") {
		return ""
	}
	message := normalizeDiagnostic(codexFullMessage(e))
	segments := []string{message}
	if inner, ok := strings.CutPrefix(message, codexRetryWrapper); ok {
		segments = append(segments, inner)
	}
	for _, s := range segments {
		for _, d := range codexDiagnostics {
			if beginsAt(s, d, ".", " ") {
				return codexQuotaCode
			}
		}
	}
	return ""
}

// Grok: the backend's subscription:free-usage-exhausted maps uniquely to
// this message inside an error_during_execution result.
const grokFreeUsage = "You\u2019ve reached your free Grok Build usage limit for now. " +
	"Get SuperGrok for much higher limits, or try again later: https://grok.com/supergrok?referrer=grok-build"

func grokQuota(_ Request, c Capture) string {
	r := grokLastResult(c)
	if r == nil || r.text("subtype") != "error_during_execution" {
		return ""
	}
	if isError, _ := r.boolean("is_error"); !isError {
		return ""
	}
	items, _ := r.arr("errors")
	for _, raw := range items {
		if s, ok := (rawObject{"v": raw}).str("v"); ok && normalizeDiagnostic(s) == grokFreeUsage {
			return grokQuotaCode
		}
	}
	return ""
}

// Devin: a non-zero exit and exactly one stderr "Error:" frame whose
// Display is "Quota exhausted: <canonical>" or a bare canonical sentence. A
// delivered export vetoes.
var devinSentences = []string{
	"You've reached your monthly usage limit. Wait for the limit to reset next month.",
	"Your organization has reached its monthly usage limit. Ask an account admin to raise it, or wait for the limit to reset next month.",
	"usage quota has been exhausted",
}

const devinQuotaPrefix = "Quota exhausted:"

func devinQuota(req Request, c Capture) string {
	if c.ExitCode == nil || *c.ExitCode == 0 || devinDelivered(req, c) {
		return ""
	}
	frames := stderrFrames(c.Stderr, func(line string) bool { return strings.HasPrefix(line, "Error:") })
	if len(frames) != 1 {
		return ""
	}
	detail := normalizeDiagnostic(strings.TrimPrefix(frames[0], "Error:"))
	if inner, ok := strings.CutPrefix(detail, devinQuotaPrefix); ok {
		detail = strings.TrimSpace(inner)
	}
	for _, s := range devinSentences {
		if detail == s {
			return devinQuotaCode
		}
	}
	return ""
}

// Cursor: a non-zero exit, no successful stdout envelope and exactly one
// stderr "<Class>Error:" frame, which must be ActionRequiredError with the
// usage-limit message at a separator boundary. The class alone is not
// proof: rate-limit, login, payment and pro-only errors share it.
var cursorErrorFrame = regexp.MustCompile(`^\S*Error:`)

const (
	cursorErrorClass = "ActionRequiredError:"
	cursorDiagnostic = "You've hit your usage limit"
)

func cursorQuota(_ Request, c Capture) string {
	if c.ExitCode == nil || *c.ExitCode == 0 || cursorStdoutSuccess(c) {
		return ""
	}
	frames := stderrFrames(c.Stderr, cursorErrorFrame.MatchString)
	if len(frames) != 1 {
		return ""
	}
	detail, ok := strings.CutPrefix(frames[0], cursorErrorClass)
	if !ok || !beginsAt(normalizeDiagnostic(detail), cursorDiagnostic, " ", ".") {
		return ""
	}
	return cursorQuotaCode
}

// Gemini (a Switchyard addition; PROVIDER-PROTOCOLS.md §4): the typed
// TerminalQuotaError class first, then the account-quota prose it carries,
// optionally inside the "[API Error: …]" wrapper. The class alone also
// covers model capacity exhaustion, which is not the account's quota, so
// capacity and unpinned texts fail closed; RetryableQuotaError is retried
// by the CLI itself and never classifies.
var geminiDiagnostics = []string{
	"You have exhausted your daily quota on this model.",
	"You exceeded your current quota, please check your plan and billing details.",
}

const (
	geminiQuotaClass   = "TerminalQuotaError"
	geminiErrorWrapper = "[API Error: "
)

func geminiQuota(_ Request, c Capture) string {
	e := geminiTerminalError(c)
	if e == nil || e.text("type") != geminiQuotaClass {
		return ""
	}
	message := normalizeDiagnostic(e.text("message"))
	message = strings.TrimPrefix(message, geminiErrorWrapper)
	for _, d := range geminiDiagnostics {
		if beginsAt(message, d, " ", "]", "\n") {
			return geminiQuotaCode
		}
	}
	return ""
}

// ansiEscape matches terminal styling sequences.
var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)

// stderrFrames returns the trimmed stderr lines, with styling and CR
// endings removed, that keep reports true.
func stderrFrames(stderr []byte, keep func(string) bool) []string {
	var out []string
	eachLine(stderr, func(line []byte) {
		s := strings.TrimSpace(strings.ReplaceAll(ansiEscape.ReplaceAllString(string(line), ""), "\r", ""))
		if s != "" && keep(s) {
			out = append(out, s)
		}
	})
	return out
}
