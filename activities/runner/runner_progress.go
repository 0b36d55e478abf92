package runner

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// Progress snapshot limits and identity (RUNNER.md "Progress snapshot").
const (
	progressKind        = "pstack-runner-progress"
	snapshotMaxBytes    = 4096
	receiptReadLimit    = 256 << 10
	isoMillis           = "2006-01-02T15:04:05.000Z"
	phaseSetup          = "setup"
	phasePreflight      = "preflight"
	phaseRetryWait      = "preflight-retry-wait"
	phaseWorkloadRun    = "workload-running"
	phaseWorkloadDrain  = "workload-draining"
	phasePostprocess    = "postprocess"
	phaseTerminal       = "terminal"
	settledSignalled    = "signalled-and-exited"
	settledAlreadyExits = "already-exited"
)

// phases is the closed phase vocabulary, in lifecycle order.
var phases = []string{phaseSetup, phasePreflight, phaseRetryWait, phaseWorkloadRun,
	phaseWorkloadDrain, phasePostprocess, phaseTerminal}

// iso formats t as the snapshot and receipt timestamp (UTC, milliseconds).
func iso(t time.Time) string { return t.UTC().Format(isoMillis) }

// snapshot is one progress file: facts the runner observed, from which the
// phase is derived. Field order is the wire order.
type snapshot struct {
	SchemaVersion int             `json:"schemaVersion"`
	Kind          string          `json:"kind"`
	Seq           int64           `json:"seq"`
	UpdatedAt     string          `json:"updatedAt"`
	Phase         string          `json:"phase"`
	AttemptID     string          `json:"attemptId"`
	Provider      policy.Provider `json:"provider"`
	Runner        snapRunner      `json:"runner"`
	Child         *snapChild      `json:"child"`
	RetryWait     bool            `json:"retryWait"`
	Activity      snapActivity    `json:"activity"`
	Cancellation  snapCancel      `json:"cancellation"`
	ChildSettled  *snapSettled    `json:"childSettled"`
	Terminal      *snapTerminal   `json:"terminal"`
	ReceiptRef    *fileRef        `json:"receiptRef"`
}

type snapRunner struct {
	Pid        int     `json:"pid"`
	StartedAt  string  `json:"startedAt"`
	StartToken *string `json:"startToken"`
}

type snapChild struct {
	Role       childRole `json:"role"`
	Pid        int       `json:"pid"`
	StartToken *string   `json:"startToken"`
	Running    bool      `json:"running"`
	ExitCode   *int      `json:"exitCode"`
	Drained    bool      `json:"drained"`
}

type snapActivity struct {
	StdoutBytes    int64   `json:"stdoutBytes"`
	StderrBytes    int64   `json:"stderrBytes"`
	LastActivityAt *string `json:"lastActivityAt"`
}

type snapCancel struct {
	Requested *snapRequest `json:"requested"`
}

type snapRequest struct {
	Signal string `json:"signal"`
	At     string `json:"at"`
}

type snapSettled struct {
	Outcome string `json:"outcome"`
	Cause   string `json:"cause"`
	At      string `json:"at"`
}

type snapTerminal struct {
	At             string `json:"at"`
	ReceiptWritten bool   `json:"receiptWritten"`
}

// fileRef is a file identity: the reserved receipt's device and inode.
type fileRef struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

// phaseOf derives the phase from the recorded facts.
func phaseOf(s *snapshot) string {
	switch {
	case s.Terminal != nil:
		return phaseTerminal
	case s.RetryWait:
		return phaseRetryWait
	case s.Child == nil:
		return phaseSetup
	case s.Child.Role == rolePreflight:
		return phasePreflight
	case s.Child.Running:
		return phaseWorkloadRun
	case !s.Child.Drained:
		return phaseWorkloadDrain
	}
	return phasePostprocess
}

// newAttemptID returns a random (version 4) UUID.
func newAttemptID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// progressReporter writes an attempt's snapshots. Every method is safe on
// a nil reporter (no --progress). Writes are telemetry: any failure, an
// oversize snapshot, or a file at the path that is no longer the one the
// reporter wrote disables further writes silently and never changes the
// attempt's outcome.
type progressReporter struct {
	mu         sync.Mutex
	path       string
	owned      fileRef
	state      snapshot
	now        func() time.Time
	flushEvery time.Duration
	lastWrite  time.Time
	pending    bool
	timer      *time.Timer
	disabled   bool
	closed     bool
	// lazy: settled facts wait for the next write (Config.LazySettledFacts).
	lazy bool
}

// setLazy makes the child's exit, drain and settling wait for the next
// write (Config.LazySettledFacts).
func (r *progressReporter) setLazy(on bool) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.lazy = on
	r.mu.Unlock()
}

// openProgress starts reporting into the reserved progress file and writes
// the first (setup) snapshot.
func openProgress(res *reservation, provider policy.Provider, startedAt time.Time, receipt *reservation,
	now func() time.Time, flushEvery time.Duration) *progressReporter {
	if res == nil {
		return nil
	}
	r := &progressReporter{
		path:       res.path,
		owned:      fileRef{Dev: res.dev, Ino: res.ino},
		now:        now,
		flushEvery: flushEvery,
		state: snapshot{
			SchemaVersion: 1,
			Kind:          progressKind,
			AttemptID:     newAttemptID(),
			Provider:      provider,
			Runner:        snapRunner{Pid: os.Getpid(), StartedAt: iso(startedAt)},
			ReceiptRef:    &fileRef{Dev: receipt.dev, Ino: receipt.ino},
		},
	}
	if tok := events.SelfStart(); tok != "" {
		r.state.Runner.StartToken = &tok
	}
	r.mu.Lock()
	r.flush()
	r.mu.Unlock()
	return r
}

// record applies one fact under the lock and flushes it at once (byte
// activity is coalesced instead, see bytes).
func (r *progressReporter) record(apply func(s *snapshot, at string) bool) {
	r.recordFact(false, apply)
}

// recordSettled is record for a fact that only moves the snapshot toward
// done (an exit, a drain, a settling): with lazy set it waits for the
// next write, as byte activity does.
func (r *progressReporter) recordSettled(apply func(s *snapshot, at string) bool) {
	r.recordFact(true, apply)
}

func (r *progressReporter) recordFact(settled bool, apply func(s *snapshot, at string) bool) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.disabled || r.closed || r.state.Terminal != nil {
		return
	}
	now := r.now()
	if !apply(&r.state, iso(now)) {
		return
	}
	if settled && r.lazy {
		r.later(now)
		return
	}
	r.stopTimer()
	r.pending = false
	r.flush()
}

func (r *progressReporter) spawned(role childRole, pid int) {
	var token *string
	if tok, v := startToken(pid); v == procLive {
		token = &tok
	}
	r.record(func(s *snapshot, _ string) bool {
		s.RetryWait = false
		s.Child = &snapChild{Role: role, Pid: pid, StartToken: token, Running: true}
		return true
	})
}

func (r *progressReporter) exited(role childRole, code *int) {
	r.recordSettled(func(s *snapshot, _ string) bool {
		if s.Child == nil || s.Child.Role != role || !s.Child.Running {
			return false
		}
		c := *s.Child
		c.Running, c.ExitCode = false, code
		s.Child = &c
		return true
	})
}

func (r *progressReporter) drained(role childRole) {
	r.recordSettled(func(s *snapshot, _ string) bool {
		if s.Child == nil || s.Child.Role != role || s.Child.Running {
			return false
		}
		c := *s.Child
		c.Drained = true
		s.Child = &c
		return true
	})
}

func (r *progressReporter) retryWait(on bool) {
	r.record(func(s *snapshot, _ string) bool {
		s.RetryWait = on
		return true
	})
}

func (r *progressReporter) cancelRequested(signal string) {
	r.record(func(s *snapshot, at string) bool {
		if s.Cancellation.Requested != nil {
			return false
		}
		s.Cancellation.Requested = &snapRequest{Signal: signal, At: at}
		return true
	})
}

func (r *progressReporter) childSettled(outcome, cause string) {
	r.recordSettled(func(s *snapshot, at string) bool {
		s.ChildSettled = &snapSettled{Outcome: outcome, Cause: cause, At: at}
		return true
	})
}

func (r *progressReporter) terminal(receiptWritten bool) {
	r.record(func(s *snapshot, at string) bool {
		s.Terminal = &snapTerminal{At: at, ReceiptWritten: receiptWritten}
		return true
	})
}

// bytes counts workload output (stream 0 stdout, 1 stderr). Writes are
// coalesced: at most one snapshot per flush interval carries byte counts.
func (r *progressReporter) bytes(stream, n int) {
	if r == nil || n <= 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.disabled || r.closed || r.state.Terminal != nil || r.state.Child == nil || r.state.Child.Role != roleWorkload {
		return
	}
	if stream == 0 {
		r.state.Activity.StdoutBytes += int64(n)
	} else {
		r.state.Activity.StderrBytes += int64(n)
	}
	now := r.now()
	at := iso(now)
	r.state.Activity.LastActivityAt = &at
	r.later(now)
}

// later marks the snapshot as changed and writes it once flushEvery has
// passed since the last write: now when it has, else from a timer.
// Callers hold r.mu.
func (r *progressReporter) later(now time.Time) {
	r.pending = true
	wait := r.flushEvery - now.Sub(r.lastWrite)
	if wait <= 0 {
		r.stopTimer()
		r.pending = false
		r.flush()
		return
	}
	if r.timer == nil {
		r.timer = time.AfterFunc(wait, func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.timer = nil
			if r.pending && !r.closed {
				r.pending = false
				r.flush()
			}
		})
	}
}

func (r *progressReporter) stopTimer() {
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
}

// close flushes pending activity and stops writing.
func (r *progressReporter) close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopTimer()
	if r.pending {
		r.pending = false
		r.flush()
	}
	r.closed = true
}

// flush writes the snapshot atomically: a new exclusive temporary file in
// the same directory, then rename over the path, but only while the path
// still holds the file this reporter wrote last. Callers hold r.mu.
func (r *progressReporter) flush() {
	if r.disabled || r.closed {
		return
	}
	r.state.Seq++
	now := r.now()
	r.state.UpdatedAt = iso(now)
	r.state.Phase = phaseOf(&r.state)
	b, err := json.Marshal(&r.state)
	if err != nil || len(b) > snapshotMaxBytes {
		r.disabled = true
		return
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(r.path),
		fmt.Sprintf(".%s.%d.%s.tmp", filepath.Base(r.path), os.Getpid(), hex.EncodeToString(rnd[:])))
	st, err := writeExclusive(tmp, b)
	if err != nil {
		r.disabled = true
		return
	}
	var cur syscall.Stat_t
	if syscall.Lstat(r.path, &cur) != nil || uint64(cur.Dev) != r.owned.Dev || uint64(cur.Ino) != r.owned.Ino {
		syscall.Unlink(tmp)
		r.disabled = true // replaced by someone else: stop writing
		return
	}
	if syscall.Rename(tmp, r.path) != nil {
		syscall.Unlink(tmp)
		r.disabled = true
		return
	}
	r.owned = fileRef{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}
	r.lastWrite = now
}

// writeExclusive creates path (it must not exist), writes b, sets mode
// 0600 whatever the umask, closes it and returns its identity; on any
// failure the file is removed. It uses the system calls directly: a
// snapshot is written about eight times a lane, and an *os.File would add
// the poller's registration and flag calls to each.
func writeExclusive(path string, b []byte) (syscall.Stat_t, error) {
	var st syscall.Stat_t
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return st, err
	}
	for rest := b; len(rest) > 0 && err == nil; {
		var n int
		n, err = syscall.Write(fd, rest)
		if err == syscall.EINTR {
			err = nil
			continue
		}
		if err == nil && n == 0 {
			err = syscall.EIO
		}
		rest = rest[max(n, 0):]
	}
	if err == nil {
		err = syscall.Fchmod(fd, 0o600)
	}
	if err == nil {
		err = syscall.Fstat(fd, &st)
	}
	if cerr := syscall.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		syscall.Unlink(path)
	}
	return st, err
}
