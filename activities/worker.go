package activities

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/nats-io/nats.go"

	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/activities/sandbox"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// Defaults of WorkerConfig.
const (
	// DefaultConcurrency is how many jobs of one provider a worker runs at
	// once: the provider RFC's concurrency cap.
	DefaultConcurrency = 2
	// DefaultLeaseTTL is the execution claim's time to live. The lease is
	// renewed every TTL/3; another worker treats it as stale once it has
	// watched it unchanged for longer than the TTL.
	DefaultLeaseTTL = 30 * time.Second
	// DefaultShutdownGrace bounds how long Run keeps publishing final
	// reports, releasing claims and acknowledging jobs after its context is
	// done.
	DefaultShutdownGrace = 10 * time.Second
	// DefaultQuotaRefresh is how often a worker re-acquires its providers'
	// capacity reports.
	DefaultQuotaRefresh = 5 * time.Minute
	// DefaultExhaustionCooldown is how long a proved exhaustion of a provider
	// that gives no reset time keeps it excluded.
	DefaultExhaustionCooldown = time.Hour
)

// MaxConcurrency bounds WorkerConfig.Concurrency; it equals
// events.MaxProviderCap, the largest deployment cap.
const MaxConcurrency = events.MaxProviderCap

// WorkerConfig configures a Worker. Queue, Claims, Store and Providers are
// required; every other zero field takes its documented default.
type WorkerConfig struct {
	// Queue delivers jobs and carries reports.
	Queue events.Queue
	// Claims holds the execution claims and their leases.
	Claims events.Claims
	// Store is watched for cancel events of a running job's lane (or its
	// whole run), and read to check every job against its execution's
	// recorded launch before anything is claimed or run.
	Store events.Store
	// DataDir, when set, is the data directory the engine prepares
	// executions in: a job's files must then lie in its execution's area
	// (<DataDir>/runs/<run>/L<lane>/<execution>, and for a writer its
	// worktree <DataDir>/worktrees/<run>/L<lane>/<execution>), or the job
	// is refused.
	DataDir string
	// Presence, when set, is where the worker announces itself while it
	// runs (every TTL/3, withdrawn on a clean stop), so status can say
	// which providers have live workers. Optional.
	Presence events.Presence
	// Providers are the providers this worker runs: one durable pull
	// consumer per provider subject (events.JobSubject), shared with every
	// other worker of that provider.
	Providers []policy.Provider
	// NoCLI are the providers among Providers whose CLI was not found at
	// start; the worker's presence announces them (status shows it).
	NoCLI []policy.Provider
	// Concurrency is how many jobs of each provider run at once in this
	// worker; it is also how many of that provider's jobs the worker holds.
	// It is a per-process upper bound only: the deployment's cap of each
	// provider (events.Caps, enforced by JetStream across all workers)
	// decides how many run in total, so a worker may hold fewer. Binding
	// never changes that cap. Default DefaultConcurrency, at most
	// MaxConcurrency.
	Concurrency int
	// WorkerID names this worker in claims and reports. It must be unique
	// to this process: a restarted worker must not reuse the id of one that
	// may have crashed with executions claimed. Default
	// "<hostname>-<pid>-<random>"; checked with events.ValidateWorkerID.
	WorkerID string
	// LeaseTTL is the claim's time to live, renewed every LeaseTTL/3.
	// Default DefaultLeaseTTL.
	LeaseTTL time.Duration
	// AckWait is the jobs' ack wait (events.JobOptions.AckWait), kept fresh
	// with Delivery.InProgress while a job runs. A crashed worker's job is
	// redelivered after it, and the worker that gets it back abandons the
	// attempt once it has watched the lease unchanged for its TTL: a
	// crashed attempt is reported abandoned about AckWait + 1.25×LeaseTTL
	// after the crash. Default events.DefaultAckWait.
	AckWait time.Duration
	// ShutdownGrace bounds the final reports after Run's context is done.
	// Default DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// CancelPoll is how often a running attempt reads its lane's and its
	// run's logs for a cancel besides the reads a cancel notice triggers
	// (events.JetStreamStore.CancelNotices), for a cancel whose notice it
	// missed: one published while the connection was down, or with no
	// permission to follow the events. Default DefaultCancelPoll.
	CancelPoll time.Duration
	// Env is the parent environment handed to the runner (PATH for binary
	// discovery, HOME, billing-guard variables). Default os.Environ() at
	// NewWorker.
	Env map[string]string
	// Now is the clock for reports and lease observations. Default time.Now.
	Now func() time.Time
	// Logger receives the worker's log. Nil discards it (as engine.Config
	// does); cmd/switchyard passes its logger explicitly.
	Logger *slog.Logger
	// Offline, when set, reports whether the connection to the server is
	// known to be down (or has only just come back). Failures the worker
	// retries are then logged at debug level instead of as a warning per
	// lease per beat: whoever watches the connection logs its loss once
	// and its recovery once. Default: every such failure is a warning.
	Offline func() bool
	// RunnerConfig, when set, returns the runner configuration for a job
	// (tests shorten grace periods with it). The worker supplies Env and
	// Now when they are unset.
	RunnerConfig func(job events.Job) runner.Config
	// Observer, when set, is told of claim and lease failures (the
	// worker's Prometheus metrics). Optional.
	Observer Observer
	// Capacity, when set, is where the worker puts its providers' capacity
	// reports: at start, every QuotaRefresh, on a refresh request, and
	// right after an attempt ends usage-exhausted. Optional (a worker
	// without it acquires nothing).
	Capacity events.Capacity
	// QuotaRefresh is the period of capacity acquisition. Default
	// DefaultQuotaRefresh.
	QuotaRefresh time.Duration
	// Commands, when set, is the connection on which the worker answers
	// the worker commands (events.WorkerCommands: capabilities,
	// transport_status) while it runs, on its own subject
	// (events.CommandSubject). Optional.
	Commands *nats.Conn
	// ExhaustionCooldown is how long a usage exhaustion an attempt proved
	// is carried to later runs when the provider gives no reset time.
	// Default DefaultExhaustionCooldown.
	ExhaustionCooldown time.Duration
}

// withDefaults returns c with every unset field defaulted.
func (c WorkerConfig) withDefaults() WorkerConfig {
	c.Concurrency = cmp.Or(c.Concurrency, DefaultConcurrency)
	c.WorkerID = cmp.Or(c.WorkerID, defaultWorkerID())
	c.LeaseTTL = cmp.Or(c.LeaseTTL, DefaultLeaseTTL)
	c.AckWait = cmp.Or(c.AckWait, events.DefaultAckWait)
	c.ShutdownGrace = cmp.Or(c.ShutdownGrace, DefaultShutdownGrace)
	if c.Env == nil {
		c.Env = runner.EnvMap(os.Environ())
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate reports a WorkerConfig that cannot run: a missing seam, no or
// invalid or repeated providers, a concurrency out of range, an invalid
// worker id, or a negative duration. Unset optional fields are valid.
func (c WorkerConfig) Validate() error {
	var errs []error
	if c.Queue == nil {
		errs = append(errs, errors.New("activities: worker Queue is required"))
	}
	if c.Claims == nil {
		errs = append(errs, errors.New("activities: worker Claims is required"))
	}
	if c.Store == nil {
		errs = append(errs, errors.New("activities: worker Store is required"))
	}
	if len(c.Providers) == 0 {
		errs = append(errs, errors.New("activities: worker needs at least one provider"))
	}
	seen := map[policy.Provider]bool{}
	for _, p := range c.Providers {
		if err := events.ValidateProvider(string(p)); err != nil {
			errs = append(errs, fmt.Errorf("activities: worker provider %q: %w", p, err))
		}
		if seen[p] {
			errs = append(errs, fmt.Errorf("activities: worker provider %q given twice", p))
		}
		seen[p] = true
	}
	if c.Concurrency < 0 || c.Concurrency > MaxConcurrency {
		errs = append(errs, fmt.Errorf("activities: worker Concurrency %d: want 1-%d (0 for the default)", c.Concurrency, MaxConcurrency))
	}
	if c.WorkerID != "" {
		if err := events.ValidateWorkerID(c.WorkerID); err != nil {
			errs = append(errs, fmt.Errorf("activities: WorkerID: %w", err))
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"LeaseTTL", c.LeaseTTL}, {"AckWait", c.AckWait}, {"ShutdownGrace", c.ShutdownGrace},
		{"QuotaRefresh", c.QuotaRefresh}, {"ExhaustionCooldown", c.ExhaustionCooldown}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("activities: worker %s must not be negative", d.name))
		} else if d.v > 0 && d.v < minWorkerDuration {
			errs = append(errs, fmt.Errorf("activities: worker %s %v: want at least %v", d.name, d.v, minWorkerDuration))
		}
	}
	return errors.Join(errs...)
}

// minWorkerDuration keeps heartbeats (a third of the shortest of LeaseTTL
// and AckWait) above a few milliseconds.
const minWorkerDuration = 30 * time.Millisecond

// Worker runs the jobs of its providers: it claims each execution before
// anything starts, runs it with the runner while keeping the lease and the
// job's ack deadline fresh, forwards cancellations to the child, and
// reports claimed, finished or abandoned.
type Worker struct {
	cfg     WorkerConfig
	log     *slog.Logger
	running atomic.Bool
	// noNotices logs, once, that the server refused this worker the
	// events' subjects (cancelNotices).
	noNotices sync.Once

	mu sync.Mutex
	// active holds the executions this worker is handling, so a
	// redelivery of one of them (after a missed InProgress) never runs it
	// a second time here.
	active map[string]bool
	// unconfirmed holds executions whose Claim failed without an answer:
	// the claim may have been stored. Such a claim, found held by this
	// worker and never renewed, is this worker's and nothing was started
	// under it.
	unconfirmed map[string]bool

	// capacity acquires the providers' capacity reports (nil without
	// WorkerConfig.Capacity).
	capacity *capacityLoop

	// lookup finds a provider's spec (providers.Lookup; tests count calls).
	lookup func(policy.Provider) (*providers.Spec, error)

	// trace, when set (tests), observes the worker's decisions.
	trace func(workerEvent)

	// draining is closed by Drain: the slots take no new job, the running
	// attempts go on.
	draining  chan struct{}
	drainOnce sync.Once
	// inFlight counts the executions this worker has claimed and not yet
	// settled (Drain's log says how many it waits for).
	inFlight atomic.Int64

	// healthSeq numbers the stall health observations this worker reports
	// (events.Stall.HealthObservationSeq): a Worker reports over the one
	// connection its Queue holds for its whole life, so the sequence is
	// that connection's, starting at zero with the Worker.
	healthSeq atomic.Uint64
}

// nextHealthObservation is the next connection-scoped health observation
// sequence number: 1 for the first, unique and increasing under
// concurrency.
func (w *Worker) nextHealthObservation() *uint64 {
	n := w.healthSeq.Add(1)
	return &n
}

// NewWorker validates cfg and returns a Worker with defaults applied.
func NewWorker(cfg WorkerConfig) (*Worker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	cfg.Providers = append([]policy.Provider(nil), cfg.Providers...)
	w := &Worker{
		cfg:         cfg,
		log:         cfg.Logger.With("worker", cfg.WorkerID),
		active:      map[string]bool{},
		unconfirmed: map[string]bool{},
		lookup:      providers.Lookup,
		draining:    make(chan struct{}),
	}
	if cfg.Capacity != nil {
		w.capacity = newCapacityLoop(w)
	}
	return w, nil
}

// ID is the worker id used in claims and reports.
func (w *Worker) ID() string { return w.cfg.WorkerID }

// Drain makes the worker take no new job: its slots stop pulling, a job
// taken but not yet claimed goes back to the queue (as does one whose
// execution another worker holds, which it was watching), and every attempt
// already claimed runs to its end and is reported as usual. Run returns
// once they have. Cancelling Run's context still stops the running
// attempts at once. Drain may be called before or during Run, more than
// once; it returns the number of attempts running when it was called.
func (w *Worker) Drain() int {
	w.drainOnce.Do(func() { close(w.draining) })
	return int(w.inFlight.Load())
}

// Draining reports whether Drain was called.
func (w *Worker) Draining() bool {
	select {
	case <-w.draining:
		return true
	default:
		return false
	}
}

// Running is the number of attempts this worker has claimed and not yet
// settled.
func (w *Worker) Running() int { return int(w.inFlight.Load()) }

// Run consumes jobs until ctx is done or Drain is called, running up to Concurrency jobs per
// provider at once. When ctx is done it stops taking jobs, signals every
// running child (the runner forwards SIGTERM to the child's process group
// and records a cancelled receipt), waits for them, and publishes their
// final reports within ShutdownGrace. On return every child this worker
// started has been signalled and reaped. It returns nil after a shutdown
// by ctx, or the error that kept it from subscribing. A Worker runs once
// at a time.
func (w *Worker) Run(ctx context.Context) error {
	if !w.running.CompareAndSwap(false, true) {
		return errors.New("activities: worker is already running")
	}
	defer w.running.Store(false)
	consumers := make([]events.JobConsumer, len(w.cfg.Providers))
	for i, p := range w.cfg.Providers {
		c, err := w.cfg.Queue.Jobs(ctx, events.JobSubject(string(p)), events.JobOptions{AckWait: w.cfg.AckWait})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("activities: worker subscribe %s: %w", p, err)
		}
		consumers[i] = c
	}
	// The sandbox self-test runs once per process, before any job: every
	// attempt's containment is what it proved (activities/sandbox).
	rep := sandbox.Verify("")
	w.log.Info("containment self-test", "readOnly", rep.ReadOnly.String(), "writer", rep.Writer.String())
	w.log.Info("worker started", "providers", w.cfg.Providers, "concurrency", w.cfg.Concurrency,
		"leaseTTL", w.cfg.LeaseTTL, "ackWait", w.cfg.AckWait)
	var wg sync.WaitGroup
	if w.cfg.Presence != nil {
		// Announced before the first job is taken, so a worker that runs
		// a job is already listed.
		rec, failing := w.announceFirst(ctx)
		pctx, stopPresence := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			w.announce(pctx, rec, failing)
		}()
		defer func() {
			stopPresence()
			<-done
		}()
	}
	if w.cfg.Commands != nil {
		stop, err := w.serveCommands()
		if err != nil {
			w.log.Warn("cannot answer worker commands; doctor will not see this worker's capabilities", "err", err)
		} else {
			defer stop()
		}
	}
	if w.capacity != nil {
		// Beside the job slots, never in their way: acquisition has its
		// own goroutines and stops with the worker.
		cctx, stopCapacity := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			w.capacity.run(cctx)
		}()
		defer func() {
			stopCapacity()
			<-done
		}()
	}
	// The slots take jobs under takeCtx, which Drain ends too; what they
	// have claimed runs under ctx.
	takeCtx, stopTaking := context.WithCancel(ctx)
	defer stopTaking()
	go func() {
		select {
		case <-w.draining:
			stopTaking()
		case <-takeCtx.Done():
		}
	}()
	for i, p := range w.cfg.Providers {
		for range w.cfg.Concurrency {
			wg.Go(func() { w.pull(ctx, takeCtx, p, consumers[i]) })
		}
	}
	wg.Wait()
	w.log.Info("worker stopped")
	return nil
}

// pull is one of a provider's slots: it takes one job at a time under
// takeCtx and handles it to the end under ctx before taking the next.
func (w *Worker) pull(ctx, takeCtx context.Context, p policy.Provider, c events.JobConsumer) {
	bo := events.Backoff{Min: retryMin, Max: retryMax}
	for {
		d, err := c.Next(takeCtx)
		if takeCtx.Err() != nil {
			if d != nil {
				// Taken as the worker stopped taking jobs: give it
				// straight back.
				w.nak(ctx, w.log, d, 0)
			}
			return
		}
		if err != nil {
			if errors.Is(err, events.ErrInvalid) {
				w.log.Warn("malformed job removed", "provider", p, "err", err)
				continue
			}
			w.retrying(w.log, "cannot take the next job; retrying", "provider", p, "err", err, "in", bo.Current())
			if !bo.Wait(takeCtx) {
				return
			}
			continue
		}
		bo.Reset()
		w.handle(ctx, takeCtx, p, d)
	}
}

// markActive records that this worker handles execution id; false if it
// already does.
func (w *Worker) markActive(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.active[id] {
		return false
	}
	w.active[id] = true
	return true
}

func (w *Worker) unmarkActive(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.active, id)
}

func (w *Worker) markUnconfirmed(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.unconfirmed[id] = true
}

// takeUnconfirmed reports and forgets whether id's claim was unconfirmed.
func (w *Worker) takeUnconfirmed(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	ok := w.unconfirmed[id]
	delete(w.unconfirmed, id)
	return ok
}

// defaultWorkerID is "<hostname>-<pid>-<8 hex digits>", with anything in
// the host name that a worker id refuses replaced by '_'.
func defaultWorkerID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "worker"
	}
	host = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) && !unicode.IsSpace(r) {
			return r
		}
		return '_'
	}, host)
	if r := []rune(host); len(r) > 50 {
		host = string(r[:50])
	}
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// retrying logs a failure the worker retries: a warning, or a debug line
// while the connection is known to be down (WorkerConfig.Offline), when
// every lease, slot and watch would otherwise warn on every try.
func (w *Worker) retrying(log *slog.Logger, msg string, args ...any) {
	if w.cfg.Offline != nil && w.cfg.Offline() {
		log.Debug(msg, args...)
		return
	}
	log.Warn(msg, args...)
}
