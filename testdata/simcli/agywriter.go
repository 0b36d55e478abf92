package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// agyWriter reproduces what agy 1.x does for a writer before it works:
// it needs --project, loads the workspace agent named by --agent from
// .agents/agents and the startup-captured workspace hooks from
// .agents/hooks.json, and runs every PreToolUse hook command for the
// replay's hook_calls (one JSON input per line, templated), failing closed
// on a malformed decision. Decisions are appended to hooks.jsonl in the
// bin directory. It returns a nonzero exit and a message when agy would
// refuse to start.
func (s *simulation) agyWriter(r *replay, t templater, cwd string) (int, string) {
	if v, ok := flagValue(s.args, "--project"); !ok || v == "" {
		return 2, "Error: no project selected for this workspace; pass --project"
	}
	agent, _ := flagValue(s.args, "--agent")
	if _, err := os.Stat(filepath.Join(cwd, ".agents", "agents", agent+".md")); err != nil {
		return 2, fmt.Sprintf("Error: agent %q not found in .agents/agents", agent)
	}
	raw, err := os.ReadFile(filepath.Join(cwd, ".agents", "hooks.json"))
	if err != nil {
		return 0, "" // no workspace hooks: agy runs without them
	}
	var doc struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return 2, "Error: invalid .agents/hooks.json"
	}
	for _, line := range strings.Split(strings.TrimSpace(string(t.apply(r.hookCalls))), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var call struct {
			Tool string `json:"tool_name"`
		}
		if err := json.Unmarshal([]byte(line), &call); err != nil {
			return 125, "simcli: malformed hook_calls line"
		}
		for _, m := range doc.Hooks["PreToolUse"] {
			if !matches(m.Matcher, call.Tool) {
				continue
			}
			for _, h := range m.Hooks {
				decision := runHook(h.Command, line, cwd)
				s.logHook(call.Tool, decision)
			}
		}
	}
	return 0, ""
}

func matches(matcher, tool string) bool {
	for _, alt := range strings.Split(matcher, "|") {
		if alt == tool || alt == "*" {
			return true
		}
	}
	return false
}

// runHook runs one hook command with input on stdin and returns the
// decision; anything but a well-formed allow is deny (agy fails closed).
func runHook(command, input, cwd string) string {
	cmd := exec.Command(command)
	cmd.Dir = cwd
	cmd.Env = os.Environ()
	cmd.Stdin = strings.NewReader(input)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		return "deny"
	}
	var d struct {
		Decision string `json:"decision"`
	}
	if json.Unmarshal(out.Bytes(), &d) != nil || d.Decision != "allow" {
		return "deny"
	}
	return "allow"
}

func (s *simulation) logHook(tool, decision string) {
	f, err := os.OpenFile(filepath.Join(s.binDir, "hooks.jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	b, _ := json.Marshal(map[string]string{"tool": tool, "decision": decision})
	_, _ = f.Write(append(b, '\n'))
}
