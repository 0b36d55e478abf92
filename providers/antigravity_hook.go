package providers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
)

// The fixed approval hook of an Antigravity writer: `switchyard
// antigravity-hook --control DIR`, run by agy before every command, task
// and direct file-edit call. It approves arbitrary nonempty command text
// without matching shell words; it validates the call's options, its
// canonical cwd (inside the worktree), the conversation it belongs to
// (bound on the first call, so task selectors stay conversation-local),
// the captured policy fingerprints and the session bound. A denial or a
// hook failure is recorded in bounded session state that the runner reads
// after the workload settles: either ends the lane.

// antigravityHookInputCap bounds one hook call's stdin.
const antigravityHookInputCap = 64 << 10

// antigravityStateCap bounds the session state file.
const antigravityStateCap = 4 << 10

// AntigravityHookState is the hook's bounded session state.
type AntigravityHookState struct {
	Conversation string `json:"conversation"`
	Calls        int    `json:"calls"`
	Approved     int    `json:"approved"`
	Commands     int    `json:"commands"` // approved run_command and manage_task calls
	Denied       int    `json:"denied"`
	Failed       int    `json:"failed"`
	LastCode     string `json:"lastCode,omitempty"` // fixed code of the last denial; never call arguments
}

// ReadAntigravityHookState decodes session state; no state (the hook was
// never called) is the zero state.
func ReadAntigravityHookState(b []byte) (AntigravityHookState, error) {
	var s AntigravityHookState
	if len(b) == 0 {
		return s, nil
	}
	if len(b) > antigravityStateCap {
		return s, errors.New("session state exceeds its bound")
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return s, errors.New("session state is malformed")
	}
	if s.Calls < 0 || s.Approved < 0 || s.Denied < 0 || s.Failed < 0 || s.Commands < 0 ||
		s.Commands > s.Approved || s.Approved+s.Denied+s.Failed > s.Calls {
		return s, errors.New("session state counts are inconsistent")
	}
	return s, nil
}

// hookCall is the PreToolUse input the hook reads.
type hookCall struct {
	Event        string                     `json:"hook_event_name"`
	Conversation string                     `json:"conversation_id"`
	Cwd          string                     `json:"cwd"`
	Tool         string                     `json:"tool_name"`
	Input        map[string]json.RawMessage `json:"tool_input"`
}

// Decision codes (fixed; receipts carry only these).
const (
	hookDeniedMalformed    = "malformed_call"
	hookDeniedEvent        = "unexpected_event"
	hookDeniedTool         = "unexpected_tool"
	hookDeniedBound        = "session_bound"
	hookDeniedChanged      = "policy_changed"
	hookDeniedConversation = "conversation_mismatch"
	hookDeniedOption       = "command_option"
	hookDeniedEmpty        = "empty_command"
	hookDeniedCwd          = "cwd_outside_worktree"
	hookDeniedTask         = "task_selector"
	hookDeniedProtected    = "protected_path"
	hookFailed             = "hook_failure"
)

var (
	runCommandOptions = []string{"CommandLine", "Cwd", "Blocking", "WaitMsBeforeAsync", "SafeToAutoRun"}
	manageTaskOptions = []string{"TaskId", "Action", "WaitMs"}
	taskSelector      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$`)
)

// RunAntigravityHook judges one call and returns the decision line agy
// reads and the exit status (0 for a decision, 2 when the hook itself
// failed; the decision is then deny, so agy fails closed either way).
func RunAntigravityHook(control string, stdin io.Reader) ([]byte, int) {
	deny := func(code string, status int) ([]byte, int) {
		b, _ := json.Marshal(map[string]string{"decision": "deny", "reason": "switchyard approval hook: " + code})
		return append(b, '\n'), status
	}
	pol, err := loadAntigravityPolicy(control)
	if err != nil {
		return deny(hookFailed, 2)
	}
	lock, err := os.OpenFile(filepath.Join(control, "state.lock"), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return deny(hookFailed, 2)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return deny(hookFailed, 2)
	}
	statePath := filepath.Join(control, antigravityHookState)
	raw, err := os.ReadFile(statePath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return deny(hookFailed, 2)
	}
	state, err := ReadAntigravityHookState(raw)
	if err != nil {
		return deny(hookFailed, 2)
	}
	code, tool := judgeAntigravityCall(pol, &state, stdin)
	state.Calls++
	if code == "" {
		state.Approved++
		if slices.Contains(antigravityCommandTools, tool) {
			state.Commands++
		}
	} else {
		state.Denied++
		state.LastCode = code
	}
	if err := writeHookState(statePath, state); err != nil {
		return deny(hookFailed, 2)
	}
	if code != "" {
		return deny(code, 0)
	}
	return []byte(`{"decision":"allow"}` + "\n"), 0
}

// judgeAntigravityCall returns "" to approve or the denial code, and the
// call's tool.
func judgeAntigravityCall(pol AntigravityHookPolicy, state *AntigravityHookState, stdin io.Reader) (string, string) {
	var call hookCall
	code := judgeCall(pol, state, stdin, &call)
	return code, call.Tool
}

func judgeCall(pol AntigravityHookPolicy, state *AntigravityHookState, stdin io.Reader, out *hookCall) string {
	if state.Calls >= pol.MaxCalls {
		return hookDeniedBound
	}
	data, err := io.ReadAll(io.LimitReader(stdin, antigravityHookInputCap+1))
	if err != nil || len(data) > antigravityHookInputCap {
		return hookDeniedMalformed
	}
	var call hookCall
	if json.Unmarshal(data, &call) != nil || call.Tool == "" || call.Input == nil {
		return hookDeniedMalformed
	}
	*out = call
	if call.Event != "" && call.Event != "PreToolUse" {
		return hookDeniedEvent
	}
	if changed := RecheckAntigravitySources(pol.Sources); changed != "" {
		return hookDeniedChanged
	}
	if !taskSelector.MatchString(call.Conversation) {
		return hookDeniedConversation
	}
	if state.Conversation == "" {
		state.Conversation = call.Conversation
	} else if state.Conversation != call.Conversation {
		return hookDeniedConversation
	}
	switch {
	case call.Tool == "run_command":
		return judgeRunCommand(pol, call)
	case call.Tool == "manage_task":
		if unknownOption(call.Input, manageTaskOptions) {
			return hookDeniedOption
		}
		var id string
		if json.Unmarshal(call.Input["TaskId"], &id) != nil || !taskSelector.MatchString(id) {
			return hookDeniedTask
		}
		return ""
	case slices.Contains(antigravityWriteTools, call.Tool):
		var target string
		if json.Unmarshal(call.Input["TargetFile"], &target) != nil || !filepath.IsAbs(target) {
			return hookDeniedMalformed
		}
		if touchesProtected(pol, target) {
			return hookDeniedProtected
		}
		return ""
	}
	return hookDeniedTool
}

func judgeRunCommand(pol AntigravityHookPolicy, call hookCall) string {
	if unknownOption(call.Input, runCommandOptions) {
		return hookDeniedOption
	}
	var line string
	if json.Unmarshal(call.Input["CommandLine"], &line) != nil || strings.TrimSpace(line) == "" {
		return hookDeniedEmpty
	}
	cwd := call.Cwd
	if raw, ok := call.Input["Cwd"]; ok {
		if json.Unmarshal(raw, &cwd) != nil {
			return hookDeniedOption
		}
	}
	if !filepath.IsAbs(cwd) {
		return hookDeniedCwd
	}
	real, err := filepath.EvalSymlinks(cwd)
	if err != nil || !within(pol.Worktree, real) {
		return hookDeniedCwd
	}
	for _, p := range pol.Protected {
		if within(p, real) {
			return hookDeniedCwd
		}
	}
	return ""
}

// unknownOption reports an option outside the known set.
func unknownOption(input map[string]json.RawMessage, known []string) bool {
	for k := range input {
		if !slices.Contains(known, k) {
			return true
		}
	}
	return false
}

// touchesProtected reports whether a file tool target is (or resolves to)
// a protected path: the generated agent, hooks or control directory.
func touchesProtected(pol AntigravityHookPolicy, target string) bool {
	clean := filepath.Clean(target)
	resolved := clean
	if dir, err := filepath.EvalSymlinks(filepath.Dir(clean)); err == nil {
		resolved = filepath.Join(dir, filepath.Base(clean))
	}
	if fi, err := os.Lstat(clean); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if t, err := filepath.EvalSymlinks(clean); err == nil {
			resolved = t
		}
	}
	for _, p := range pol.Protected {
		if within(p, clean) || within(p, resolved) {
			return true
		}
	}
	return false
}

// within reports whether p is root or below it.
func within(root, p string) bool {
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}

// writeHookState replaces the state file atomically.
func writeHookState(path string, s AntigravityHookState) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("replace session state: %w", err)
	}
	return nil
}
