package providers

import (
	"fmt"

	"github.com/switchyard-dev/switchyard/policy"
)

// QuotaSource says where trustworthy quota evidence for a provider comes
// from; the type lives in policy, which evaluates eligibility from it.
type QuotaSource = policy.QuotaSource

// Quota source classes.
const (
	QuotaLiveHTTP    = policy.QuotaLiveHTTP
	QuotaLiveRPC     = policy.QuotaLiveRPC
	QuotaLiveCLI     = policy.QuotaLiveCLI
	QuotaUnsupported = policy.QuotaUnsupported
)

// Request is everything a spec needs to build one attempt's commands. The
// runner fills it after validating flags; paths are absolute.
type Request struct {
	Parent     policy.Parent
	Provider   policy.Provider
	Model      string        // the requested model, as on the descriptor
	CLIModel   string        // the exact --model value (policy.RunnerModel; Devin UID mapping)
	Effort     policy.Effort // as on the descriptor
	Mode       policy.Access
	Cwd        string
	Prompt     []byte          // the full prompt: worker-contract preamble + assigned task
	Output     string          // reserved output path
	Receipt    string          // reserved receipt path
	PrivateDir string          // the attempt's private directory (0700), created by the runner; specs put config files here
	APISpend   policy.APISpend // deny, approved or legacy
	Home       string          // the real home directory
	Executable string          // the resolved binary
	// Contract is the native contract a preflight verdict selected
	// (OpenCode's "v1" or "v2" from its version banner); "" until one does.
	// Every later probe, the invocation and the parser read it.
	Contract string
	// ChatGPTSubscription is --opencode-chatgpt-subscription: an OpenCode
	// attempt under --api-spend deny on the native ChatGPT login.
	ChatGPTSubscription bool
	// ParentEnv is the runner's parent environment, read-only. Specs read
	// configuration locations and auth hints from it (Cursor's
	// CURSOR_CONFIG_DIR and CURSOR_API_KEY); it is never passed through.
	// Nil reads as empty.
	ParentEnv map[string]string
}

// StdinKind says what the child reads on stdin.
type StdinKind int

// Stdin kinds.
const (
	StdinNone   StdinKind = iota // /dev/null
	StdinPrompt                  // Request.Prompt
	StdinBytes                   // Command.StdinBytes
)

// File is a private file the runner creates exclusively (O_EXCL, never
// following symlinks) before the command runs and removes after every
// outcome.
type File struct {
	Path    string // absolute, inside Request.PrivateDir or a path the spec owns
	Mode    uint32 // 0600 for files, 0700 for directories
	Content []byte
	// Dir marks a directory (Content empty) that later Files live in. The
	// runner creates it when missing, refuses a symlink or non-directory in
	// its place, reuses an existing real directory, and removes it after
	// the attempt only when it created it. Directories precede their files.
	Dir bool
	// Guard marks a path outside the attempt's private directories that
	// the worker could reach (Antigravity's generated agent and hooks in
	// the worktree): after the attempt the runner removes a guarded file
	// only when its content is unchanged, and a guarded directory only
	// when it is empty; anything replaced or added is left in place and
	// reported, never deleted.
	Guard bool
}

// Command is one child process the runner starts: argv[0] is the resolved
// executable. Env is the complete child environment (never the parent's
// passed through).
type Command struct {
	Argv       []string
	Dir        string
	Env        []string
	Stdin      StdinKind
	StdinBytes []byte
	Files      []File // created before the command, removed after the attempt
	// Capture lists extra files the command writes that the parser reads
	// (for example Devin's ATIF export), read after the child settles.
	Capture []string
	// Check, when set, runs immediately before the child starts (after
	// Files exist); an error refuses the launch with nothing started (a
	// *RefusedError carries its receipt status). Antigravity writers
	// recheck their captured configuration fingerprints here.
	Check func() error
}

// Capture is what a settled child produced. ExitCode is nil when the child
// did not exit normally; Signal names the signal that ended it.
type Capture struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode *int
	Signal   string
	Files    map[string][]byte // Command.Capture contents; missing files are absent
	// Export is the settled Spec.Export command's capture (OpenCode V2's
	// session export); nil when none ran or it was interrupted.
	Export *Capture
}

// PreflightVerdict is how the runner reads a preflight probe.
type PreflightVerdict struct {
	Status   policy.ReceiptStatus // "" when the probe passed; else unauthenticated, unavailable-cli, unavailable-model or billing-policy-blocked
	Evidence string               // launcher-authored, no raw output, no values
	// RetryUnauthenticated asks for the one bounded preflight retry (Grok):
	// wait RetryAfter, then run the same probe once more.
	Retry bool
	// Then, on a passed probe, fixes the rest of the attempt (OpenCode's
	// version banner selects its contract); nil changes nothing.
	Then *Continuation
}

// Continuation is what a passed preflight probe decides for the rest of
// the attempt: the runner records Contract in Request.Contract, creates
// Files exclusively before the next child, replaces the Prepare overlay
// with Overlay for every later child, and runs Probes in place of the
// remaining ones.
type Continuation struct {
	Contract string
	Files    []File
	Overlay  []string
	Probes   [][]string
}

// PreflightError is returned by Spec.Check or Spec.Prepare when a check
// fails before a child starts (a replaced private configuration, a writer
// outside its worktree root): the runner records a preflight failure with
// Status and starts nothing.
type PreflightError struct {
	Status   policy.ReceiptStatus
	Evidence string // launcher-authored, no raw output
}

func (e *PreflightError) Error() string { return e.Evidence }

// Parsed is what an output parser extracted from a settled workload. It
// never holds raw transcripts: only the final text, typed terminal fields
// and counts.
type Parsed struct {
	FinalText       string // the final response, "" when none
	TerminalSuccess bool   // a real provider-protocol terminal success was observed
	SessionID       *string
	ReportedModel   *string
	Usage           *policy.Usage
	CostUSD         *float64
	ToolDenial      *policy.ToolDenial
	// ProtocolError is non-nil when the output violates the provider's
	// protocol (malformed, unfinished, mixed sessions); its text is
	// launcher-authored and capped.
	ProtocolError error
	// TerminalError is the typed provider error of the terminal frame (for
	// diagnostics and the classifier), capped at 500 characters; "" when none.
	TerminalError string
	Lines, Events int // structural counts for diagnostics
}

// Spec is the single source of truth for one provider CLI. Every field is
// set for every provider; a provider without a behaviour says so
// explicitly (for example Preflight returning no probes).
type Spec struct {
	Provider policy.Provider
	// Binaries are the executable names tried in order on PATH (after the
	// SWITCHYARD_<PROVIDER>_BIN override).
	Binaries []string
	// Install is the fix line's install hint when no binary is found:
	// "install the Codex CLI (npm i -g @openai/codex)".
	Install string
	// KnownVersions are fixture-tested CLI versions: evidence, never an allowlist.
	KnownVersions []string
	QuotaSource   QuotaSource
	// QuotaCredentialFile names, as people read it, the CLI's own login
	// file the live quota source reads its token from, or "" when the
	// source reads none (docs/decisions.md D-26C).
	QuotaCredentialFile string
	// QuotaReader names the live quota reader that providers/quota
	// registers for this provider's QuotaSource ("codex-app-server"); ""
	// when the source is UNSUPPORTED. quota imports providers, so the spec
	// names the reader and quota keys its readers by that name.
	QuotaReader string
	// ModelEvidence is how a successful receipt proves its model, and so
	// what VerifyModel accepts when the CLI reports none: provider-report
	// requires a matching report; pinned-argv accepts a missing report as
	// pinned-argv, unverified (a matching report still verifies).
	ModelEvidence policy.ModelEvidence
	// ModelMatch is the rule a reported model must meet against the
	// requested one (model.go).
	ModelMatch ModelMatch
	// ModelEcho marks a report that only echoes the argv override
	// (Antigravity's init.model): it must be present and match, and it
	// proves nothing beyond the argv (pinned-argv, unverified).
	ModelEcho bool
	// Models is the CLI's own model-listing probe for discovery; the zero
	// probe (no Argv) for a CLI without one (models.go).
	Models ModelsProbe
	// ListedEfforts are the efforts setup offers for a model the CLI lists
	// that no matrix row knows (Choices), proposing high when there are
	// several; nil offers @default only (a CLI that selects reasoning by
	// exact slug, or one whose efforts are fixed per model).
	ListedEfforts []policy.Effort
	// ListedAuto keeps a listed "auto" model as a choice (Devin's auto is
	// a model); every other CLI's "auto" is dropped from the choices.
	ListedAuto bool
	// CLIModel returns the exact --model value for a descriptor's model
	// and effort (Request.CLIModel), or an error naming the rule it breaks
	// (effort rules, Devin UIDs, versioned Claude pins); a *ModelRefusal
	// refuses the model whatever the effort (the runner then blames
	// --model, else --effort).
	CLIModel func(model string, effort policy.Effort) (string, error)
	// SubscriptionModel is the one model of the provider's subscription
	// mode, --opencode-chatgpt-subscription (OpenCode on its native
	// ChatGPT login under --api-spend deny, at @default); "" for a provider
	// without one, which refuses the flag.
	SubscriptionModel string
	// ExplicitAPISpend is set when an attempt needs its saved spending
	// policy passed explicitly (deny or approved): legacy, what an omitted
	// --api-spend means, is refused before anything starts (Antigravity).
	ExplicitAPISpend bool

	// OwnEnv names the provider's own variables a child may keep when the
	// spending policy allows them (approved or legacy); under deny any of
	// them that is set blocks before launch instead.
	OwnEnv []string
	// RemoveEnv names variables always removed from this provider's child;
	// a trailing * matches a prefix (OPENCODE_*).
	RemoveEnv []string
	// HostMarkers are the variables a host session of this CLI sets in
	// what it runs (Codex's CODEX_*, a trailing * matching a prefix):
	// ChildEnv removes them from every other provider's child, while this
	// provider's own child keeps what its allowlists name (CODEX_HOME).
	HostMarkers []string
	// KeepEnv names non-credential variables the CLI needs to find its own
	// login and state (CODEX_HOME, XDG_CONFIG_HOME for Devin), kept under
	// every spending policy. Never a billing route.
	KeepEnv []string
	// Guard returns the names (never values) of the billing routes that
	// block the attempt before launch; any name blocks with
	// billing-policy-blocked. Specs check under --api-spend deny only,
	// except OpenCode, which blocks everything but approved.
	Guard func(env map[string]string, req Request) []string

	// Prepare returns the private files and environment overlay for the
	// attempt (config directories, prompt copies). Overlay entries are
	// NAME=value pairs added to the constructed child environment.
	Prepare func(req Request) (files []File, overlay []string, err error)
	// Preflight returns the probes to run in order (none for Claude
	// read-only); each is read by ReadPreflight.
	Preflight func(req Request) [][]string
	// ReadPreflight judges one probe's capture.
	ReadPreflight func(req Request, probe int, c Capture) PreflightVerdict
	// Invocation builds the one workload command (Env is filled by the
	// runner from ChildEnv plus the Prepare overlay).
	Invocation func(req Request) (Command, error)
	// Parse reads a settled workload's capture.
	Parse func(req Request, c Capture) Parsed
	// Export, when set, returns the one read-only command run after a
	// workload that settled on its own (never after a cancellation,
	// deadline or stall), with the same executable, environment, cwd,
	// cancellation and deadline; nil argv runs nothing. Its capture reaches
	// Parse as Capture.Export. OpenCode V2's session export.
	Export func(req Request, c Capture) []string
	// Check, when set, runs on the runner's side of the attempt with the
	// request as it stands: before the first preflight probe, and again
	// immediately before the invocation. An error stops the attempt before
	// that child starts; a *PreflightError names the receipt status (else
	// unavailable-cli). OpenCode checks a writer's worktree root and its
	// private configuration files here.
	Check func(req Request) error
	// PrivateSuffix names the attempt's private directory
	// "<receipt><suffix>" (".opencode-config"); "" means ".private".
	PrivateSuffix string

	// Writer is what a writer's configuration grants, for the worker
	// contract's tool guidance: the prompt never tells a worker to use a
	// tool the spec denies.
	Writer WriterTools

	// Containment is the provider's containment per access mode; a mode
	// absent from the map is UNVERIFIED.
	Containment map[policy.Access]Containment
	// StateDirs returns the CLI's own login, session and cache directories
	// (and state files), absolute, for HOME home and the parent
	// environment: the only places outside the attempt a contained CLI
	// may write (activities/sandbox). Missing directories are created
	// before launch; missing files stay unwritable. The lists are minimal
	// (docs/GUARANTEES.md names them; sandbox_scope.go has the helpers).
	StateDirs func(home string, env map[string]string) []string
	// APIHosts are the host:port pairs the attempt's egress proxy
	// forwards to: the provider's own API, login and model hosts on 443
	// (PROVIDER-PROTOCOLS.md and QUOTA-PROTOCOLS.md are the sources). A
	// contained CLI reaches nothing else over TCP.
	APIHosts []string
	// QuotaAdapter returns the canonical quota code when a settled
	// workload's capture proves usage exhaustion, "" otherwise (Classify
	// step 1, classify.go). Every spec sets it: a provider without a
	// captured quota envelope uses noProvenQuota.
	QuotaAdapter func(req Request, c Capture) string
	// StopAdapter, when set, proves in the CLI's exact words an end decided
	// before the quota adapter (Classify step 0; Gemini's overridden
	// approval mode and sign-in stop); nil unless the capture carries one.
	StopAdapter func(req Request, c Capture, p Parsed) *providerStop
	// AuthAdapter, when set, returns a fixed evidence code for the CLI's
	// own typed sign-in refusal in a workload (Classify step 1), for a
	// provider that defers authentication to invocation (Claude); every
	// other provider's login is judged by its preflight.
	AuthAdapter func(c Capture) string
	// TerminalFields selects the typed fields of a settled workload's final
	// envelope for its failure diagnostic (diagnostic.go); nil for a CLI
	// without a stdout protocol (Devin).
	TerminalFields func(c Capture) []Field
	// Classify sorts one line of the workload's stdout into a disposition
	// for the stall watchdog (classify_stream.go). Every spec sets it.
	Classify func(line []byte) Disposition
	// SignInProbe is set when the spec's preflight probes prove the
	// sign-in state (a pass shows a login, a failure a definite sign-out),
	// so the stall watchdog's health probe may run them; a provider whose
	// probes check a version or configuration, or defer authentication to
	// the attempt, leaves it false (HasSignInProbe).
	SignInProbe bool
	// SignInDeferred, when set, reports whether req's preflight defers the
	// sign-in to the invocation and so proves nothing about it (Cursor
	// with CURSOR_API_KEY only checks that the CLI runs): HasSignInProbe
	// is then false. nil never defers.
	SignInDeferred func(req Request) bool
	// SilentUntilDone is set when the provider's headless output, as
	// Switchyard launches it, carries no progress events before the final
	// answer, so its default stall timeout is SilentStallTimeoutMs
	// (liveness.go).
	SilentUntilDone bool
	// Login is the command a user runs to sign the CLI in, for doctor's
	// fix line ("codex login"); "" when the CLI documents its own way.
	Login string
}

// WriterTools is a writer's granted tool surface as the worker contract
// describes it.
type WriterTools struct {
	// Shell is set when the writer may run commands (and so local checks);
	// without it the contract says checks cannot be run and asks the
	// worker to name them for the parent instead.
	Shell bool
	// Guidance is the provider's one-line tool guidance appended to the
	// writer rules ("" for none).
	Guidance string
}

var registry = map[policy.Provider]*Spec{}

// register adds a spec at init time; a second spec for one provider is a
// programming error.
func register(s *Spec) {
	if _, dup := registry[s.Provider]; dup {
		panic(fmt.Sprintf("providers: second spec for %s", s.Provider))
	}
	if s.Classify == nil {
		panic(fmt.Sprintf("providers: spec %s has no stream classifier", s.Provider))
	}
	if s.QuotaAdapter == nil {
		panic(fmt.Sprintf("providers: spec %s has no quota adapter", s.Provider))
	}
	registry[s.Provider] = s
}

// behaviourOf returns the spec whose behaviour Classify, VerifyModel and
// TerminalFields read: spec itself when it is complete (it sets a
// QuotaAdapter, as register requires of every spec), else the registered
// spec of the provider it or the request names (a bare
// &Spec{Provider: p} reads p's behaviour), else nil.
func behaviourOf(spec *Spec, req Request) *Spec {
	if spec != nil && spec.QuotaAdapter != nil {
		return spec
	}
	if s, err := Lookup(providerOf(spec, req)); err == nil {
		return s
	}
	return nil
}

// Lookup returns the spec for a provider, or an *UnknownProviderError
// naming the known providers.
func Lookup(p policy.Provider) (*Spec, error) {
	if s, ok := registry[p]; ok {
		return s, nil
	}
	return nil, &UnknownProviderError{Provider: p, Known: Names()}
}

// Names lists the registered providers in canonical order.
func Names() []policy.Provider {
	var out []policy.Provider
	for _, p := range append(append([]policy.Provider{}, policy.Providers...), policy.Gemini) {
		if _, ok := registry[p]; ok {
			out = append(out, p)
		}
	}
	return out
}

// Classification is the single verdict on a settled workload: the receipt
// status, how far the attempt got, and the launcher-authored diagnostic.
// It is produced only by Classify.
type Classification struct {
	Status policy.ReceiptStatus
	// Phase is "" for complete and needs-parent-operation.
	Phase policy.FailurePhase
	// QuotaCode is the canonical quota code (for example
	// "claude_usage_limit_exceeded") when Status is usage-exhausted.
	QuotaCode string
	// Error is nil on success; Message and Evidence are capped (500 and
	// 4000 characters) and hold no raw transcript.
	Error *policy.ReceiptError
	// TerminalSuccess records the assessment on failures: whether a real
	// provider terminal success was observed (vetoes replay).
	TerminalSuccess *bool
	// Handoff and HandoffMalformed come from the final response's
	// pstack-handoff block.
	Handoff          *policy.ReceiptHandoff
	HandoffMalformed bool
	// Model proof for the receipt.
	ReportedModel *string
	ModelVerified bool
	ModelEvidence *policy.ModelEvidence
}
