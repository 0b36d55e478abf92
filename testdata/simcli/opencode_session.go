package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// sessionsDir holds the simulated OpenCode's persisted sessions, one JSON
// file of template variables per session ID, in the bin directory.
const sessionsDir = "opencode-sessions"

// persistSession records a workload's session as OpenCode stores it: the
// prompt it received, its directory, agent and model (split into the
// provider and model IDs 2.x reports). `session export` reads it back.
func (s *simulation) persistSession(vars map[string]string, prompt []byte) error {
	rec := map[string]string{}
	for k, v := range vars {
		rec[k] = v
	}
	rec["prompt"] = string(prompt)
	provider, model, _ := strings.Cut(vars["model"], "/")
	rec["provider_id"], rec["model_id"] = provider, model
	dir := filepath.Join(s.binDir, sessionsDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, filepath.Base(rec["session"])+".json"), b, 0o600)
}

// loadSession reads the session `session export [flags] <sessionID>` names.
func (s *simulation) loadSession() (map[string]string, error) {
	var id string
	for _, a := range s.args[2:] {
		if !strings.HasPrefix(a, "-") {
			id = a
		}
	}
	if id == "" {
		return nil, errors.New("no session ID given")
	}
	b, err := os.ReadFile(filepath.Join(s.binDir, sessionsDir, filepath.Base(id)+".json"))
	if err != nil {
		return nil, err
	}
	rec := map[string]string{}
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, err
	}
	return rec, nil
}
