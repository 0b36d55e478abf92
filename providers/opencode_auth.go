package providers

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// openCodeSubscriptionEvidence is the preflight evidence of a passed
// ChatGPT-subscription check: OAuth evidence, recorded apart from the
// funding intent (apiSpend deny). It names no connection, label, path or
// account.
const openCodeSubscriptionEvidence = "ChatGPT subscription login verified: exactly one stored OpenAI OAuth connection and no other authenticated integration"

// readOpenCodeAuthList judges the subscription preflight's auth listing
// for the selected contract. Every failure is billing-policy-blocked: the
// required subscription evidence cannot be established, so nothing runs.
// Raw output (connection IDs, labels, credential paths, account metadata)
// never reaches evidence.
func readOpenCodeAuthList(req Request, c Capture) PreflightVerdict {
	if !exited0(c) {
		return fail(policy.StatusBillingPolicyBlocked, "opencode auth list failed (%s); the ChatGPT subscription login cannot be established", exitText(c))
	}
	var err error
	switch req.Contract {
	case openCodeContractV1:
		err = checkOpenCodeV1AuthList(c.Stdout)
	case openCodeContractV2:
		err = checkOpenCodeV2AuthList(c.Stdout)
	default:
		err = fmt.Errorf("no contract was selected")
	}
	if err != nil {
		return fail(policy.StatusBillingPolicyBlocked, "opencode ChatGPT subscription check blocked the attempt: %v", err)
	}
	return pass("%s", openCodeSubscriptionEvidence)
}

// checkOpenCodeV2AuthList reads `opencode auth list --standalone --format
// json`: an array of authenticated integrations {id, name, connections}.
// It must hold exactly the OpenAI integration with exactly one stored
// credential connection whose credential-method metadata says OAuth. Keys,
// environment or external connections, duplicates, any other integration
// (OpenCode Console included) and a missing method all block; a missing
// method means the CLI predates the metadata (native 2.0.0).
func checkOpenCodeV2AuthList(out []byte) error {
	v, err := decodeOrdered(out)
	list, ok := v.([]any)
	if err != nil || !ok {
		return fmt.Errorf("auth list did not print one JSON array")
	}
	if len(list) != 1 {
		return fmt.Errorf("auth list shows %d authenticated integrations; exactly one (OpenAI) is allowed", len(list))
	}
	integ, ok := list[0].(jsonObject)
	if !ok || duplicateKey(integ) != "" {
		return fmt.Errorf("auth list integration is not a well-formed object")
	}
	if id, _ := integ.get("id"); id != "openai" {
		return fmt.Errorf("the authenticated integration is not OpenAI")
	}
	conns, _ := integ.get("connections")
	connList, ok := conns.([]any)
	if !ok || len(connList) != 1 {
		return fmt.Errorf("OpenAI must have exactly one connection")
	}
	conn, ok := connList[0].(jsonObject)
	if !ok || duplicateKey(conn) != "" {
		return fmt.Errorf("the OpenAI connection is not a well-formed object")
	}
	if typ, _ := conn.get("type"); typ != "credential" {
		return fmt.Errorf("the OpenAI connection is not a stored credential (environment and external connections are refused)")
	}
	method, hasMethod := conn.get("method")
	if !hasMethod {
		return fmt.Errorf("this OpenCode does not expose credential-method metadata, which the subscription mode requires (native 2.0.0 omits it); upgrade OpenCode to a 2.x release that lists each connection's method")
	}
	m, ok := method.(jsonObject)
	if !ok || duplicateKey(m) != "" {
		return fmt.Errorf("the OpenAI connection's credential method is malformed")
	}
	if typ, _ := m.get("type"); typ != "oauth" {
		return fmt.Errorf("the OpenAI connection is not an OAuth login (API keys are refused)")
	}
	return nil
}

// ansiSequence matches the ANSI sequences the V1 listing's styling uses:
// CSI sequences (colors, cursor movement) and OSC sequences ended by BEL
// or ST. Anything else that is a control character stays and blocks.
var ansiSequence = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)`)

// openCodeFrameGlyphs are the native frame glyphs a V1 listing line may
// start with (the prompt library's box drawing and bullets).
const openCodeFrameGlyphs = "┌│└├◇◆●○◒◐◓◑▲■□─ \t"

// v1CredentialLine, v1HeaderLine and v1FooterLine are the only content
// lines of a V1 `opencode --pure auth list` block.
var (
	v1HeaderLine     = regexp.MustCompile(`^Credentials \S.*$`)
	v1CredentialLine = regexp.MustCompile(`^OpenAI oauth$`)
	v1FooterLine     = regexp.MustCompile(`^1 credentials?$`)
)

// checkOpenCodeV1AuthList reads V1's human-readable listing as one whole
// known structure: after recognized ANSI sequences are stripped and each
// line's leading frame glyphs removed, the non-empty lines are exactly a
// "Credentials <path>" header, one "OpenAI oauth" entry and a "1
// credential(s)" footer. Extra entries, API or well-known credentials,
// environment sections, duplicate or split blocks, unknown lines, bad
// counts and leftover control characters all block.
func checkOpenCodeV1AuthList(out []byte) error {
	text := ansiSequence.ReplaceAllString(string(out), "")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	var content []string
	for _, line := range strings.Split(text, "\n") {
		for _, r := range line {
			if r < 0x20 && r != '\t' || r == 0x7f {
				return fmt.Errorf("auth list output carries control characters")
			}
		}
		line = strings.TrimRight(strings.TrimLeft(line, openCodeFrameGlyphs), " \t")
		if line != "" {
			content = append(content, line)
		}
	}
	want := []*regexp.Regexp{v1HeaderLine, v1CredentialLine, v1FooterLine}
	if len(content) != len(want) {
		return fmt.Errorf("auth list is not exactly one credentials block with one OpenAI OAuth entry (%d content lines)", len(content))
	}
	for i, re := range want {
		if !re.MatchString(content[i]) {
			return fmt.Errorf("auth list line %d is not the expected %s", i+1, [...]string{"credentials header", "OpenAI oauth entry", "one-credential footer"}[i])
		}
	}
	return nil
}
