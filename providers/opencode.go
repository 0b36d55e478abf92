package providers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// openCodeNativeAuth is the guard's route name for OpenCode: its native
// authentication can route through several upstream providers and
// credentials, so only an explicit --api-spend approved authorizes it;
// deny and an omitted (legacy) policy both block before the CLI starts.
const openCodeNativeAuth = "opencode native authentication (requires api-spend approved)"

func init() { register(openCodeSpec()) }

// openCodeSpec describes OpenCode on its restored V1 contract (`opencode
// run --pure --format json`, JSON events on stdout). Each attempt gets a
// private opencode.json (pinned model, one attempt agent, an ordered
// permission map starting from wildcard denial, no providers, no MCP) found
// through OPENCODE_CONFIG, with project discovery, external skills, Claude
// Code compatibility, auto-update, auto-compaction and LSP downloads off.
// Preflight checks the version banner selects V1, then that `opencode
// --pure debug config` reports the private configuration. The V2 contract,
// the ChatGPT-subscription mode and sandboxed writer shells are not
// implemented: a V2 banner is unavailable-cli and shells stay denied.
func openCodeSpec() *Spec {
	s := &Spec{
		Provider: policy.OpenCode,
		Binaries: []string{"opencode"},
		Install:  "install OpenCode (npm i -g opencode-ai)",
		Writer:   WriterTools{Shell: false, Guidance: "Tools: read, glob and grep to inspect, edit to change files; no shell is granted."},
		Containment: map[policy.Access]Containment{
			policy.IsolatedWrite: {Class: ContainmentUnverified, Reason: "opencode has no native sandbox: the agent permission map denies bash, webfetch and external_directory, which is tool policy, not containment"},
			policy.ReadOnly:      {Class: ContainmentUnverified, Reason: "opencode has no native sandbox: the agent permission map allows only read, glob and grep, which is tool policy, not containment"},
		},
		KnownVersions: []string{"1.18.32"},
		QuotaSource:   QuotaUnsupported,
		ModelEvidence: policy.EvidencePinnedArgv,
		CLIModel:      slugModel(policy.OpenCode),
		OwnEnv:        []string{}, // native login only: inherited API keys never reach the child
		RemoveEnv:     removeEnv(policy.OpenCode, "OPENCODE_*"),
		KeepEnv:       []string{"XDG_DATA_HOME"}, // the native login's data location
		Guard: func(_ map[string]string, req Request) []string {
			if req.APISpend == policy.APISpendApproved {
				return nil
			}
			return []string{openCodeNativeAuth}
		},
		Parse: parseOpenCode,
	}
	s.Prepare = func(req Request) ([]File, []string, error) {
		config, err := openCodeConfig(req)
		if err != nil {
			return nil, nil, err
		}
		overlay := []string{
			"OPENCODE_CONFIG=" + openCodeConfigPath(req),
			"XDG_CONFIG_HOME=" + req.PrivateDir,
			"OPENCODE_TEST_HOME=" + req.PrivateDir,
		}
		for _, flag := range []string{"PROJECT_CONFIG", "EXTERNAL_SKILLS", "CLAUDE_CODE", "AUTOUPDATE", "AUTOCOMPACT", "LSP_DOWNLOAD"} {
			overlay = append(overlay, "OPENCODE_DISABLE_"+flag+"=1")
		}
		return []File{privateFile(openCodeConfigPath(req), config)}, overlay, nil
	}
	s.Preflight = func(req Request) [][]string {
		return [][]string{cliArgv(s, req, "--version"), cliArgv(s, req, "--pure", "debug", "config")}
	}
	s.ReadPreflight = func(req Request, n int, c Capture) PreflightVerdict {
		switch n {
		case 0:
			return readOpenCodeVersion(c)
		case 1:
			return readOpenCodeDebugConfig(req, c)
		}
		return unknownProbe(s.Provider, n)
	}
	s.Invocation = func(req Request) (Command, error) {
		if err := openCodeModel(req.CLIModel); err != nil {
			return Command{}, err
		}
		argv := cliArgv(s, req, "run", "--pure", "--format", "json", "--model", req.CLIModel,
			"--agent", OpenCodeAgentName(req), "--dir", req.Cwd, "--title", "pstack-worker")
		return Command{Argv: argv, Dir: req.Cwd, Stdin: StdinPrompt}, nil
	}
	return s
}

// OpenCodeAgentName is the attempt's agent:
// pstack-<first 24 hex digits of sha256(receipt path)>.
func OpenCodeAgentName(req Request) string { return "pstack-" + receiptDigest(req.Receipt, 24) }

// openCodeConfigPath is the private opencode.json.
func openCodeConfigPath(req Request) string { return inPrivate(req, "opencode.json") }

// openCodeModel checks an exact provider/model slug: at least two non-empty
// path segments (more are preserved), and never the auto selector.
func openCodeModel(model string) error {
	parts := strings.Split(model, "/")
	if len(parts) < 2 || model == "auto" || strings.TrimSpace(model) != model {
		return fmt.Errorf("opencode: model must be an exact provider/model slug, got %q", model)
	}
	for _, p := range parts {
		if p == "" {
			return fmt.Errorf("opencode: model %q has an empty path segment", model)
		}
	}
	return nil
}

// openCodePermission is the V1 ordered permission map. The last matching
// rule wins, so the wildcard denial comes first and the read tools (plus
// edit for writers) are allowed after it; shells stay denied in both modes
// because no sandbox wrapper is installed.
func openCodePermission(mode policy.Access) jsonObject {
	perm := jsonObject{{"*", "deny"}, {"read", "allow"}, {"glob", "allow"}, {"grep", "allow"}}
	if mode == policy.IsolatedWrite {
		perm = append(perm, jsonMember{"edit", "allow"})
	}
	for _, denied := range []string{"bash", "external_directory", "task", "webfetch", "websearch", "codesearch", "skill", "question"} {
		perm = append(perm, jsonMember{denied, "deny"})
	}
	return perm
}

// openCodeConfig renders the private V1 opencode.json for the attempt.
func openCodeConfig(req Request) ([]byte, error) {
	if err := openCodeModel(req.CLIModel); err != nil {
		return nil, err
	}
	perm := openCodePermission(req.Mode)
	agent := jsonObject{
		{"description", "Switchyard worker for one assigned lane."},
		{"mode", "primary"},
		{"model", req.CLIModel},
		{"permission", perm},
	}
	doc := jsonObject{
		{"$schema", "https://opencode.ai/config.json"},
		{"model", req.CLIModel},
		{"small_model", req.CLIModel},
		{"share", "disabled"},
		{"autoupdate", false},
		{"snapshot", false},
		{"lsp", false},
		{"formatter", false},
		{"compaction", jsonObject{{"auto", false}, {"prune", false}}},
		{"instructions", []string{}},
		{"plugin", []string{}},
		{"provider", jsonObject{}},
		{"mcp", jsonObject{}},
		{"permission", perm},
		{"agent", jsonObject{{OpenCodeAgentName(req), agent}}},
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// readOpenCodeVersion judges `opencode --version`: the banner must select
// the V1 contract.
func readOpenCodeVersion(c Capture) PreflightVerdict {
	if !exited0(c) {
		return fail(policy.StatusUnavailableCLI, "opencode --version failed (%s)", exitText(c))
	}
	v, contract, err := ParseOpenCodeBanner(string(c.Stdout))
	switch {
	case err != nil:
		return fail(policy.StatusUnavailableCLI, "opencode --version is not a supported stable release (1.x from %s)", openCodeV1Floor)
	case contract != OpenCodeV1:
		return fail(policy.StatusUnavailableCLI, "opencode %s selects the V2 contract, which this runner does not drive", v)
	}
	return pass("opencode %s selects the V1 contract", v)
}

// readOpenCodeDebugConfig judges `opencode --pure debug config`: the merged
// effective configuration must carry the pinned model and small model, the
// attempt agent and the ordered permission map exactly, no provider
// overrides and no MCP server. Raw configuration never reaches evidence.
func readOpenCodeDebugConfig(req Request, c Capture) PreflightVerdict {
	if !exited0(c) {
		return fail(policy.StatusUnavailableCLI, "opencode debug config failed (%s)", exitText(c))
	}
	want, err := openCodeConfig(req)
	if err != nil {
		return fail(policy.StatusUnavailableCLI, "opencode private configuration cannot be rendered")
	}
	expected, _ := decodeOrdered(want)
	got, err := decodeOrdered(c.Stdout)
	gotObj, ok := got.(jsonObject)
	if err != nil || !ok {
		return fail(policy.StatusUnavailableCLI, "opencode debug config did not print one JSON object")
	}
	exp := expected.(jsonObject)
	for _, key := range []string{"model", "small_model", "permission"} {
		if v, ok := gotObj.get(key); !ok || !jsonEqualIn(v, exp.mustGet(key), key == "permission") {
			return fail(policy.StatusUnavailableCLI, "opencode effective configuration does not carry the private %s", key)
		}
	}
	name := OpenCodeAgentName(req)
	agents, _ := gotObj.get("agent")
	agentsObj, _ := agents.(jsonObject)
	wantAgents := exp.mustGet("agent").(jsonObject)
	if v, ok := agentsObj.get(name); !ok || !jsonEqual(v, wantAgents.mustGet(name)) {
		return fail(policy.StatusUnavailableCLI, "opencode effective configuration does not carry the private agent")
	}
	for _, key := range []string{"provider", "mcp"} {
		if v, ok := gotObj.get(key); ok {
			if obj, isObj := v.(jsonObject); !isObj || len(obj) != 0 {
				return fail(policy.StatusUnavailableCLI, "opencode effective configuration has a non-empty %s section", key)
			}
		}
	}
	return pass("opencode effective configuration matches the private configuration")
}

// jsonObject is a JSON object that keeps its member order, for rendering
// and comparing OpenCode's ordered permission maps.
type jsonObject []jsonMember

// jsonMember is one member of a jsonObject.
type jsonMember struct {
	Key   string
	Value any
}

// MarshalJSON renders the members in order.
func (o jsonObject) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := json.Marshal(m.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(m.Value)
		if err != nil {
			return nil, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// get returns the value of the last member named key (JSON's duplicate
// rule).
func (o jsonObject) get(key string) (any, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].Key == key {
			return o[i].Value, true
		}
	}
	return nil, false
}

// mustGet returns a member this package rendered itself.
func (o jsonObject) mustGet(key string) any {
	v, _ := o.get(key)
	return v
}

// maxOrderedDepth bounds how deeply decodeOrdered follows nested arrays
// and objects (encoding/json's own limit). The token stream does not bound
// nesting itself, and each level is a stack frame: CLI output of millions
// of "[" would otherwise overflow the stack, which is fatal.
const maxOrderedDepth = 10000

// decodeOrdered decodes exactly one JSON value (surrounding whitespace
// allowed), objects as jsonObject, numbers as json.Number.
func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

// decodeValue reads one value from dec's token stream, depth levels deep.
func decodeValue(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); ok && (d == '{' || d == '[') && depth >= maxOrderedDepth {
		return nil, fmt.Errorf("JSON nested deeper than %d levels", maxOrderedDepth)
	}
	switch tok {
	case json.Delim('{'):
		obj := jsonObject{}
		for dec.More() {
			keyTok, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, _ := keyTok.(string)
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			obj = append(obj, jsonMember{key, v})
		}
		_, err := dec.Token()
		return obj, err
	case json.Delim('['):
		arr := []any{}
		for dec.More() {
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := dec.Token()
		return arr, err
	}
	return tok, nil
}

// jsonEqual compares decoded values exactly. Objects compare as member
// sets, except permission maps and everything inside them, which are
// ordered rules and compare member by member in order; arrays compare
// element by element.
func jsonEqual(a, b any) bool { return jsonEqualIn(a, b, false) }

func jsonEqualIn(a, b any, ordered bool) bool {
	switch a := a.(type) {
	case jsonObject:
		b, ok := b.(jsonObject)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			inner := ordered || a[i].Key == "permission"
			if ordered {
				if a[i].Key != b[i].Key || !jsonEqualIn(a[i].Value, b[i].Value, inner) {
					return false
				}
				continue
			}
			bv, ok := b.get(a[i].Key)
			if !ok || !jsonEqualIn(a[i].Value, bv, inner) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !jsonEqualIn(a[i], b[i], ordered) {
				return false
			}
		}
		return true
	}
	return a == b
}
