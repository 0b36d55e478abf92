package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/providers"
)

// interrupt says what stopped waiting on a child.
type interrupt int

const (
	notInterrupted interrupt = iota
	byCancel                 // context cancellation (a Signalled cause names SIGINT or SIGTERM)
	byDeadline               // the --timeout deadline passed
	byStall                  // the stall watchdog fired (workload only)
)

// latch is an attempt's cancellation and deadline, read from its
// context's cause: either fires at most once and stays fired, so every
// wait in the attempt sees it.
type latch struct {
	cancelled chan struct{} // closed on cancellation
	expired   chan struct{} // closed when the deadline passes
	signal    string        // SIGINT or SIGTERM; written before cancelled closes
	stop      chan struct{}
	done      chan struct{} // closed when the watcher goroutine returns
	onCancel  func(signal string)
}

// newLatch starts watching ctx: a cause matching ErrDeadline expires the
// latch, any other cause cancels it (with the Signalled signal, else
// SIGTERM). release must be called to stop the watcher.
func newLatch(ctx context.Context, onCancel func(string)) *latch {
	l := &latch{
		cancelled: make(chan struct{}),
		expired:   make(chan struct{}),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
		onCancel:  onCancel,
	}
	fire := func() {
		cause := context.Cause(ctx)
		if errors.Is(cause, ErrDeadline) {
			close(l.expired)
			return
		}
		l.signal = causeSignal(cause)
		if l.onCancel != nil {
			l.onCancel(l.signal)
		}
		close(l.cancelled)
	}
	if ctx.Err() != nil {
		// Already done: every stage sees it from the start.
		fire()
		close(l.done)
		return l
	}
	go func() {
		defer close(l.done)
		select {
		case <-ctx.Done():
			fire()
		case <-l.stop:
		}
	}()
	return l
}

// isCancelled and isExpired poll the latch.
func (l *latch) isCancelled() bool { return closed(l.cancelled) }
func (l *latch) isExpired() bool   { return closed(l.expired) }

// release stops the watcher.
func (l *latch) release() {
	close(l.stop)
	<-l.done
}

// sleep waits d unless the latch fires first.
func (l *latch) sleep(d time.Duration) interrupt {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return notInterrupted
	case <-l.cancelled:
		return byCancel
	case <-l.expired:
		return byDeadline
	}
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// signalName names a signal as receipts and progress snapshots do
// ("SIGTERM", "SIGKILL"): the system's name for it (unix.SignalName), or
// SIG<number> for a number the system does not name. A signal that is not
// a syscall.Signal counts as SIGTERM, the runner's cancellation.
func signalName(s os.Signal) string {
	sig, ok := s.(syscall.Signal)
	if !ok {
		return "SIGTERM"
	}
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	return fmt.Sprintf("SIG%d", int(sig))
}

// childRole is what a child process is for, as in progress snapshots.
type childRole string

const (
	rolePreflight childRole = "preflight"
	roleWorkload  childRole = "workload"
)

// childSpec is one process to run.
type childSpec struct {
	role  childRole
	argv  []string // argv[0] is an absolute executable path
	dir   string
	env   []string
	stdin []byte // nil: /dev/null
	// watch is the workload's stall watchdog (nil: none); onStall runs the
	// bounded health probe after it fires, concurrently with the fence.
	watch   *watchdog
	onStall func() probeOutcome
	// stallID is the exact identity the workload runs (the provider and
	// its argv's model); a probe outcome for another reads
	// identity_mismatch.
	stallID stallIdentity
}

// childResult is a settled (or abandoned) child.
type childResult struct {
	capture     providers.Capture
	exitStatus  *int // exit code, or 128+signal number; nil if unknown
	dropped     [2]int64
	total       [2]int64
	interrupted interrupt
	signalSent  string        // the signal the runner sent to a live child; "" if none
	settled     string        // signalled-and-exited or already-exited when interrupted
	drained     bool          // both output pipes reached EOF
	stall       *events.Stall // the joined stall outcome when interrupted byStall
}

// executor runs children for one attempt.
type executor struct {
	latch     *latch
	limit     int64
	killGrace time.Duration
	progress  *progressReporter
	// confine gives a child's environment its sandboxed form and the
	// function that starts it confined (attempt.sandboxed); nil, or a nil
	// start, starts children as given.
	confine func(env []string) ([]string, func(*exec.Cmd) (func(), error), error)
}

// stream is one captured output pipe.
type stream struct {
	f       *os.File
	buf     []byte
	limit   int64
	total   int64
	dropped int64
	fenced  int64     // bytes read after a stall fired, ignored
	watch   *watchdog // non-nil: output after the stall is fenced
	feed    bool      // classify lines for the watchdog (stdout)
	done    chan struct{}
}

func (s *stream) read(onBytes func(int)) {
	defer close(s.done)
	b := make([]byte, 32<<10)
	for {
		n, err := s.f.Read(b)
		if n > 0 && s.watch != nil && s.watch.isFired() {
			// Late output after the stall is fenced: neither kept nor
			// classified.
			s.total += int64(n)
			s.fenced += int64(n)
		} else if n > 0 {
			if s.feed {
				s.watch.feed(b[:n])
			}
			s.total += int64(n)
			keep := min(int64(n), s.limit-int64(len(s.buf)))
			if keep > 0 {
				s.buf = append(s.buf, b[:keep]...)
			}
			s.dropped += int64(n) - max(keep, 0)
			onBytes(n)
		}
		if err != nil {
			return
		}
	}
}

// abandon stops waiting on the pipe: pending and future reads return now.
func (s *stream) abandon() {
	s.f.SetReadDeadline(time.Now())
	<-s.done
}

// run starts one child in its own process group, feeds stdin, captures
// both streams (bounded) and waits for it to exit and its pipes to reach
// EOF, unless the latch fires first. On cancellation or deadline a live
// child's process group receives the signal (SIGTERM for the deadline),
// then SIGKILL after the grace period; waiting on pipes stops at once. The
// error is non-nil only when the process could not be started.
func (x *executor) run(cs childSpec) (*childResult, error) {
	if len(cs.argv) == 0 || !filepath.IsAbs(cs.argv[0]) {
		return nil, fmt.Errorf("command %q is not an absolute executable path", cs.argv)
	}
	var startCmd func(*exec.Cmd) (func(), error)
	if x.confine != nil {
		env, start, err := x.confine(cs.env)
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		cs.env, startCmd = env, start
	}
	// The child's parent-death signal (Linux) fires when the thread that
	// started it exits; this goroutine keeps that thread until the child
	// is reaped, so only the death of the whole process fires it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p, err := x.start(cs, startCmd)
	if err != nil {
		return nil, err
	}
	res := x.await(p, cs.watch)
	switch res.interrupted {
	case notInterrupted:
	case byStall:
		x.stallJoin(p, res, cs)
	default:
		x.escalate(p, res)
	}
	if cs.watch != nil {
		cs.watch.disarm()
	}
	x.collect(p, res)
	return res, nil
}

// child is a started process with the goroutines that feed its stdin,
// drain its output pipes and reap it.
type child struct {
	role      childRole
	cmd       *exec.Cmd
	pid       int
	out, errs *stream
	inW       *os.File      // nil without stdin
	stdinDone chan struct{} // closed once stdin is written and closed
	drained   chan struct{} // closed when both output pipes reached EOF
	waited    chan struct{} // closed when the process was reaped
}

// start starts cs with its pipes and the goroutines around it. On error
// nothing is left open.
// startCmd, when non-nil, starts the command confined (the sandbox) and
// returns what to call once the child is reaped.
func (x *executor) start(cs childSpec, startCmd func(*exec.Cmd) (func(), error)) (*child, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	env := cs.env
	if env == nil {
		env = []string{} // never the runner's own environment
	}
	cmd := &exec.Cmd{
		Path:        cs.argv[0],
		Args:        cs.argv,
		Dir:         cs.dir,
		Env:         env,
		Stdout:      outW,
		Stderr:      errW,
		SysProcAttr: childSysProcAttr(),
	}
	var inR, inW *os.File
	if cs.stdin != nil {
		if inR, inW, err = os.Pipe(); err != nil {
			outR.Close()
			outW.Close()
			errR.Close()
			errW.Close()
			return nil, err
		}
		cmd.Stdin = inR
	}
	release := func() {}
	if startCmd != nil {
		var r func()
		if r, err = startCmd(cmd); err == nil {
			release = r
		} else {
			err = fmt.Errorf("sandbox: %w", err)
		}
	} else {
		err = cmd.Start()
	}
	outW.Close()
	errW.Close()
	if inR != nil {
		inR.Close()
	}
	if err != nil {
		outR.Close()
		errR.Close()
		if inW != nil {
			inW.Close()
		}
		return nil, err
	}
	c := &child{role: cs.role, cmd: cmd, pid: cmd.Process.Pid, inW: inW,
		stdinDone: make(chan struct{}), drained: make(chan struct{}), waited: make(chan struct{})}
	if inW != nil {
		go func() {
			defer close(c.stdinDone)
			inW.Write(cs.stdin) // a child that exits unread is judged by its exit, not EPIPE
			inW.Close()
		}()
	} else {
		close(c.stdinDone)
	}
	// Telemetry after prompt delivery has begun: it never delays the child.
	x.progress.spawned(cs.role, c.pid)
	c.out = &stream{f: outR, limit: x.limit, done: make(chan struct{}), watch: cs.watch, feed: cs.watch != nil}
	c.errs = &stream{f: errR, limit: x.limit, done: make(chan struct{}), watch: cs.watch}
	if cs.watch != nil {
		cs.watch.arm() // admission: the workload started
	}
	countOut, countErr := func(int) {}, func(int) {}
	if cs.role == roleWorkload {
		countOut = func(n int) { x.progress.bytes(0, n) }
		countErr = func(n int) { x.progress.bytes(1, n) }
	}
	go c.out.read(countOut)
	go c.errs.read(countErr)
	go func() {
		<-c.out.done
		<-c.errs.done
		close(c.drained)
	}()
	go func() {
		cmd.Wait()
		release() // the confined thread that started it may go now
		close(c.waited)
	}()
	return c, nil
}

// await waits for the child to exit and its pipes to drain, or for the
// latch. A cancellation or deadline already due when the child settled
// still wins.
func (x *executor) await(c *child, w *watchdog) *childResult {
	res := &childResult{}
	var stall chan struct{} // nil without a watchdog: never ready
	if w != nil {
		stall = w.fired
	}
	select {
	case <-c.waited:
		x.progress.exited(c.role, exitStatusOf(c.cmd.ProcessState))
		select {
		case <-c.drained:
			res.drained = true
		case <-x.latch.cancelled:
			res.interrupted, res.settled = byCancel, settledAlreadyExits
		case <-x.latch.expired:
			res.interrupted, res.settled = byDeadline, settledAlreadyExits
		case <-stall:
			res.interrupted, res.settled = byStall, settledAlreadyExits
		}
	case <-x.latch.cancelled:
		res.interrupted = byCancel
	case <-x.latch.expired:
		res.interrupted = byDeadline
	case <-stall:
		res.interrupted = byStall
	}
	if res.interrupted == notInterrupted {
		// The deadline covers output capture too, and a cancellation that
		// raced the child's own exit still wins: both were already due.
		switch {
		case closed(x.latch.cancelled):
			res.interrupted, res.settled = byCancel, settledAlreadyExits
		case closed(x.latch.expired):
			res.interrupted, res.settled = byDeadline, settledAlreadyExits
		case w != nil && w.isFired():
			// The stall was claimed (and later output fenced) before the
			// child settled: it stays the one terminal.
			res.interrupted, res.settled = byStall, settledAlreadyExits
		}
	}
	return res
}

// escalate settles an interrupted child: a live one's process group gets
// the signal (SIGINT for a SIGINT cancellation, else SIGTERM), then
// SIGKILL after the grace period; then waiting on its pipes stops.
func (x *executor) escalate(c *child, res *childResult) {
	if res.settled == "" {
		sig, name := syscall.SIGTERM, "SIGTERM"
		if res.interrupted == byCancel && x.latch.signal == "SIGINT" {
			sig, name = syscall.SIGINT, "SIGINT"
		}
		if !closed(c.waited) && !exitedUnreaped(c.pid) {
			// The direct child is still running: forward the signal to its
			// process group, then insist after the grace period.
			if syscall.Kill(-c.pid, sig) == nil {
				res.signalSent = name
			}
			grace := time.NewTimer(x.killGrace)
			select {
			case <-c.waited:
			case <-grace.C:
				syscall.Kill(-c.pid, syscall.SIGKILL)
				<-c.waited
			}
			grace.Stop()
		} else {
			<-c.waited
		}
		res.settled = settledAlreadyExits
		if res.signalSent != "" {
			res.settled = settledSignalled
		}
		x.progress.exited(c.role, exitStatusOf(c.cmd.ProcessState))
	}
	cause := "cancel"
	if res.interrupted != byCancel { // the deadline or the stall timeout
		cause = "deadline"
	}
	x.progress.childSettled(res.settled, cause)
	// Stop waiting on inherited pipes: descendants may hold them open.
	c.out.abandon()
	c.errs.abandon()
	res.drained = closed(c.drained)
}

// collect closes the child's pipes and fills res with its capture and
// exit.
func (x *executor) collect(c *child, res *childResult) {
	<-c.drained
	c.out.f.Close()
	c.errs.f.Close()
	if c.inW != nil {
		c.inW.SetWriteDeadline(time.Now())
	}
	<-c.stdinDone
	if res.drained {
		x.progress.drained(c.role)
	}

	res.capture = providers.Capture{Stdout: c.out.buf, Stderr: c.errs.buf}
	res.total = [2]int64{c.out.total, c.errs.total}
	res.dropped = [2]int64{c.out.dropped, c.errs.dropped}
	res.exitStatus = exitStatusOf(c.cmd.ProcessState)
	if ps := c.cmd.ProcessState; ps != nil {
		if ps.Exited() {
			code := ps.ExitCode()
			res.capture.ExitCode = &code
		} else if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.capture.Signal = signalName(ws.Signal())
		}
	}
}

// exitStatusOf is the receipt's exitCode: the exit code, or 128 plus the
// signal number for a child a signal ended; nil when unknown.
func exitStatusOf(ps *os.ProcessState) *int {
	if ps == nil {
		return nil
	}
	if ps.Exited() {
		c := ps.ExitCode()
		return &c
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		c := 128 + int(ws.Signal())
		return &c
	}
	return nil
}

// readCaptureFiles reads the files a workload wrote for its parser, each
// bounded by limit and never through a symlink; missing files are absent.
func readCaptureFiles(paths []string, limit int64) map[string][]byte {
	if len(paths) == 0 {
		return nil
	}
	files := map[string][]byte{}
	for _, p := range paths {
		f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		fi, err := f.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			f.Close()
			continue
		}
		b := make([]byte, 0, min(fi.Size(), limit))
		buf := make([]byte, 32<<10)
		for int64(len(b)) < limit {
			n, err := f.Read(buf)
			b = append(b, buf[:min(int64(n), limit-int64(len(b)))]...)
			if err != nil {
				break
			}
		}
		f.Close()
		files[p] = b
	}
	return files
}

// stallJoin settles a stalled workload: the close-grace fence (the child's
// process group stopped and reaped, escalate) and the bounded health probe
// run at the same time, and res.stall records the joined outcome.
func (x *executor) stallJoin(c *child, res *childResult, cs childSpec) {
	probe := make(chan probeOutcome, 1)
	go func() {
		// A missing hook fails closed: unsupported, with no identity.
		p := probeOutcome{class: probeUnsupported}
		if cs.onStall != nil {
			p = cs.onStall()
		}
		probe <- p
	}()
	began := time.Now()
	x.escalate(c, res)
	fenceClosed := closed(c.waited) && time.Since(began) <= x.killGrace+stallFenceSlack
	p := checkProbeIdentity(cs.stallID, <-probe)
	health, liveness := stallHealth(p)
	res.stall = &events.Stall{
		Failure:        "response_stalled",
		IdleMs:         cs.watch.idleFor().Milliseconds(),
		TimeoutMs:      cs.watch.timeout.Milliseconds(),
		ProviderHealth: health,
		Liveness:       liveness,
		Probe:          p,
		FenceClosed:    fenceClosed,
		Adapter:        cs.stallID.adapter,
		Target:         cs.stallID.target,
	}
}
