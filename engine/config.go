package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// Defaults of Config.
const (
	// DefaultCancelGrace is how long a run waits, after cancelling a lane
	// whose attempt was running, for the worker's report of that attempt
	// (normally its cancelled receipt) before it records run-final.
	DefaultCancelGrace = 30 * time.Second
	// DefaultNativeLeaseTTL is the lease a native job's claim records. The
	// parent harness never renews it and nothing redelivers an acknowledged
	// native job, so it only has to be positive and long.
	DefaultNativeLeaseTTL = 24 * time.Hour
	// DefaultNativePoll is how long NativeNext without wait looks for a
	// queued native job before answering that there is none.
	DefaultNativePoll = time.Second
	// DefaultEligibilityWait is how long the eligibility gate waits for a
	// fresh capacity report it asked a provider's workers for.
	DefaultEligibilityWait = 10 * time.Second
	// DefaultActor is recorded as who gave a verdict or a cancel.
	DefaultActor = "parent"
)

// Config configures an Engine. Store, Queue, Claims, DataDir and Capacity
// are required; every other field has the documented default.
type Config struct {
	// Store is the event log (events.JetStream.Store or
	// events.NewMemoryStore). Required.
	Store events.Store
	// Queue carries jobs to workers and reports back. Required; it must
	// also implement events.ControlQueue (both events implementations do),
	// which carries verdicts, operation results and cancels to the engine.
	Queue events.Queue
	// Claims holds execution claims; NativeNext claims native jobs with it
	// so each is handed out once. Required.
	Claims events.Claims
	// DataDir is the data directory. Each execution's files live under
	// <DataDir>/runs/<run>/L<lane>/<execution>/ (prompt copy, output,
	// receipt, progress) and each writer attempt's git worktree under
	// <DataDir>/worktrees/<run>/L<lane>/<execution>. Required; made
	// absolute by New. Every process of one deployment (serve, the CLI,
	// workers) must see the same directory.
	DataDir string
	// Policy is the role catalog and native coverage used to resolve sheets
	// and to replay. Default policy.DefaultOptions() (used when Catalog is
	// nil).
	Policy policy.Options
	// Now is the clock stamped on events. Default time.Now.
	Now func() time.Time
	// Logger receives the engine's logs. Default: discard.
	Logger *slog.Logger
	// NewID mints run ids, execution ids and control ids; each must pass
	// events.ValidateExecutionID. Default uuid.NewString.
	NewID func() string
	// Actor is recorded as who gave verdicts and cancels sent through this
	// Engine. Default DefaultActor.
	Actor string
	// CancelGrace: see DefaultCancelGrace. Default DefaultCancelGrace.
	CancelGrace time.Duration
	// NativeLeaseTTL: see DefaultNativeLeaseTTL. Default
	// DefaultNativeLeaseTTL.
	NativeLeaseTTL time.Duration
	// NativePoll: see DefaultNativePoll. Default DefaultNativePoll.
	NativePoll time.Duration
	// Capacity holds each provider's current capacity report, which the
	// eligibility gate reads before every launch. Required.
	Capacity events.Capacity
	// EligibilityWait bounds how long the gate waits for a provider's
	// workers to answer a refresh request when it has no current report.
	// Default DefaultEligibilityWait.
	EligibilityWait time.Duration
	// CapacityMaxAge: a report older than this is stale (unknown). Default
	// policy.DefaultCapacityMaxAge.
	CapacityMaxAge time.Duration
	// Containment returns an attempt's containment for its access mode,
	// which the eligibility gate requires before routing. Default:
	// runner.ContainmentOf over this process's sandbox self-test
	// (sandbox.Verify), the same evidence the host's workers launch
	// under: serve and its workers share the host and binary.
	Containment func(spec *providers.Spec, mode policy.Access) policy.ContainmentEvidence
	// SubmitVia, when set, sends Submit's run-created event to the engine
	// that serves the store (events.JetStream.Submit) instead of appending
	// it: a parent's connection may not write the events stream. Nil: Submit
	// appends itself (the engine's own connection).
	SubmitVia func(ctx context.Context, env events.Envelope) error
}

// Validate reports every missing or invalid setting, joined
// (errors.Join). Unset optional fields are valid (they take their
// defaults).
func (c Config) Validate() error {
	var errs []error
	if c.Store == nil {
		errs = append(errs, errors.New("engine: config: Store is required"))
	}
	if c.Queue == nil {
		errs = append(errs, errors.New("engine: config: Queue is required"))
	} else if _, ok := c.Queue.(events.ControlQueue); !ok {
		errs = append(errs, fmt.Errorf("engine: config: Queue %T does not implement events.ControlQueue", c.Queue))
	}
	if c.Claims == nil {
		errs = append(errs, errors.New("engine: config: Claims is required"))
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("engine: config: DataDir is required"))
	}
	if c.Capacity == nil {
		errs = append(errs, errors.New("engine: config: Capacity is required: the eligibility gate reads each provider's capacity report from it before every launch (events.JetStream's capacity bucket, or events.NewMemoryCapacity)"))
	}
	if c.CancelGrace < 0 || c.NativeLeaseTTL < 0 || c.NativePoll < 0 || c.EligibilityWait < 0 || c.CapacityMaxAge < 0 {
		errs = append(errs, errors.New("engine: config: durations must not be negative"))
	}
	if c.Actor != "" {
		if err := events.ValidateWorkerID(c.Actor); err != nil {
			errs = append(errs, fmt.Errorf("engine: config: Actor: %w", err))
		}
	}
	return errors.Join(errs...)
}

// withDefaults returns c with every unset field at its default and DataDir
// absolute.
func (c Config) withDefaults() (Config, error) {
	if c.Policy.Catalog == nil {
		c.Policy = policy.DefaultOptions()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.NewID == nil {
		c.NewID = uuid.NewString
	}
	c.Actor = cmp.Or(c.Actor, DefaultActor)
	c.CancelGrace = cmp.Or(c.CancelGrace, DefaultCancelGrace)
	c.NativeLeaseTTL = cmp.Or(c.NativeLeaseTTL, DefaultNativeLeaseTTL)
	c.NativePoll = cmp.Or(c.NativePoll, DefaultNativePoll)
	c.EligibilityWait = cmp.Or(c.EligibilityWait, DefaultEligibilityWait)
	c.CapacityMaxAge = cmp.Or(c.CapacityMaxAge, policy.DefaultCapacityMaxAge)
	if c.Containment == nil {
		c.Containment = HostContainment
	}
	dir, err := filepath.Abs(c.DataDir)
	if err != nil {
		return c, fmt.Errorf("engine: config: DataDir: %w", err)
	}
	c.DataDir = dir
	return c, nil
}
