package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/switchyard-dev/switchyard/policy"
)

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// decodeSnapshot strictly decodes a progress file: every key present, no
// unknown key at any level, closed vocabularies, valid timestamps and
// non-negative counts. Nothing from a rejected file is ever echoed.
func decodeSnapshot(b []byte) (*snapshot, error) {
	top, err := exactKeys(b, "schemaVersion", "kind", "seq", "updatedAt", "phase", "attemptId", "provider",
		"runner", "child", "retryWait", "activity", "cancellation", "childSettled", "terminal", "receiptRef")
	if err != nil {
		return nil, err
	}
	nested := []struct {
		key  string
		keys []string
	}{
		{"runner", []string{"pid", "startedAt", "startToken"}},
		{"child", []string{"role", "pid", "startToken", "running", "exitCode", "drained"}},
		{"activity", []string{"stdoutBytes", "stderrBytes", "lastActivityAt"}},
		{"cancellation", []string{"requested"}},
		{"childSettled", []string{"outcome", "cause", "at"}},
		{"terminal", []string{"at", "receiptWritten"}},
		{"receiptRef", []string{"dev", "ino"}},
	}
	var req map[string]json.RawMessage
	for _, n := range nested {
		if string(top[n.key]) == "null" && n.key != "runner" && n.key != "activity" && n.key != "cancellation" {
			continue
		}
		m, err := exactKeys(top[n.key], n.keys...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n.key, err)
		}
		if n.key == "cancellation" {
			req = m
		}
	}
	if string(req["requested"]) != "null" {
		if _, err := exactKeys(req["requested"], "signal", "at"); err != nil {
			return nil, err
		}
	}
	var s snapshot
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&s); err != nil {
		return nil, err
	}
	okISO := func(v string) bool { t, err := time.Parse(isoMillis, v); return err == nil && iso(t) == v }
	okToken := func(p *string) bool {
		if p == nil {
			return true
		}
		if len(*p) > 128 {
			return false
		}
		for _, c := range []byte(*p) {
			if c < 0x20 || c > 0x7e {
				return false
			}
		}
		return true
	}
	ok := s.SchemaVersion == 1 && s.Kind == progressKind && s.Seq >= 0 && okISO(s.UpdatedAt) &&
		slices.Contains(phases, s.Phase) && uuidRE.MatchString(s.AttemptID) &&
		knownProvider(s.Provider) &&
		s.Runner.Pid > 0 && okISO(s.Runner.StartedAt) && okToken(s.Runner.StartToken) &&
		s.Activity.StdoutBytes >= 0 && s.Activity.StderrBytes >= 0 &&
		(s.Activity.LastActivityAt == nil || okISO(*s.Activity.LastActivityAt))
	if c := s.Child; c != nil {
		ok = ok && (c.Role == rolePreflight || c.Role == roleWorkload) && c.Pid > 0 && okToken(c.StartToken) &&
			(c.ExitCode == nil || *c.ExitCode >= 0)
	}
	if r := s.Cancellation.Requested; r != nil {
		ok = ok && (r.Signal == "SIGINT" || r.Signal == "SIGTERM") && okISO(r.At)
	}
	if st := s.ChildSettled; st != nil {
		ok = ok && (st.Outcome == settledSignalled || st.Outcome == settledAlreadyExits) &&
			(st.Cause == "cancel" || st.Cause == "deadline") && okISO(st.At)
	}
	if t := s.Terminal; t != nil {
		ok = ok && okISO(t.At)
	}
	if !ok {
		return nil, errors.New("snapshot field out of range")
	}
	return &s, nil
}

// exactKeys requires b to be one JSON object with exactly the given keys,
// each once, and returns its members. Every object of a snapshot passes
// through it, so the struct decode after it never sees a repeated key
// (encoding/json would let the last one silently win). Only the snapshot's
// own key names are ever echoed.
func exactKeys(b []byte, keys ...string) (map[string]json.RawMessage, error) {
	m, err := policy.ObjectMembers(b, keys)
	var je *policy.JSONError
	switch {
	case errors.As(err, &je) && je.Fault == policy.JSONUnknownKey:
		return nil, errors.New("unexpected or missing keys")
	case errors.As(err, &je) && je.Fault == policy.JSONDuplicateKey:
		return nil, fmt.Errorf("duplicate key %s", je.Key)
	case err != nil:
		return nil, errors.New("not a JSON object")
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return nil, fmt.Errorf("missing key %s", k)
		}
	}
	return m, nil
}
