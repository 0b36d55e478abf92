package runner

import (
	"cmp"
	"errors"
	"io"
	"os"
	"strings"
	"time"

	"github.com/switchyard-dev/switchyard/activities/sandbox"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// Defaults of Config. They are the seed's numbers where it names one.
const (
	// DefaultCaptureLimit caps each captured child stream (stdout and
	// stderr separately); bytes beyond it are counted, not kept.
	DefaultCaptureLimit = 64 << 20
	// DefaultRetryDelay is the wait before the one bounded preflight retry
	// (Grok's unauthenticated-looking first probe).
	DefaultRetryDelay = 5 * time.Second
	// DefaultKillGrace is how long a signalled child may take to exit
	// before its process group gets SIGKILL.
	DefaultKillGrace = 2 * time.Second
	// DefaultActivityFlush is the longest a progress snapshot lags behind
	// output byte counts.
	DefaultActivityFlush = 5 * time.Second
)

// Config configures a Runner. The zero value is usable: New fills every
// unset field with its documented default.
type Config struct {
	// Lookup returns the provider spec for --provider. Default
	// providers.Lookup.
	Lookup func(policy.Provider) (*providers.Spec, error)
	// Env is the parent environment the runner reads (PATH for binary
	// discovery, HOME, billing-guard variables) and from which child
	// environments are constructed. It is never passed through whole.
	// Default: os.Environ() at New.
	Env map[string]string
	// Now is the clock for timestamps, the --timeout deadline and progress.
	// Default time.Now.
	Now func() time.Time
	// Stdout receives the receipt line on exit 0 and --help; Stderr receives
	// usage errors and the receipt line on any other exit. Default
	// os.Stdout and os.Stderr.
	Stdout, Stderr io.Writer
	// Options gives the native coverage used to reject same-provider
	// descriptors a native lane covers. Default policy.DefaultOptions().
	Options *policy.Options
	// CaptureLimit caps each captured stream in bytes. Default
	// DefaultCaptureLimit.
	CaptureLimit int64
	// RetryDelay is the wait before a preflight retry. Default
	// DefaultRetryDelay.
	RetryDelay time.Duration
	// KillGrace is the time between the forwarded signal and SIGKILL to
	// the child's process group. Default DefaultKillGrace.
	KillGrace time.Duration
	// ActivityFlush bounds how often byte activity rewrites the progress
	// snapshot. Default DefaultActivityFlush.
	ActivityFlush time.Duration
	// LazySettledFacts writes a child's exit, its drained output and its
	// settling into the progress snapshot with the next write (at most
	// ActivityFlush later, and always before the terminal snapshot)
	// instead of at once. Each snapshot is a new file renamed into place,
	// which costs more CPU than the rest of a quick attempt's bookkeeping;
	// these three facts only ever move a snapshot toward "done", so a
	// snapshot that lags behind them after a crash says the child may
	// still run, the cautious reading. A child's start, a cancellation
	// request, a retry wait and the end are written at once either way.
	// The worker sets it; the runner command does not (RUNNER.md: every
	// fact at once).
	LazySettledFacts bool
	// Containment returns the host's verified containment (the sandbox
	// self-test's report). Every attempt requires its mode's class:
	// verified by the kernel, the attempt runs inside the sandbox; else a
	// provider's own verified sandbox (codex) counts, else the attempt
	// fails closed unless Options.AllowUnverifiedContainment accepts an
	// unrestricted one. Default: sandbox.Verify (the self-test, run once
	// per process with SandboxExe).
	Containment func() sandbox.Report
	// SandboxExe is the sandbox launcher: a binary whose main (or
	// TestMain) calls sandbox.Enter first. Default: sandbox.Executable().
	SandboxExe string
}

// withDefaults returns c with every unset field defaulted.
func (c Config) withDefaults() Config {
	if c.Lookup == nil {
		c.Lookup = providers.Lookup
	}
	if c.Env == nil {
		c.Env = EnvMap(os.Environ())
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Stdout == nil {
		c.Stdout = os.Stdout
	}
	if c.Stderr == nil {
		c.Stderr = os.Stderr
	}
	if c.Options == nil {
		o := policy.DefaultOptions()
		c.Options = &o
	}
	c.CaptureLimit = cmp.Or(c.CaptureLimit, DefaultCaptureLimit)
	c.RetryDelay = cmp.Or(c.RetryDelay, DefaultRetryDelay)
	c.KillGrace = cmp.Or(c.KillGrace, DefaultKillGrace)
	c.ActivityFlush = cmp.Or(c.ActivityFlush, DefaultActivityFlush)
	if c.SandboxExe == "" {
		c.SandboxExe, _ = sandbox.Executable() // "" fails each contained launch closed
	}
	if c.Containment == nil {
		exe := c.SandboxExe
		c.Containment = func() sandbox.Report { return sandbox.Verify(exe) }
	}
	return c
}

// Validate reports a Config that cannot run an attempt: negative limits or
// durations. Unset fields are valid (they take their defaults).
func (c Config) Validate() error {
	var errs []error
	if c.CaptureLimit < 0 {
		errs = append(errs, errors.New("runner: CaptureLimit must not be negative"))
	}
	if c.RetryDelay < 0 {
		errs = append(errs, errors.New("runner: RetryDelay must not be negative"))
	}
	if c.KillGrace < 0 {
		errs = append(errs, errors.New("runner: KillGrace must not be negative"))
	}
	if c.ActivityFlush < 0 {
		errs = append(errs, errors.New("runner: ActivityFlush must not be negative"))
	}
	return errors.Join(errs...)
}

// Runner executes attempts (Run) and `switchyard runner` command lines
// (Main, Status). It is safe for concurrent use; each Run is one attempt.
type Runner struct {
	cfg Config
}

// New validates cfg and returns a Runner with defaults applied.
func New(cfg Config) (*Runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Runner{cfg: cfg.withDefaults()}, nil
}

// EnvMap turns NAME=value pairs (os.Environ form) into a map; a later
// duplicate wins, as in exec.Cmd.
func EnvMap(pairs []string) map[string]string {
	m := make(map[string]string, len(pairs))
	for _, kv := range pairs {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			m[k] = v
		}
	}
	return m
}
