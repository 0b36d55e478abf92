package runner

import (
	"fmt"
	"io/fs"
	"time"

	"github.com/switchyard-dev/switchyard/policy"
)

// Progress is what an attempt's progress snapshot says (RUNNER.md
// "Progress snapshot"), for readers outside the runner (`switchyard
// logs`): the phase, the workload's output volume and last activity, and
// whether the CLI still runs. It carries no output text, no pid and no
// environment: only counts, phases and times.
type Progress struct {
	// Seq increases with every snapshot the runner writes.
	Seq int64 `json:"seq"`
	// UpdatedAt is when the runner wrote it.
	UpdatedAt time.Time `json:"updatedAt"`
	// Phase is one of setup, preflight, preflight-retry-wait,
	// workload-running, workload-draining, postprocess, terminal.
	Phase    string          `json:"phase"`
	Provider policy.Provider `json:"provider"`
	// StdoutBytes and StderrBytes count the workload's output so far.
	StdoutBytes int64 `json:"stdoutBytes"`
	StderrBytes int64 `json:"stderrBytes"`
	// LastActivityAt is the workload's last output (nil: none yet).
	LastActivityAt *time.Time `json:"lastActivityAt,omitempty"`
	// ChildRunning says the CLI process (preflight or workload) runs;
	// ExitCode is its exit code once it exited on its own.
	ChildRunning bool `json:"childRunning"`
	ExitCode     *int `json:"exitCode,omitempty"`
	// CancelSignal is the signal a cancellation sent ("" none).
	CancelSignal string `json:"cancelSignal,omitempty"`
}

// ReadProgress reads and strictly decodes the progress snapshot at path:
// at most 4096 bytes, a regular file, never through a symlink. A snapshot
// not written yet is an error wrapping fs.ErrNotExist; one that does not
// decode is an error that echoes nothing of the file.
func ReadProgress(path string) (Progress, error) {
	s, why := readSnapshot(path)
	switch why {
	case "":
	case "missing":
		return Progress{}, fmt.Errorf("progress snapshot: %w", fs.ErrNotExist)
	default:
		return Progress{}, fmt.Errorf("progress snapshot is %s", why)
	}
	p := Progress{Seq: s.Seq, UpdatedAt: parseISO(s.UpdatedAt), Phase: s.Phase, Provider: s.Provider,
		StdoutBytes: s.Activity.StdoutBytes, StderrBytes: s.Activity.StderrBytes}
	if a := s.Activity.LastActivityAt; a != nil {
		t := parseISO(*a)
		p.LastActivityAt = &t
	}
	if c := s.Child; c != nil {
		p.ChildRunning, p.ExitCode = c.Running, c.ExitCode
	}
	if r := s.Cancellation.Requested; r != nil {
		p.CancelSignal = r.Signal
	}
	return p, nil
}
