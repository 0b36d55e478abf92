package activities

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
}

func TestRunnerArgs(t *testing.T) {
	t.Parallel()
	base := eventstest.SampleJob("R1", 0, "x1")
	p := base.Paths
	common := []string{"--parent=claude", "--provider=codex", "--model=gpt-5.6-sol", "--effort=max", "--mode=read-only",
		"--prompt=" + p.Prompt, "--cwd=" + p.Cwd, "--output=" + p.Output, "--receipt=" + p.Receipt,
		"--progress=" + p.Progress, "--execution-id=x1"}
	for _, tc := range []struct {
		name   string
		mutate func(*events.Job)
		tail   []string
	}{
		{"deny spend and timeout", func(*events.Job) {}, []string{"--api-spend=deny", "--contract=legacy", "--timeout=1800"}},
		{"approved spend", func(j *events.Job) { j.APISpend = policy.APISpendApproved }, []string{"--api-spend=approved", "--contract=legacy", "--timeout=1800"}},
		{"unset spend is omitted", func(j *events.Job) { j.APISpend = policy.APISpendUnset }, []string{"--contract=legacy", "--timeout=1800"}},
		{"legacy spend is omitted", func(j *events.Job) { j.APISpend = policy.APISpendLegacy }, []string{"--contract=legacy", "--timeout=1800"}},
		{"fractional timeout", func(j *events.Job) { j.TimeoutMs = 1500 }, []string{"--api-spend=deny", "--contract=legacy", "--timeout=1.5"}},
		{"no timeout", func(j *events.Job) { j.TimeoutMs = 0 }, []string{"--api-spend=deny", "--contract=legacy"}},
		{"strict contract", func(j *events.Job) { j.Contract = policy.ContractStrict }, []string{"--api-spend=deny", "--contract=strict", "--timeout=1800"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := base
			tc.mutate(&j)
			args := runnerArgs(j)
			require.Equal(t, append(append([]string{}, common...), tc.tail...), args)
			o, err := parseRunnerFlags(args)
			require.NoError(t, err, "the runner accepts what the worker builds")
			require.Equal(t, j.ExecutionID, o.ExecutionID)
		})
	}
	t.Run("values that look like flags stay values", func(t *testing.T) {
		j := base
		j.Model = "--weird"
		o, err := parseRunnerFlags(runnerArgs(j))
		require.NoError(t, err)
		require.Equal(t, "--weird", o.Model)
		require.True(t, strings.HasPrefix(runnerArgs(j)[2], "--model="))
	})
}
