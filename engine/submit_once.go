package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/switchyard-dev/switchyard/events"
)

// SubmitOnce is Submit made idempotent by run id, for a client that
// retries a submission whose answer it never saw (the HTTP API's POST
// /api/v1/runs). When req names a run id that is already recorded, the
// run-created event req would record is compared with the recorded one:
// the same sheet, role, parent, mode, cwd, options, lanes and prompt
// digest (everything but the time) returns the run id with existed true;
// any difference is ErrRunExists. A request without a run id is Submit's
// (a fresh id every time).
func (e *Engine) SubmitOnce(ctx context.Context, req RunRequest) (run string, existed bool, err error) {
	run, err = e.Submit(ctx, req)
	if err == nil || req.RunID == "" || errors.Is(err, ErrInvalidRequest) {
		return run, false, err
	}
	// The run may exist: recorded before (ErrRunExists), or by a
	// concurrent submission of the same id that froze its prompt first.
	same, found, cerr := e.sameSubmission(ctx, req)
	switch {
	case cerr != nil && !found:
		return "", false, err // the store did not answer: the submission's own error says so
	case cerr != nil:
		return "", false, cerr
	case !found:
		return "", false, err
	case !same:
		return "", false, fmt.Errorf("run %s was submitted with a different request: %w", req.RunID, ErrRunExists)
	}
	return req.RunID, true, nil
}

// sameSubmission reports whether req.RunID is recorded (found) and, if
// so, whether its run-created event is the one req would record.
func (e *Engine) sameSubmission(ctx context.Context, req RunRequest) (same, found bool, err error) {
	run := req.RunID
	envs, err := e.cfg.Store.Load(ctx, run, events.RunLane)
	if err != nil {
		if errors.Is(err, events.ErrNotFound) {
			return false, false, nil
		}
		return false, false, fmt.Errorf("load run %s: %w", run, err)
	}
	if len(envs) == 0 {
		return false, false, nil
	}
	recorded, ok := envs[0].Payload.(events.RunCreated)
	if !ok {
		return false, true, nil
	}
	want, _, err := e.resolveRun(ctx, req)
	if err != nil {
		return false, true, err
	}
	prompt := req.Prompt
	if prompt == nil {
		if prompt, err = readLimited(req.PromptPath, maxPromptBytes, promptLimit); err != nil {
			return false, true, invalidf("read prompt: %v", err)
		}
	}
	want.PromptDigest = events.Digest(prompt)
	want.PromptPath = filepath.Join(e.runDir(run), frozenPrompt)
	a, aerr := json.Marshal(recorded)
	b, berr := json.Marshal(want)
	if aerr != nil || berr != nil {
		return false, true, errors.Join(aerr, berr)
	}
	return bytes.Equal(a, b), true, nil
}
