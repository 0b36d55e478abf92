package runner

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// The stall watchdog (seeds/execution-runtime-contract.md): a workload
// whose stdout shows no progress for the stall timeout is stopped and ends
// timed-out with a response_stalled error, after a joined close-grace fence
// and a bounded health probe.

// DefaultStallTimeout is the contract's DefaultResponseStallTimeoutMS
// (events.DefaultStallTimeoutMs) as a duration.
const DefaultStallTimeout = time.Duration(events.DefaultStallTimeoutMs) * time.Millisecond

// MaxStallTimeoutMS is the largest stall timeout accepted (the contract's
// maxSafeStallTimeoutMS): the most milliseconds a time.Duration holds, so
// the timeout never overflows as a timer. The watchdog never adds to it.
const MaxStallTimeoutMS = math.MaxInt64 / int64(time.Millisecond)

// ValidateStallTimeoutMS rejects a negative stall timeout and one above
// MaxStallTimeoutMS; zero is valid (it means the default).
func ValidateStallTimeoutMS(ms int64) error {
	if ms < 0 {
		return fmt.Errorf("stall timeout must not be negative, got %d ms", ms)
	}
	if ms > MaxStallTimeoutMS {
		return fmt.Errorf("stall timeout must be at most %d ms, got %d ms", MaxStallTimeoutMS, ms)
	}
	return nil
}

// ResolveStallTimeoutMS validates ms, then maps zero to the default.
func ResolveStallTimeoutMS(ms int64) (int64, error) {
	if err := ValidateStallTimeoutMS(ms); err != nil {
		return 0, err
	}
	if ms == 0 {
		return events.DefaultStallTimeoutMs, nil
	}
	return ms, nil
}

// StallProbeBound bounds the health probe after a stall (the contract's
// five seconds). A variable so tests can shorten it.
var StallProbeBound = 5 * time.Second

// stallFenceSlack is added to the kill grace to bound the close fence: a
// child stopped and reaped within KillGrace+stallFenceSlack closes it.
const stallFenceSlack = time.Second

// maxClassifiedLine caps one buffered stdout line for classification; a
// longer line is output flowing (a large delta or tool result) and counts
// as progress without being parsed.
const maxClassifiedLine = 4 << 20

// Probe classifications (events.Stall.Probe) and their health pairs.
const (
	probeAvailable   = "available"
	probeUnavailable = "unavailable"
	probeTimeout     = "timeout"
	probeError       = "error"
	probeUnsupported = "unsupported"
	probeUnknown     = "unknown"
	probeMismatch    = "identity_mismatch"
)

// stallIdentity is the exact target a health probe must be about: the
// adapter (the provider) and the target (the model the workload's argv
// pins).
type stallIdentity struct{ adapter, target string }

// probeOutcome is one health probe's typed result: the identity it
// probed and its classification.
type probeOutcome struct {
	stallIdentity
	class string
}

// checkProbeIdentity is the coordinator's identity check
// (execution-runtime-contract.md "Health probe contract"): an outcome
// counts only for the exact adapter and target that stalled. An empty or
// different identity, on either side, reads identity_mismatch (so
// health_unknown), whatever the probe reported; an unsupported probe that
// ran nothing stays unsupported.
func checkProbeIdentity(want stallIdentity, got probeOutcome) string {
	if got.class == probeUnsupported && got.stallIdentity == (stallIdentity{}) {
		return probeUnsupported
	}
	if want.adapter == "" || want.target == "" || got.stallIdentity != want {
		return probeMismatch
	}
	return got.class
}

// stallHealth maps a probe classification to the contract's pair: only
// available and a validated unavailable are definitive; everything else
// fails closed to health_unknown/unknown.
func stallHealth(probe string) (health, liveness string) {
	switch probe {
	case probeAvailable:
		return "request_stalled", "available"
	case probeUnavailable:
		return "provider_unhealthy", "unavailable"
	}
	return "health_unknown", "unknown"
}

// watchdog watches one workload's stdout. It is armed when the child
// starts (admission), resets on start and progress dispositions, disarms
// on a terminal, and fires once when the stream stays idle for timeout.
type watchdog struct {
	timeout  time.Duration
	classify func([]byte) providers.Disposition

	mu       sync.Mutex
	last     time.Time // last progress (monotonic)
	timer    *time.Timer
	disarmed bool // a terminal was seen or the child settled
	fired    chan struct{}
	idle     time.Duration

	line     []byte // the pending partial line (reader goroutine only)
	overflow bool   // the pending line exceeded maxClassifiedLine
}

func newWatchdog(timeout time.Duration, classify func([]byte) providers.Disposition) *watchdog {
	if classify == nil {
		classify = func(line []byte) providers.Disposition {
			if len(bytes.TrimSpace(line)) == 0 {
				return providers.DispositionNone
			}
			return providers.DispositionProgress
		}
	}
	return &watchdog{timeout: timeout, classify: classify, fired: make(chan struct{})}
}

// arm starts the timer at admission.
func (w *watchdog) arm() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last = time.Now()
	w.timer = time.AfterFunc(w.timeout, w.expire)
}

// expire fires the stall unless progress came since; then it re-arms for
// the remaining time.
func (w *watchdog) expire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.disarmed || closed(w.fired) {
		return
	}
	idle := time.Since(w.last)
	if idle < w.timeout {
		w.timer.Reset(w.timeout - idle)
		return
	}
	w.idle = idle
	close(w.fired)
}

// disarm stops the watchdog for good (a terminal, or the child settled).
func (w *watchdog) disarm() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.disarmed = true
	if w.timer != nil {
		w.timer.Stop()
	}
}

// isFired reports whether the stall was claimed.
func (w *watchdog) isFired() bool { return closed(w.fired) }

// idleFor is the idle duration measured when the stall fired.
func (w *watchdog) idleFor() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.idle
}

// note applies one disposition.
func (w *watchdog) note(d providers.Disposition) {
	switch d {
	case providers.DispositionStart, providers.DispositionProgress:
		w.mu.Lock()
		if !w.disarmed && !closed(w.fired) {
			w.last = time.Now()
		}
		w.mu.Unlock()
	case providers.DispositionTerminal:
		w.disarm()
	}
}

// feed splits a stdout chunk into lines and classifies each complete one.
// It is called only from the stdout reader goroutine.
func (w *watchdog) feed(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		part := b
		if i >= 0 {
			part = b[:i]
		}
		if !w.overflow {
			if len(w.line)+len(part) > maxClassifiedLine {
				w.overflow, w.line = true, nil
			} else {
				w.line = append(w.line, part...)
			}
		}
		if i < 0 {
			return
		}
		b = b[i+1:]
		if w.overflow {
			w.note(providers.DispositionProgress)
		} else {
			w.note(w.safeClassify(w.line))
		}
		w.line, w.overflow = w.line[:0], false
	}
}

// safeClassify runs the spec's classifier; a panic reads as none (the
// classifier must never take the reader down).
func (w *watchdog) safeClassify(line []byte) (d providers.Disposition) {
	defer func() {
		if recover() != nil {
			d = providers.DispositionNone
		}
	}()
	return w.classify(line)
}

// probeHealth runs the spec's sign-in/status probes once, bounded by
// StallProbeBound from a context of its own, and classifies the outcome.
// A provider whose probes do not prove the sign-in state
// (providers.HasSignInProbe: none, or only a version or configuration
// check) is unsupported and runs nothing; a probe that cannot start is an
// error; a bound that passes is a timeout. Only a definitive
// unauthenticated verdict (not one asking for a retry) reads as
// unavailable; any other failing verdict is unknown.
func (a *attempt) probeHealth(env []string) probeOutcome {
	id := stallIdentity{adapter: string(a.spec.Provider), target: a.req.CLIModel}
	class := a.probeClass(env)
	return probeOutcome{stallIdentity: id, class: class}
}

// probeClass runs the probes and classifies them (probeHealth).
func (a *attempt) probeClass(env []string) string {
	if !providers.HasSignInProbe(a.spec, a.req) {
		return probeUnsupported
	}
	probes := a.spec.Preflight(a.req)
	ctx, cancel := context.WithTimeoutCause(context.Background(), StallProbeBound, ErrDeadline)
	defer cancel()
	l := newLatch(ctx, nil)
	defer l.release()
	x := &executor{latch: l, limit: 1 << 20, killGrace: a.r.cfg.KillGrace}
	for i, argv := range probes {
		res, err := x.run(childSpec{role: rolePreflight, argv: argv, dir: a.req.Cwd, env: env})
		if err != nil {
			return probeError
		}
		if res.interrupted != notInterrupted {
			return probeTimeout
		}
		v := a.spec.ReadPreflight(a.req, i, res.capture)
		switch {
		case v.Status == "":
			continue
		case v.Status == policy.StatusUnauthenticated && !v.Retry:
			return probeUnavailable
		default:
			return probeUnknown
		}
	}
	return probeAvailable
}

// stalled records the response_stalled terminal: a timed-out receipt whose
// error names response_stalled and whose evidence is the allowlisted
// metadata only (never provider output).
func (a *attempt) stalled(res *childResult) {
	st := res.stall
	if res.signalSent != "" {
		a.rc.Signal = ptr(res.signalSent)
	}
	if a.rc.TimeoutMs == nil {
		// The stall timeout is the explicit deadline that ended the attempt.
		a.rc.TimeoutMs = ptr(st.TimeoutMs)
	}
	how := "the workload child had already exited"
	if res.signalSent != "" {
		how = "the runner sent " + res.signalSent + " to the workload's process group"
	}
	message := fmt.Sprintf("response_stalled: the %s stream showed no progress for %s (stall timeout %s); %s; provider health %s (probe %s)",
		a.o.Provider, time.Duration(st.IdleMs)*time.Millisecond, time.Duration(st.TimeoutMs)*time.Millisecond, how, st.ProviderHealth, st.Probe)
	evidence := fmt.Sprintf("diagnostic: response_stalled\nidleMs: %d\ntimeoutMs: %d\nproviderHealth: %s\nliveness: %s\nprobe: %s\nfenceClosed: %t",
		st.IdleMs, st.TimeoutMs, st.ProviderHealth, st.Liveness, st.Probe, st.FenceClosed)
	a.rc.Status = policy.StatusTimedOut
	a.rc.FailurePhase = ptr(policy.PhaseInvocation)
	a.rc.Error = receiptError(message, evidence)
	a.stall = st
}
