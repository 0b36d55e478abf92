package activities

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
	if err := exactKeys(b, "schemaVersion", "kind", "seq", "updatedAt", "phase", "attemptId", "provider",
		"runner", "child", "retryWait", "activity", "cancellation", "childSettled", "terminal", "receiptRef"); err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	json.Unmarshal(b, &top)
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
	for _, n := range nested {
		if string(top[n.key]) == "null" && n.key != "runner" && n.key != "activity" && n.key != "cancellation" {
			continue
		}
		if err := exactKeys(top[n.key], n.keys...); err != nil {
			return nil, fmt.Errorf("%s: %w", n.key, err)
		}
	}
	var req map[string]json.RawMessage
	json.Unmarshal(top["cancellation"], &req)
	if string(req["requested"]) != "null" {
		if err := exactKeys(req["requested"], "signal", "at"); err != nil {
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
		(s.Provider.Valid() || s.Provider == policy.Gemini) &&
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

// exactKeys requires b to be a JSON object with exactly the given keys.
func exactKeys(b []byte, keys ...string) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return errors.New("not a JSON object")
	}
	if len(m) != len(keys) {
		return errors.New("unexpected or missing keys")
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return fmt.Errorf("missing key %s", k)
		}
	}
	return nil
}
