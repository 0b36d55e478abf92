package providers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/switchyard-dev/switchyard/policy"
)

// geminiTrustEnv names the Gemini CLI's trusted-folders file
// (Storage.getTrustedFoldersPath reads it before ~/.gemini/trustedFolders.json).
const geminiTrustEnv = "GEMINI_CLI_TRUSTED_FOLDERS_PATH"

// geminiTrustFile is the private trusted-folders file's name.
const geminiTrustFile = "trustedFolders.json"

// geminiTrustedFolders is the private trusted-folders document: the
// attempt's cwd (and so its subdirectories) at TRUST_FOLDER, nothing else.
// Gemini drops a requested approval mode to "default" in a folder it does
// not trust, so without it plan mode would silently not hold.
func geminiTrustedFolders(cwd string) ([]byte, error) {
	if cwd == "" {
		return nil, fmt.Errorf("gemini: no cwd to trust")
	}
	return json.Marshal(map[string]string{cwd: "TRUST_FOLDER"})
}

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
//
// Gemini honours --approval-mode only in a folder it trusts, so every child
// reads a private trusted-folders file (GEMINI_CLI_TRUSTED_FOLDERS_PATH)
// that trusts the attempt's cwd and nothing else; the user's own
// ~/.gemini/trustedFolders.json is never read or written. Classify still
// fails an attempt closed when the CLI says it overrode the mode.
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
		// 0.61.0 is the release the conformance suite checked
		// (testdata/realcli pins it).
		KnownVersions:       []string{"0.61.0"},
		QuotaSource:         QuotaLiveHTTP,
		QuotaCredentialFile: "~/.gemini/oauth_creds.json",
		ModelEvidence:       policy.EvidenceProviderReport,
		Classify:            classifyGeminiStream, // classify_stream.go
		CLIModel:            effortModel(policy.Gemini),
		OwnEnv:              geminiGuard.vars(),
		RemoveEnv:           removeEnv(),
		// A Google login for a Workspace account needs its Code Assist
		// project; neither variable is a credential.
		KeepEnv: []string{"GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"},
		Guard:   envGuardFunc(geminiGuard),
		Prepare: func(req Request) ([]File, []string, error) {
			if err := geminiCheckoutConfig(req.Cwd); err != nil {
				return nil, nil, err
			}
			doc, err := geminiTrustedFolders(req.Cwd)
			if err != nil {
				return nil, nil, err
			}
			path := inPrivate(req, geminiTrustFile)
			return []File{privateFile(path, doc)}, []string{geminiTrustEnv + "=" + path}, nil
		},
		Parse: parseGemini,

		// Classification, model proof, discovery and sandbox scope.
		QuotaReader:    "gemini-code-assist", // providers/quota
		ModelMatch:     ModelMatchRevision,
		StopAdapter:    geminiStop,  // classify_gemini.go
		QuotaAdapter:   geminiQuota, // classify.go
		TerminalFields: geminiTerminalFields,
		// ~/.gemini; Code Assist, the Gemini API and Google OAuth.
		StateDirs: under(".gemini"),
		APIHosts:  https("cloudcode-pa.googleapis.com", "generativelanguage.googleapis.com", "oauth2.googleapis.com"),
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

// geminiProjectFiles are what gemini 0.61.0 loads from a folder it trusts
// (read in its bundle): the workspace settings directory (settings, MCP
// servers, hooks, extensions, commands) and an environment file, which can
// set a credential or another billing route.
var geminiProjectFiles = []string{".gemini", ".env"}

// geminiCheckoutConfig refuses a checkout that carries its own Gemini
// configuration. Trusting the attempt's folder (what keeps plan mode)
// makes gemini apply the folder's .gemini/ and .env: a repository under
// review could start its own MCP servers and hooks, or reroute billing.
// The attempt fails closed before any probe instead.
func geminiCheckoutConfig(cwd string) error {
	for _, name := range geminiProjectFiles {
		if _, err := os.Lstat(filepath.Join(cwd, name)); err == nil {
			return &PreflightError{Status: policy.StatusUnsupportedCapability, Evidence: fmt.Sprintf(
				"the checkout has its own %s, which gemini would load in the folder Switchyard must trust to keep plan mode (its settings, MCP servers, hooks or environment); remove it from the checkout, or route this attempt to another provider", name)}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return &PreflightError{Status: policy.StatusUnsupportedCapability, Evidence: fmt.Sprintf("cannot check the checkout for its own %s: %v", name, err)}
		}
	}
	return nil
}
