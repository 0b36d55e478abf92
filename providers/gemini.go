package providers

import (
	"github.com/switchyard-dev/switchyard/policy"
)

// geminiGuard lists the Gemini CLI's known API routes: API keys, service
// account credentials and endpoint overrides when non-blank, Vertex AI
// when switched on. A Google login (Code Assist) is the subscription
// route and needs none of them.
var geminiGuard = envGuard{
	NonBlank: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS",
		"GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL"},
	Truthy: []string{"GOOGLE_GENAI_USE_VERTEXAI"},
}

func init() { register(geminiSpec()) }

// geminiSpec describes the Gemini CLI, a Switchyard addition (stdin prompt,
// `--output-format stream-json`). Read-only lanes run the plan approval mode,
// writers auto_edit (edits approved, anything else refused headless); the
// CLI's own sandbox needs a container runtime and is not used, so writer
// containment is unverified. Gemini has no login probe that answers without
// spending a request, so the preflight only proves the CLI runs a stable
// release and records that authentication and the billing route are
// established by the invocation itself.
func geminiSpec() *Spec {
	s := &Spec{
		Provider: policy.Gemini,
		Binaries: []string{"gemini"},
		Install:  "install the Gemini CLI (npm i -g @google/gemini-cli)",
		Writer:   WriterTools{Shell: false, Guidance: "Tools: edit with the file tools (auto_edit approves edits only); shell commands are refused headless."},
		Containment: map[policy.Access]Containment{
			policy.IsolatedWrite: {Class: ContainmentUnverified, Reason: "gemini --approval-mode auto_edit without --sandbox (it needs a container runtime): no write or network confinement"},
			policy.ReadOnly:      {Class: ContainmentUnverified, Reason: "gemini --approval-mode plan without --sandbox: no verified read-only or no-network guarantee per platform"},
		},
		KnownVersions: []string{"0.6.1"},
		QuotaSource:   QuotaLiveHTTP,
		ModelEvidence: policy.EvidenceProviderReport,
		CLIModel:      effortModel(policy.Gemini),
		OwnEnv:        geminiGuard.vars(),
		RemoveEnv:     removeEnv(policy.Gemini),
		// A Google login for a Workspace account needs its Code Assist
		// project; neither variable is a credential.
		KeepEnv: []string{"GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"},
		Guard:   envGuardFunc(geminiGuard),
		Prepare: func(Request) ([]File, []string, error) {
			return nil, nil, nil
		},
		Parse: parseGemini,
	}
	s.Preflight = func(req Request) [][]string {
		return [][]string{cliArgv(s, req, "--version")}
	}
	s.ReadPreflight = func(req Request, n int, c Capture) PreflightVerdict {
		if n != 0 {
			return unknownProbe(s.Provider, n)
		}
		if !exited0(c) {
			return fail(policy.StatusUnavailableCLI, "gemini --version failed (%s)", exitText(c))
		}
		v, err := parseBareVersion(string(c.Stdout))
		if err != nil {
			return fail(policy.StatusUnavailableCLI, "gemini --version did not print a stable version")
		}
		return pass("gemini %s runs; it has no login probe, so %s", v, PreflightDeferredEvidence)
	}
	s.Invocation = func(req Request) (Command, error) {
		if err := requireModel(req); err != nil {
			return Command{}, err
		}
		mode := "plan"
		if req.Mode == policy.IsolatedWrite {
			mode = "auto_edit"
		}
		argv := cliArgv(s, req, "--model", req.CLIModel, "--output-format", "stream-json", "--approval-mode", mode)
		return Command{Argv: argv, Dir: req.Cwd, Stdin: StdinPrompt}, nil
	}
	return s
}
