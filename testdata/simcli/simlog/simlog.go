// Package simlog reads and writes the simulated provider CLIs' invocation
// and signal logs (<bin>/invocations.jsonl and <bin>/signals.jsonl), so
// tests can assert exactly what each child process received.
package simlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// Kinds of invocation. Preflight kinds are named after what the probe asks.
const (
	KindWorkload    = "workload"
	KindVersion     = "version"      // claude/gemini/opencode/cursor-agent/agy --version
	KindStatus      = "status"       // codex login status, devin auth status, cursor-agent status, claude auth status, opencode auth list
	KindModels      = "models"       // grok models, agy models, devin models, cursor-agent models, opencode models
	KindDebugConfig = "debug-config" // opencode [--pure] debug config
	// KindSessionExport is OpenCode 2.x's `opencode session export
	// --standalone <sessionID>` after a workload: it replays
	// <scenario>/session-export (default _preflight/session-export) with
	// the persisted session's prompt, cwd, agent and model.
	KindSessionExport = "session-export"
	// KindAppServer is `codex app-server`: a JSON-RPC session on stdio
	// (the quota source), logged once per process; its messages go to
	// rpc.jsonl.
	KindAppServer = "app-server"
	// KindGrandchild records a sleeping grandchild a scenario spawned;
	// Pid is the grandchild and Ppid the simulated CLI that started it.
	KindGrandchild = "grandchild"
)

// Stdin kinds: what the simulated CLI found on file descriptor 0.
const (
	StdinDevNull  = "devnull"
	StdinPipe     = "pipe"
	StdinFile     = "file"
	StdinTerminal = "terminal" // a character device other than /dev/null
	StdinSocket   = "socket"
	StdinClosed   = "closed"
	StdinOther    = "other"
)

// Invocation is one line of invocations.jsonl: one started process.
type Invocation struct {
	Provider string   `json:"provider"` // policy name: claude … cursor, antigravity … gemini
	Binary   string   `json:"binary"`   // base name of argv[0]
	Argv     []string `json:"argv"`     // the full argv, argv[0] included
	// Env holds the sorted names of the environment variables the
	// process saw; values are never logged.
	Env []string `json:"env"`
	// StdinKind says what fd 0 was; StdinSHA256 and StdinBytes are set
	// only when the stdin was read (workloads of providers that take a
	// prompt on stdin). StdinFile is the captured copy, when enabled.
	StdinKind   string `json:"stdinKind"`
	StdinRead   bool   `json:"stdinRead"`
	StdinSHA256 string `json:"stdinSha256,omitempty"`
	StdinBytes  int64  `json:"stdinBytes,omitempty"`
	StdinFile   string `json:"stdinFile,omitempty"`
	Cwd         string `json:"cwd"`
	Kind        string `json:"kind"`
	// Scenario is the scenario name replayed ("" for a grandchild) and
	// TranscriptDir the directory the replay read.
	Scenario      string `json:"scenario,omitempty"`
	TranscriptDir string `json:"transcriptDir,omitempty"`
	// Seq is the provider's zero-based invocation number when the
	// provider has a scenario queue; -1 otherwise.
	Seq       int       `json:"seq"`
	Pid       int       `json:"pid"`
	Ppid      int       `json:"ppid"`
	Pgid      int       `json:"pgid"`
	StartedAt time.Time `json:"startedAt"`
}

// Signal is one line of signals.jsonl: a signal a simulated CLI received
// and acted on (exit, or ignore while hanging).
type Signal struct {
	Provider string    `json:"provider"`
	Pid      int       `json:"pid"`
	Signal   string    `json:"signal"` // SIGTERM or SIGINT
	Ignored  bool      `json:"ignored"`
	At       time.Time `json:"at"`
}

// RPC is one line of rpc.jsonl: one message a simulated `codex
// app-server` read from its client. Only the shape is logged, never a
// value.
type RPC struct {
	Pid       int       `json:"pid"`
	Method    string    `json:"method,omitempty"` // "" for a client response or an unparseable line
	HasID     bool      `json:"hasId"`
	HasParams bool      `json:"hasParams"`        // a params member was present (null included)
	Valid     bool      `json:"valid"`            // the line was a JSON object
	Answer    string    `json:"answer,omitempty"` // "result", the error code, or "" (a notification, or no answer)
	At        time.Time `json:"at"`
}

// ReadRPC returns every app-server message logged at path.
func ReadRPC(path string) ([]RPC, error) {
	var out []RPC
	err := readLines(path, func(line []byte) error {
		var r RPC
		if err := json.Unmarshal(line, &r); err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

// Read returns every invocation logged at path, in append order. A
// missing file is an empty log.
func Read(path string) ([]Invocation, error) {
	var out []Invocation
	err := readLines(path, func(line []byte) error {
		var inv Invocation
		if err := json.Unmarshal(line, &inv); err != nil {
			return err
		}
		out = append(out, inv)
		return nil
	})
	return out, err
}

// ReadSignals returns every signal record logged at path.
func ReadSignals(path string) ([]Signal, error) {
	var out []Signal
	err := readLines(path, func(line []byte) error {
		var s Signal
		if err := json.Unmarshal(line, &s); err != nil {
			return err
		}
		out = append(out, s)
		return nil
	})
	return out, err
}

// Append writes v as one JSON line to path with a single O_APPEND write,
// so concurrent processes never interleave within a line.
func Append(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func readLines(path string, each func([]byte) error) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := each(sc.Bytes()); err != nil {
			return fmt.Errorf("%s line %d: %w", path, n, err)
		}
	}
	return sc.Err()
}

// Filter returns the invocations of one provider and kind ("" matches any).
func Filter(invs []Invocation, provider, kind string) []Invocation {
	var out []Invocation
	for _, inv := range invs {
		if (provider == "" || inv.Provider == provider) && (kind == "" || inv.Kind == kind) {
			out = append(out, inv)
		}
	}
	return out
}
