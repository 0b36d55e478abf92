package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/switchyard-dev/switchyard/policy"
)

// Worker commands: a closed allowlist of questions a live worker answers
// over NATS request-reply (core NATS, no stream), so doctor can check the
// workers of a deployment where their CLIs live.
//
//	sy.cmd.<digest of the worker id>.<command>
//
// The subject is per worker (the same digest as the worker's presence
// subject), so a caller asks each worker it found in Presence and gets
// exactly that worker's answer. The request body names the provider; the
// reply is strict JSON with a schema version. A command outside the
// allowlist is refused with an error reply before the worker looks up any
// provider. Replies carry no environment values and no credentials.
const CommandSubjectPrefix = "sy.cmd."

// CommandSchemaVersion is the schema of command requests and replies.
const CommandSchemaVersion = 1

// Worker commands (the closed allowlist).
const (
	// CommandCapabilities: the provider's spec as this worker sees it.
	CommandCapabilities = "capabilities"
	// CommandTransportStatus: the worker's connection, leases and running
	// attempts.
	CommandTransportStatus = "transport_status"
)

// WorkerCommands lists the allowlisted commands.
var WorkerCommands = []string{CommandCapabilities, CommandTransportStatus}

// DefaultCommandTimeout bounds one command request.
const DefaultCommandTimeout = 5 * time.Second

// MaxCommandTimeout is the longest timeout RequestCommand accepts.
const MaxCommandTimeout = 30 * time.Second

// maxCommandBytes bounds a request or reply body.
const maxCommandBytes = 64 << 10

// CommandSubject is sy.cmd.<digest of workerID>.<command>.
func CommandSubject(workerID, command string) string {
	return CommandSubjectPrefix + presenceToken(workerID) + "." + command
}

// commandFilter is the subscription of one worker: every command token, so
// that a refused command gets an answer instead of a timeout.
func commandFilter(workerID string) string {
	return CommandSubjectPrefix + presenceToken(workerID) + ".*"
}

// IsWorkerCommand reports whether command is on the allowlist.
func IsWorkerCommand(command string) bool { return slices.Contains(WorkerCommands, command) }

// CommandRequest is the body of a command request.
type CommandRequest struct {
	Schema   int             `json:"schema"`
	Provider policy.Provider `json:"provider,omitempty"`
}

// CommandReply is the reply to one command: exactly one of Capabilities,
// Transport or Error is set.
type CommandReply struct {
	Schema       int              `json:"schema"`
	WorkerID     string           `json:"workerId"`
	Command      string           `json:"command"`
	Capabilities *Capabilities    `json:"capabilities,omitempty"`
	Transport    *TransportStatus `json:"transport,omitempty"`
	// Error is a refusal or failure, launcher-authored (no values).
	Error string `json:"error,omitempty"`
}

// Capabilities is a provider's spec as a worker sees it.
type Capabilities struct {
	Provider policy.Provider `json:"provider"`
	// Binaries are the names tried on PATH; BinaryPath is the one found
	// ("" when none is; BinaryError then says why).
	Binaries      []string `json:"binaries"`
	BinaryPath    string   `json:"binaryPath,omitempty"`
	BinaryError   string   `json:"binaryError,omitempty"`
	KnownVersions []string `json:"knownVersions"`
	// Containment per access mode; every mode is listed, an undeclared
	// one as UNVERIFIED.
	Containment []ContainmentEntry `json:"containment"`
	QuotaSource policy.QuotaSource `json:"quotaSource"`
	// Concurrency is this worker's per-provider --concurrency.
	Concurrency int `json:"concurrency"`
}

// ContainmentEntry is one access mode's containment class and reason.
type ContainmentEntry struct {
	Mode   policy.Access `json:"mode"`
	Class  string        `json:"class"`
	Reason string        `json:"reason,omitempty"`
}

// TransportStatus is a worker's connection and work.
type TransportStatus struct {
	WorkerID  string            `json:"workerId"`
	Connected bool              `json:"connected"`
	Providers []policy.Provider `json:"providers"`
	Leases    int               `json:"leases"`
	Running   []RunningAttempt  `json:"running"`
}

// RunningAttempt is one execution a worker handles now.
type RunningAttempt struct {
	ExecutionID string `json:"executionId"`
}

// CommandHandler answers one allowlisted command. It is never called for a
// command outside the allowlist.
type CommandHandler func(ctx context.Context, command string, req CommandRequest) CommandReply

// ServeCommands subscribes workerID's command subject on nc and answers
// with handle until the returned stop is called (stop unsubscribes and
// waits for a reply in flight). A command outside the allowlist, or a
// malformed request, gets an error reply without handle being called.
func ServeCommands(nc *nats.Conn, workerID string, handle CommandHandler) (stop func(), err error) {
	if err := ValidateWorkerID(workerID); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	sub, err := nc.Subscribe(commandFilter(workerID), func(m *nats.Msg) {
		if m.Reply == "" {
			return
		}
		reply := answerCommand(ctx, workerID, m, handle)
		b, err := json.Marshal(reply)
		if err != nil || len(b) > maxCommandBytes {
			b, _ = json.Marshal(CommandReply{Schema: CommandSchemaVersion, WorkerID: workerID, Command: reply.Command,
				Error: "reply too large"})
		}
		_ = m.Respond(b)
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("events: subscribe worker commands: %w", err)
	}
	return func() {
		cancel()
		_ = sub.Drain()
		// Drain returns at once; wait (bounded) until a reply in flight
		// has been sent.
		for deadline := time.Now().Add(5 * time.Second); sub.IsValid() && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
	}, nil
}

// answerCommand checks the command and the request before handle runs.
func answerCommand(ctx context.Context, workerID string, m *nats.Msg, handle CommandHandler) CommandReply {
	command := m.Subject[strings.LastIndexByte(m.Subject, '.')+1:]
	refuse := func(format string, a ...any) CommandReply {
		return CommandReply{Schema: CommandSchemaVersion, WorkerID: workerID, Command: command, Error: fmt.Sprintf(format, a...)}
	}
	if !IsWorkerCommand(command) {
		return refuse("unknown worker command %q: want one of %s", clipToken(command), strings.Join(WorkerCommands, ", "))
	}
	if len(m.Data) > maxCommandBytes {
		return refuse("request larger than %d bytes", maxCommandBytes)
	}
	var req CommandRequest
	if err := strictUnmarshal(m.Data, &req); err != nil {
		return refuse("malformed request: %v", err)
	}
	if req.Schema != CommandSchemaVersion {
		return refuse("request schema %d: want %d", req.Schema, CommandSchemaVersion)
	}
	if req.Provider != "" {
		if err := ValidateProvider(string(req.Provider)); err != nil {
			return refuse("provider %q is not a provider name", clipToken(string(req.Provider)))
		}
	}
	if command == CommandCapabilities && req.Provider == "" {
		return refuse("capabilities needs a provider")
	}
	r := handle(ctx, command, req)
	r.Schema, r.WorkerID, r.Command = CommandSchemaVersion, workerID, command
	return r
}

func clipToken(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// ErrNoCommandReply is wrapped when no worker answered within the timeout.
var ErrNoCommandReply = errors.New("events: no reply from the worker")

// RequestCommand asks workerID one command about provider (may be "" for
// transport_status), waiting at most timeout (0: DefaultCommandTimeout,
// capped at MaxCommandTimeout). Commands outside the allowlist are refused
// here too, before anything is sent. A reply carrying Error is returned
// with a nil error: the worker answered.
func RequestCommand(ctx context.Context, nc *nats.Conn, workerID, command string, provider policy.Provider, timeout time.Duration) (CommandReply, error) {
	if !IsWorkerCommand(command) {
		return CommandReply{}, invalidf("unknown worker command %q: want one of %s", clipToken(command), strings.Join(WorkerCommands, ", "))
	}
	if err := ValidateWorkerID(workerID); err != nil {
		return CommandReply{}, err
	}
	if timeout <= 0 {
		timeout = DefaultCommandTimeout
	}
	timeout = min(timeout, MaxCommandTimeout)
	body, err := json.Marshal(CommandRequest{Schema: CommandSchemaVersion, Provider: provider})
	if err != nil {
		return CommandReply{}, err
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	m, err := nc.RequestWithContext(rctx, CommandSubject(workerID, command), body)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrNoResponders) {
			return CommandReply{}, fmt.Errorf("%w %s within %s: %v", ErrNoCommandReply, workerID, timeout, err)
		}
		return CommandReply{}, fmt.Errorf("events: worker command %s: %w", command, err)
	}
	return DecodeCommandReply(m.Data)
}

// DecodeCommandReply parses a reply strictly: unknown keys, another schema,
// or a reply with neither an answer nor an error are refused.
func DecodeCommandReply(b []byte) (CommandReply, error) {
	var r CommandReply
	if len(b) > maxCommandBytes {
		return r, &DecodeError{What: "worker command reply", Err: fmt.Errorf("larger than %d bytes", maxCommandBytes)}
	}
	if err := strictUnmarshal(b, &r); err != nil {
		return CommandReply{}, &DecodeError{What: "worker command reply", Err: err}
	}
	if r.Schema != CommandSchemaVersion {
		return CommandReply{}, &DecodeError{What: "worker command reply", Err: schemaErr(r.Schema)}
	}
	n := 0
	for _, set := range []bool{r.Capabilities != nil, r.Transport != nil, r.Error != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		return CommandReply{}, &DecodeError{What: "worker command reply", Err: errors.New("want exactly one of capabilities, transport or error")}
	}
	return r, nil
}

// Conn is the NATS connection the streams were opened on (worker commands
// use it for request-reply).
func (j *JetStream) Conn() *nats.Conn { return j.nc }
