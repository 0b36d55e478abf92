package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"time"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// Ledger states. pending is reserved before the operation; complete and
// rejected settle it. A pending record after a crash stays pending until
// the parent reconciles it.
const (
	StatePending  = "pending"
	StateComplete = "complete"
	StateRejected = "rejected"
)

// LedgerSchema is the ledger file's schema version.
const LedgerSchema = 1

// Ledger bounds: a larger file, record list or JSON value is refused.
const (
	maxLedgerBytes  = 16 << 20
	maxLedgerValue  = 64 << 10
	maxLedgerID     = 200
	maxLedgerRecord = 10000
)

// LedgerRecord is one parent operation in the ledger.
type LedgerRecord struct {
	ID         string               `json:"id"`
	Task       string               `json:"task"`
	Checkpoint string               `json:"checkpoint"`
	Kind       policy.OperationKind `json:"kind"`
	State      string               `json:"state"`
	Expected   json.RawMessage      `json:"expected"`
	Result     json.RawMessage      `json:"result,omitempty"`
	PendingAt  string               `json:"pendingAt"`
	SettledAt  string               `json:"settledAt,omitempty"`
}

// LedgerFile is the ledger file's content.
type LedgerFile struct {
	Schema     int            `json:"schema"`
	Operations []LedgerRecord `json:"operations"`
}

// RecordRequest is one op-record call.
type RecordRequest struct {
	Ledger     string
	ID         string
	Task       string
	Checkpoint string
	Kind       policy.OperationKind
	State      string
	Expected   []byte // JSON; required for pending, checked against the record when settling.
	Result     []byte // JSON; required for complete, optional for rejected.
	Now        time.Time
}

// LedgerRefusal is an op-record request the ledger's rules refuse; the
// file is unchanged.
type LedgerRefusal struct{ Reason string }

func (r *LedgerRefusal) Error() string { return r.Reason }

// IsLedgerRefusal reports whether err is a *LedgerRefusal.
func IsLedgerRefusal(err error) bool {
	var r *LedgerRefusal
	return errors.As(err, &r)
}

func ledgerRefusef(format string, a ...any) error {
	return &LedgerRefusal{Reason: fmt.Sprintf(format, a...)}
}

// CheckRecordRequest reports a usage problem in an op-record call.
func CheckRecordRequest(r RecordRequest) error {
	for _, f := range []struct{ name, v string }{{"--id", r.ID}, {"--task", r.Task}, {"--checkpoint", r.Checkpoint}} {
		if !ledgerID(f.v) {
			return policy.Usagef("%s %q: want a non-blank single-line id of at most %d bytes", f.name, f.v, maxLedgerID)
		}
	}
	if r.Kind != policy.OpCommitCheckpoint && r.Kind != policy.OpRunChecks {
		return policy.Usagef("--kind %q: want commit-checkpoint or run-checks", r.Kind)
	}
	switch r.State {
	case StatePending:
		if r.Expected == nil {
			return policy.Usagef("--state pending needs --expected: the JSON preconditions (digest, HEAD) the operation was reserved under")
		}
		if r.Result != nil {
			return policy.Usagef("--state pending takes no --result: the operation has not happened yet")
		}
	case StateComplete:
		if r.Result == nil {
			return policy.Usagef("--state complete needs --result: the JSON result of the operation (commit id, check outcome)")
		}
	case StateRejected:
	default:
		return policy.Usagef("--state %q: want pending, complete or rejected", r.State)
	}
	for _, v := range []struct {
		name string
		b    []byte
	}{{"--expected", r.Expected}, {"--result", r.Result}} {
		if v.b == nil {
			continue
		}
		if len(v.b) > maxLedgerValue {
			return policy.Usagef("%s exceeds %d bytes", v.name, maxLedgerValue)
		}
		if err := jsonObject(v.b); err != nil {
			return policy.Usagef("%s: want one JSON object: %v", v.name, err)
		}
	}
	return nil
}

func ledgerID(s string) bool {
	return strings.TrimSpace(s) != "" && len(s) <= maxLedgerID && !strings.ContainsAny(s, "\x00\r\n")
}

// jsonObject checks b is exactly one JSON object.
func jsonObject(b []byte) error {
	d := json.NewDecoder(bytes.NewReader(b))
	var v any
	if err := d.Decode(&v); err != nil {
		return err
	}
	if _, ok := v.(map[string]any); !ok {
		return errors.New("not an object")
	}
	if _, err := d.Token(); err != io.EOF {
		return errors.New("trailing data after the object")
	}
	return nil
}

// Record applies one op-record call under the ledger's exclusive lock and
// replaces the file atomically (temporary file, fsync, rename, directory
// fsync). It returns the record as written.
//
//   - pending reserves a new id whose task/checkpoint/kind identity no
//     record holds, in any state: a rejected or complete operation keeps
//     its identity, so a new operation needs a new checkpoint.
//   - complete and rejected settle a pending record with the same id and
//     identity; --expected, when given, must equal the reserved one.
func Record(r RecordRequest) (*LedgerRecord, error) {
	if err := CheckRecordRequest(r); err != nil {
		return nil, err
	}
	unlock, err := lockLedger(r.Ledger)
	if err != nil {
		return nil, err
	}
	defer unlock()
	lf, err := readLedger(r.Ledger, true)
	if err != nil {
		return nil, err
	}
	now := r.Now.UTC().Format(time.RFC3339Nano)
	var rec *LedgerRecord
	switch r.State {
	case StatePending:
		for _, o := range lf.Operations {
			if o.ID == r.ID {
				return nil, ledgerRefusef("operation id %q is already in the ledger (%s); pick a new unique id", r.ID, o.State)
			}
			if o.Task == r.Task && o.Checkpoint == r.Checkpoint && o.Kind == r.Kind {
				return nil, ledgerRefusef("task %q checkpoint %q %s already has operation %q (%s): %s", r.Task, r.Checkpoint, r.Kind, o.ID, o.State, identityAdvice(o.State))
			}
		}
		if len(lf.Operations) >= maxLedgerRecord {
			return nil, ledgerRefusef("the ledger holds %d operations, the most it accepts; start a new ledger", len(lf.Operations))
		}
		lf.Operations = append(lf.Operations, LedgerRecord{
			ID: r.ID, Task: r.Task, Checkpoint: r.Checkpoint, Kind: r.Kind, State: StatePending,
			Expected: compactJSON(r.Expected), PendingAt: now,
		})
		rec = &lf.Operations[len(lf.Operations)-1]
	default:
		i := -1
		for j, o := range lf.Operations {
			if o.ID == r.ID {
				i = j
			}
		}
		if i < 0 {
			return nil, ledgerRefusef("operation %q is not in the ledger: record --state pending before the operation, then settle it", r.ID)
		}
		rec = &lf.Operations[i]
		if rec.Task != r.Task || rec.Checkpoint != r.Checkpoint || rec.Kind != r.Kind {
			return nil, ledgerRefusef("operation %q was reserved for task %q checkpoint %q %s, not task %q checkpoint %q %s",
				r.ID, rec.Task, rec.Checkpoint, rec.Kind, r.Task, r.Checkpoint, r.Kind)
		}
		if rec.State != StatePending {
			return nil, ledgerRefusef("operation %q is already %s; only a pending operation can be settled", r.ID, rec.State)
		}
		if r.Expected != nil && !sameJSON(rec.Expected, r.Expected) {
			return nil, ledgerRefusef("operation %q was reserved with different --expected preconditions; revalidate before settling", r.ID)
		}
		rec.State = r.State
		if r.Result != nil {
			rec.Result = compactJSON(r.Result)
		}
		rec.SettledAt = now
	}
	out := *rec
	if err := writeLedger(r.Ledger, lf); err != nil {
		return nil, err
	}
	return &out, nil
}

func identityAdvice(state string) string {
	switch state {
	case StatePending:
		return "reconcile the pending operation (inspect the repository, then record complete or rejected) instead of reserving it again"
	case StateRejected:
		return "a rejected operation keeps its identity; a new operation needs a separately reviewed checkpoint"
	}
	return "the operation already happened; a new operation needs a new checkpoint"
}

// Status reads the ledger (a missing file is an error, never an empty
// ledger: a wrong path must not look like "nothing pending").
func Status(path string) (*LedgerFile, error) {
	return readLedger(path, false)
}

// Pending returns the ledger's pending records.
func (lf *LedgerFile) Pending() []LedgerRecord {
	out := []LedgerRecord{}
	for _, o := range lf.Operations {
		if o.State == StatePending {
			out = append(out, o)
		}
	}
	return out
}

// lockLedger takes the exclusive lock of the ledger's sidecar lock file
// (path + ".lock"); the ledger itself is replaced by rename, so it cannot
// carry the lock. The kernel drops the lock when its holder dies.
func lockLedger(path string) (func(), error) {
	if err := events.CheckFileDir(filepath.Dir(path), "ledger directory"); err != nil {
		return nil, fmt.Errorf("lock the ledger: %w", err)
	}
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the ledger: %w", err)
	}
	if err := events.CheckOwnedFile(f, path+".lock", "ledger lock"); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock the ledger: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock the ledger: %w", err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// readLedger strictly decodes the ledger file: known schema, no unknown
// member, every record well formed, ids and identities unique. The ledger
// and its directory must be this user's (events.CheckFileDir,
// events.CheckOwnedFile): a ledger another user wrote first is refused.
func readLedger(path string, missingOK bool) (*LedgerFile, error) {
	if err := events.CheckFileDir(filepath.Dir(path), "ledger directory"); err != nil {
		return nil, fmt.Errorf("read the ledger: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errors.Is(err, os.ErrNotExist) && missingOK {
		return &LedgerFile{Schema: LedgerSchema, Operations: []LedgerRecord{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the ledger: %w", err)
	}
	defer f.Close()
	if err := events.CheckOwnedFile(f, path, "ledger"); err != nil {
		return nil, fmt.Errorf("read the ledger: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxLedgerBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read the ledger: %w", err)
	}
	if len(b) > maxLedgerBytes {
		return nil, fmt.Errorf("the ledger %s exceeds %d bytes", path, maxLedgerBytes)
	}
	lf, err := decodeLedger(b)
	if err != nil {
		return nil, fmt.Errorf("the ledger %s is invalid: %w", path, err)
	}
	return lf, nil
}

func decodeLedger(b []byte) (*LedgerFile, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	var lf LedgerFile
	if err := d.Decode(&lf); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the ledger object")
	}
	if lf.Schema != LedgerSchema {
		return nil, fmt.Errorf("schema %d, want %d", lf.Schema, LedgerSchema)
	}
	if lf.Operations == nil {
		return nil, errors.New(`missing "operations"`)
	}
	ids := map[string]bool{}
	type identity struct {
		task, checkpoint string
		kind             policy.OperationKind
	}
	idents := map[identity]bool{}
	for i, o := range lf.Operations {
		if !ledgerID(o.ID) || !ledgerID(o.Task) || !ledgerID(o.Checkpoint) {
			return nil, fmt.Errorf("operation %d has a blank or malformed id, task or checkpoint", i)
		}
		if o.Kind != policy.OpCommitCheckpoint && o.Kind != policy.OpRunChecks {
			return nil, fmt.Errorf("operation %q has unknown kind %q", o.ID, o.Kind)
		}
		switch o.State {
		case StatePending, StateComplete, StateRejected:
		default:
			return nil, fmt.Errorf("operation %q has unknown state %q", o.ID, o.State)
		}
		if jsonObject(o.Expected) != nil {
			return nil, fmt.Errorf("operation %q has no expected object", o.ID)
		}
		if ids[o.ID] {
			return nil, fmt.Errorf("operation id %q appears twice", o.ID)
		}
		ids[o.ID] = true
		lf.Operations[i].Expected = compactJSON(o.Expected)
		if len(o.Result) > 0 {
			lf.Operations[i].Result = compactJSON(o.Result)
		}
		k := identity{o.Task, o.Checkpoint, o.Kind}
		if idents[k] {
			return nil, fmt.Errorf("task %q checkpoint %q %s appears twice", o.Task, o.Checkpoint, o.Kind)
		}
		idents[k] = true
	}
	return &lf, nil
}

// writeLedger replaces the ledger atomically: a temporary file in the same
// directory, written and fsynced, renamed over the ledger, then the
// directory fsynced so the rename itself is durable.
func writeLedger(path string, lf *LedgerFile) error {
	b, err := json.MarshalIndent(lf, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the ledger: %w", err)
	}
	b = append(b, '\n')
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write the ledger: %w", err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(b); err != nil {
		return fmt.Errorf("write the ledger: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("fsync the ledger: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write the ledger: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replace the ledger: %w", err)
	}
	done = true
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("fsync the ledger directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync the ledger directory: %w", err)
	}
	return nil
}

func compactJSON(b []byte) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return json.RawMessage(b)
	}
	return json.RawMessage(buf.Bytes())
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
