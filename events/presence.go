package events

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"time"

	"github.com/switchyard-dev/switchyard/policy"
)

// Presence is where workers announce themselves: one record per worker,
// which lives for the store's TTL after each announcement. A worker
// announces every TTL/3 while it runs and withdraws when it stops cleanly;
// a crashed worker's record expires by itself. Status reads Live to say
// which providers have a worker now.
//
// Expiry is the store's own (the server's clock for JetStream): no reader
// compares its clock with a worker's.
//
// Implementations: *JetStreamPresence (stream WorkersStream, MaxAge = TTL)
// and *MemoryPresence; both pass eventstest.RunPresenceConformance.
type Presence interface {
	// Announce stores or refreshes w's record (keyed by w.WorkerID). It
	// lives for TTL after the call unless announced again.
	Announce(ctx context.Context, w WorkerPresence) error
	// Withdraw removes workerID's record; no error when there is none.
	Withdraw(ctx context.Context, workerID string) error
	// Live returns every record announced within the TTL, sorted by
	// worker id, with Seen set.
	Live(ctx context.Context) ([]WorkerPresence, error)
	// TTL is how long a record lives after its announcement.
	TTL() time.Duration
}

// DefaultPresenceTTL is how long a worker's announcement lives.
const DefaultPresenceTTL = 15 * time.Second

// WorkerPresence is one worker's announcement.
type WorkerPresence struct {
	WorkerID string `json:"workerId"`
	// Providers are the providers whose jobs the worker takes.
	Providers []policy.Provider `json:"providers"`
	// Concurrency is the worker's per-provider bound (--concurrency); the
	// deployment's cap (Caps) may let it run fewer.
	Concurrency int `json:"concurrency,omitempty"`
	// Host and PID say where it runs.
	Host string `json:"host,omitempty"`
	PID  int    `json:"pid,omitempty"`
	// NoCLI are the providers among Providers whose CLI the worker did
	// not find when it started: their attempts end unavailable-cli.
	NoCLI []policy.Provider `json:"noCli,omitempty"`
	// Started is when the worker started (its own clock).
	Started time.Time `json:"started"`
	// Seen is when the store received the latest announcement (the
	// server's clock for JetStream). Set by Live; ignored by Announce.
	Seen time.Time `json:"seen,omitzero"`
}

// presenceRecord is the stored JSON of an announcement.
type presenceRecord struct {
	Schema      int               `json:"schema"`
	WorkerID    string            `json:"workerId"`
	Providers   []policy.Provider `json:"providers"`
	Concurrency int               `json:"concurrency,omitempty"`
	Host        string            `json:"host,omitempty"`
	PID         int               `json:"pid,omitempty"`
	NoCLI       []policy.Provider `json:"noCli,omitempty"`
	Started     time.Time         `json:"started"`
}

// validatePresence checks an announcement before it is stored.
func validatePresence(w WorkerPresence) error {
	if err := ValidateWorkerID(w.WorkerID); err != nil {
		return err
	}
	if len(w.Providers) == 0 {
		return invalidf("worker %s announces no provider", w.WorkerID)
	}
	for _, p := range w.Providers {
		if err := ValidateProvider(string(p)); err != nil {
			return err
		}
	}
	for _, p := range w.NoCLI {
		if !slices.Contains(w.Providers, p) {
			return invalidf("worker %s: provider %s without a CLI is not one it announces", w.WorkerID, p)
		}
	}
	if w.Concurrency < 0 || w.PID < 0 {
		return invalidf("worker %s: negative concurrency or pid", w.WorkerID)
	}
	if len(w.Host) > MaxWorkerIDLen {
		return invalidf("worker %s: host longer than %d bytes", w.WorkerID, MaxWorkerIDLen)
	}
	return nil
}

func (w WorkerPresence) record() presenceRecord {
	return presenceRecord{Schema: JobSchemaVersion, WorkerID: w.WorkerID, Providers: w.Providers,
		Concurrency: w.Concurrency, Host: w.Host, PID: w.PID, NoCLI: w.NoCLI, Started: w.Started.UTC()}
}

func decodePresence(b []byte) (WorkerPresence, error) {
	var r presenceRecord
	if err := unmarshalStored(b, &r); err != nil {
		return WorkerPresence{}, &DecodeError{What: "worker presence", Err: err}
	}
	if r.Schema != JobSchemaVersion {
		return WorkerPresence{}, &DecodeError{What: "worker presence", Err: schemaErr(r.Schema)}
	}
	w := WorkerPresence{WorkerID: r.WorkerID, Providers: r.Providers, Concurrency: r.Concurrency,
		Host: r.Host, PID: r.PID, NoCLI: r.NoCLI, Started: r.Started}
	if err := validatePresence(w); err != nil {
		return WorkerPresence{}, &DecodeError{What: "worker presence", Err: err}
	}
	return w, nil
}

// presenceToken is the subject token of a worker id: worker ids may hold
// characters a subject cannot, so the token is a digest of the id.
func presenceToken(workerID string) string {
	sum := sha256.Sum256([]byte(workerID))
	return hex.EncodeToString(sum[:16])
}
