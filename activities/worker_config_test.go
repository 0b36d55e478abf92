package activities

import (
	"log/slog"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/policy"
)

// validWorkerConfig has every required field, on in-memory seams.
func validWorkerConfig() WorkerConfig {
	return WorkerConfig{
		Queue: events.NewMemoryQueue(), Claims: events.NewMemoryClaims(nil), Store: events.NewMemoryStore(),
		Providers: []policy.Provider{policy.Codex, policy.Claude},
	}
}

func TestWorkerConfigValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		mutate func(*WorkerConfig)
		want   string // "" means valid
	}{
		{"minimal", func(*WorkerConfig) {}, ""},
		{"no queue", func(c *WorkerConfig) { c.Queue = nil }, "Queue is required"},
		{"no claims", func(c *WorkerConfig) { c.Claims = nil }, "Claims is required"},
		{"no store", func(c *WorkerConfig) { c.Store = nil }, "Store is required"},
		{"no providers", func(c *WorkerConfig) { c.Providers = nil }, "at least one provider"},
		{"bad provider", func(c *WorkerConfig) { c.Providers = []policy.Provider{"Codex!"} }, `provider "Codex!"`},
		{"native is no provider", func(c *WorkerConfig) { c.Providers = []policy.Provider{"native"} }, `provider "native"`},
		{"repeated provider", func(c *WorkerConfig) { c.Providers = []policy.Provider{policy.Codex, policy.Codex} }, "given twice"},
		{"negative concurrency", func(c *WorkerConfig) { c.Concurrency = -1 }, "Concurrency -1"},
		{"huge concurrency", func(c *WorkerConfig) { c.Concurrency = MaxConcurrency + 1 }, "Concurrency 65"},
		{"worker id with a space", func(c *WorkerConfig) { c.WorkerID = "a b" }, "WorkerID"},
		{"negative ttl", func(c *WorkerConfig) { c.LeaseTTL = -time.Second }, "LeaseTTL must not be negative"},
		{"tiny ack wait", func(c *WorkerConfig) { c.AckWait = time.Millisecond }, "AckWait 1ms"},
		{"negative grace", func(c *WorkerConfig) { c.ShutdownGrace = -1 }, "ShutdownGrace must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := validWorkerConfig()
			tc.mutate(&c)
			err := c.Validate()
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
			_, err = NewWorker(c)
			require.Error(t, err, "NewWorker validates")
		})
	}
}

func TestWorkerDefaults(t *testing.T) {
	t.Parallel()
	w, err := NewWorker(validWorkerConfig())
	require.NoError(t, err)
	require.Equal(t, DefaultConcurrency, w.cfg.Concurrency)
	require.Equal(t, DefaultLeaseTTL, w.cfg.LeaseTTL)
	require.Equal(t, events.DefaultAckWait, w.cfg.AckWait)
	require.Equal(t, DefaultShutdownGrace, w.cfg.ShutdownGrace)
	require.NoError(t, events.ValidateWorkerID(w.ID()))
	require.Regexp(t, regexp.MustCompile(`^.+-\d+-[0-9a-f]{8}$`), w.ID())
	other, err := NewWorker(validWorkerConfig())
	require.NoError(t, err)
	require.NotEqual(t, w.ID(), other.ID(), "default ids are unique per worker")
	require.Equal(t, 10*time.Second, w.heartbeatInterval(), "a third of the shorter of lease and ack wait")
	require.Equal(t, slog.DiscardHandler, w.cfg.Logger.Handler(), "a nil Logger discards, as in engine.Config")
}

// TestWorkerConfigJoinsErrors proves Validate reports every problem at
// once, not only the first.
func TestWorkerConfigJoinsErrors(t *testing.T) {
	t.Parallel()
	c := validWorkerConfig()
	c.Queue, c.Concurrency, c.LeaseTTL = nil, -1, -time.Second
	err := c.Validate()
	for _, want := range []string{"Queue is required", "Concurrency -1", "LeaseTTL must not be negative"} {
		require.ErrorContains(t, err, want)
	}
}

// TestRunnerOptions proves the attempt the worker hands the runner: the
// job's descriptor and paths, a deny or approved spend (an unset or legacy
// one stays legacy), the contract, and the timeout to the millisecond.
func TestRunnerOptions(t *testing.T) {
	t.Parallel()
	base := eventstest.SampleJob("R1", 0, "x1")
	p := base.Paths
	want := func(mod func(*runner.Options)) runner.Options {
		o := runner.Options{Parent: policy.ParentClaude, Provider: policy.Codex, Model: "gpt-5.6-sol", Effort: policy.EffortMax,
			Mode: policy.ReadOnly, Prompt: p.Prompt, Cwd: p.Cwd, Output: p.Output, Receipt: p.Receipt, Progress: p.Progress,
			ExecutionID: "x1", APISpend: policy.APISpendDeny, Contract: policy.ContractLegacy, Timeout: 1800 * time.Second,
			StallTimeout: runner.DefaultStallTimeout}
		mod(&o)
		return o
	}
	for _, tc := range []struct {
		name   string
		mutate func(*events.Job)
		want   runner.Options
	}{
		{"deny spend and timeout", func(*events.Job) {}, want(func(*runner.Options) {})},
		{"approved spend", func(j *events.Job) { j.APISpend = policy.APISpendApproved }, want(func(o *runner.Options) { o.APISpend = policy.APISpendApproved })},
		{"unset spend stays legacy", func(j *events.Job) { j.APISpend = policy.APISpendUnset }, want(func(o *runner.Options) { o.APISpend = "" })},
		{"legacy spend stays legacy", func(j *events.Job) { j.APISpend = policy.APISpendLegacy }, want(func(o *runner.Options) { o.APISpend = "" })},
		{"fractional timeout", func(j *events.Job) { j.TimeoutMs = 1500 }, want(func(o *runner.Options) { o.Timeout = 1500 * time.Millisecond })},
		{"no timeout", func(j *events.Job) { j.TimeoutMs = 0 }, want(func(o *runner.Options) { o.Timeout = 0 })},
		{"strict contract", func(j *events.Job) { j.Contract = policy.ContractStrict }, want(func(o *runner.Options) { o.Contract = policy.ContractStrict })},
		{"unverified containment allowed", func(j *events.Job) { j.AllowUnverifiedContainment = true }, want(func(o *runner.Options) { o.AllowUnverifiedContainment = true })},
		{"opencode chatgpt subscription", func(j *events.Job) {
			j.Provider, j.Model, j.Effort, j.OpenCodeChatGPTSubscription = policy.OpenCode, events.OpenCodeChatGPTModel, policy.EffortDefault, true
		}, want(func(o *runner.Options) {
			o.Provider, o.Model, o.Effort, o.OpenCodeChatGPTSubscription = policy.OpenCode, "openai/gpt-6.1-sol", policy.EffortDefault, true
		})},
		{"values that look like flags stay values", func(j *events.Job) { j.Model = "--weird" }, want(func(o *runner.Options) { o.Model = "--weird" })},
		{"stall timeout 0 is the default", func(j *events.Job) { j.StallTimeoutMs = 0 }, want(func(o *runner.Options) { o.StallTimeout = 300 * time.Second })},
		{"stall timeout to the millisecond", func(j *events.Job) { j.StallTimeoutMs = 1500 }, want(func(o *runner.Options) { o.StallTimeout = 1500 * time.Millisecond })},
		{"stall watchdog off arms none", func(j *events.Job) { j.StallTimeoutMs, j.StallWatchdogOff = 0, true }, want(func(o *runner.Options) { o.StallTimeout = 0 })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := base
			tc.mutate(&j)
			o, err := runnerOptions(j)
			require.NoError(t, err)
			require.Equal(t, tc.want, o)
		})
	}
	for _, ms := range []int64{-1, runner.MaxStallTimeoutMS + 1} {
		j := base
		j.StallTimeoutMs = ms
		_, err := runnerOptions(j)
		require.ErrorContains(t, err, "stall timeout", "%d", ms)
	}
}
