package client

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// RunRequest is a run to start. Everything is a value: the sheet and the
// prompt are bytes, which the engine freezes (the sheet into the run's
// first event, the prompt under the data directory) as `switchyard run`
// does; nothing is read from a path the server would have to trust.
type RunRequest struct {
	// RunID names the run; default a fresh id. With an id Submit is
	// idempotent: the same request again returns the run it started; a
	// different request under the id is ErrExists.
	RunID string
	// Sheet is the model sheet's exact bytes. Required.
	Sheet []byte
	// Role is the role to resolve into lanes (a row header or a leaf
	// role of the sheet). Required.
	Role string
	// Parent is the parent harness: "claude" or "codex". Required.
	Parent string
	// Prompt is the task prompt (at most 16 MiB). Required.
	Prompt []byte
	// Checkout is the directory the run is for (the attempts' working
	// directory, on the workers' host; made absolute). Required.
	Checkout string
	// Mode is the run's access mode: "read-only" (default) or
	// "isolated-write" (Checkout must be a git work tree with a commit;
	// every writer starts from a fresh worktree of its HEAD).
	Mode string
	// Contract is the worker ownership contract: "legacy" (default) or
	// "strict".
	Contract string
	// Timeout is each attempt's deadline; 0 means none.
	Timeout time.Duration
	// StallTimeout is each attempt's response-stall timeout (0: the
	// default, 5m).
	StallTimeout time.Duration
	// AllowUnknownQuota lists the providers whose unknown quota the run
	// accepts (run --allow-unknown-quota).
	AllowUnknownQuota []string
	// AllowUnverifiedContainment lists the providers whose writer
	// attempts may launch although their containment is unverified (run
	// --allow-unverified-containment; legacy contract only).
	AllowUnverifiedContainment []string
}

// Submit starts a run and returns its handle once the engine serving the
// deployment has recorded it (the engine alone writes events; Submit
// fails with ErrUnavailable when none answers within 30s).
//
// Errors: *InvalidInputError naming the field (a sheet that does not
// parse, a role it does not have, an empty prompt, …); ErrExists when
// RunID names a run started by a different request.
func (c *Client) Submit(ctx context.Context, req RunRequest) (*Run, error) {
	ereq, err := engineRequest(req)
	if err != nil {
		return nil, err
	}
	id, err := c.eng.Submit(ctx, ereq)
	if err != nil {
		if errors.Is(err, engine.ErrRunExists) && req.RunID != "" {
			// Submitted before (a retry) or meanwhile (a retry racing
			// the first try): the same request is that run's handle.
			// Only then is the run read: a new run costs no lookup.
			return c.sameRun(ctx, req)
		}
		return nil, mapError(err, "")
	}
	return c.Run(id), nil
}

// engineRequest checks req's fields, naming the one at fault, and turns it
// into the engine's request.
func engineRequest(req RunRequest) (engine.RunRequest, error) {
	var out engine.RunRequest
	switch {
	case len(req.Sheet) == 0:
		return out, &InvalidInputError{Field: "Sheet", Reason: "the sheet is empty"}
	case req.Role == "":
		return out, &InvalidInputError{Field: "Role", Reason: "no role given; name a row header or a leaf role of the sheet"}
	case len(req.Prompt) == 0:
		return out, &InvalidInputError{Field: "Prompt", Reason: "the prompt is empty"}
	case req.Checkout == "":
		return out, &InvalidInputError{Field: "Checkout", Reason: "no checkout given; name the directory the run is for"}
	}
	if req.RunID != "" {
		if err := events.ValidateRunID(req.RunID); err != nil {
			return out, invalid("RunID", err)
		}
	}
	parent, err := policy.ParseParent(req.Parent)
	if err != nil {
		return out, invalid("Parent", err)
	}
	opt := policy.DefaultOptions()
	sheet, err := policy.ParseSheet(req.Sheet, opt)
	if err != nil {
		return out, invalid("Sheet", err)
	}
	if _, err := policy.Resolve(sheet, req.Role, parent, opt); err != nil {
		return out, invalid("Role", err)
	}
	mode := policy.Access(req.Mode)
	if mode == "" {
		mode = policy.ReadOnly
	}
	if _, err := policy.ParseAccess(string(mode)); err != nil {
		return out, invalid("Mode", err)
	}
	allow := providers(req.AllowUnknownQuota)
	return engine.RunRequest{
		RunID: req.RunID, Sheet: req.Sheet, Role: req.Role, Parent: parent, Mode: mode,
		Prompt: req.Prompt, Cwd: req.Checkout, Timeout: req.Timeout, Contract: policy.Contract(req.Contract),
		AllowUnknownQuota: allow, StallTimeout: req.StallTimeout,
		AllowUnverifiedContainment: providers(req.AllowUnverifiedContainment),
	}, nil
}

// sameRun returns the handle of req.RunID when the stored run is the one
// req would start, ErrExists when it is another, ErrNotFound when there is
// none.
func (c *Client) sameRun(ctx context.Context, req RunRequest) (*Run, error) {
	first, err := c.conn.JetStream().Store().Load(ctx, req.RunID, events.RunLane)
	if err != nil {
		return nil, mapError(err, "")
	}
	if len(first) == 0 {
		return nil, &kindError{kind: ErrNotFound, err: fmt.Errorf("run %s: %w", req.RunID, engine.ErrUnknownRun)}
	}
	created, ok := first[0].Payload.(events.RunCreated)
	if !ok {
		return nil, fmt.Errorf("run %s: its first event is %s, not run-created", req.RunID, first[0].Type)
	}
	if diff := differs(created, req); diff != "" {
		return nil, &kindError{kind: ErrExists, err: fmt.Errorf("run %s already exists with another %s; pass a new RunID, or leave it empty for a fresh one: %w",
			req.RunID, diff, engine.ErrRunExists)}
	}
	return c.Run(req.RunID), nil
}

// differs names the first thing the recorded run-created c has that req
// would not record, or "".
func differs(c events.RunCreated, req RunRequest) string {
	mode := policy.Access(req.Mode)
	if mode == "" {
		mode = policy.ReadOnly
	}
	contract := policy.Contract(req.Contract)
	if contract == "" {
		contract = policy.ContractLegacy
	}
	cwd, _ := filepath.Abs(req.Checkout)
	switch {
	case c.SheetDigest != events.Digest(req.Sheet):
		return "sheet"
	case c.Role != req.Role:
		return "role"
	case string(c.Parent) != req.Parent:
		return "parent"
	case c.PromptDigest != events.Digest(req.Prompt):
		return "prompt"
	case c.Cwd != cwd:
		return "checkout"
	case c.Access != mode:
		return "mode"
	case c.Options.Contract != contract:
		return "contract"
	case c.Options.TimeoutMs != req.Timeout.Milliseconds():
		return "timeout"
	case c.Options.StallTimeoutMs != req.StallTimeout.Milliseconds():
		return "stall timeout"
	case !slices.Equal(c.Options.AllowUnknownQuota, providers(req.AllowUnknownQuota)):
		return "allowed unknown quota"
	case !slices.Equal(c.Options.AllowUnverifiedContainment, providers(req.AllowUnverifiedContainment)):
		return "allowed unverified containment"
	}
	return ""
}

// providers converts names to providers (nil for none, as recorded).
func providers(names []string) []policy.Provider {
	if len(names) == 0 {
		return nil
	}
	out := make([]policy.Provider, len(names))
	for i, p := range names {
		out[i] = policy.Provider(p)
	}
	return out
}
