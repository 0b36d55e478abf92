package events

import (
	"context"
	"runtime"
	"sort"
	"strings"
	"sync"
)

// MemoryStore is the in-memory Store, for tests and for running the engine
// without NATS. It stores the encoded bytes and decodes them on every read,
// so it returns exactly what the JetStream store returns for the same
// appends. Sequences are global across subjects, like a stream's.
type MemoryStore struct {
	mu      sync.Mutex
	seq     uint64
	log     []memEvent
	bySubj  map[string][]int // subject → indexes into log
	changed chan struct{}    // closed and replaced on every append
	index   runIndexMem      // the run index (runindex.go)
}

type memEvent struct {
	subject, run, msgID string
	seq                 uint64
	// data is the encoded event, kept as a string: immutable, and decoded
	// without a copy (decodeString).
	data string
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{bySubj: map[string][]int{}, changed: make(chan struct{})}
}

// Append implements Store.
func (s *MemoryStore) Append(ctx context.Context, env Envelope, expected uint64) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	env.Seq = 0
	data, err := Encode(env)
	if err != nil {
		return 0, err
	}
	subj, id := env.Subject(), appendMsgID(env, expected, data)
	s.mu.Lock()
	defer s.mu.Unlock()
	idx := s.bySubj[subj]
	var last uint64
	if len(idx) > 0 {
		last = s.log[idx[len(idx)-1]].seq
	}
	if last != expected {
		// A retried append: the event stored right after expected is ours.
		i := sort.Search(len(idx), func(i int) bool { return s.log[idx[i]].seq > expected })
		if i < len(idx) && s.log[idx[i]].msgID == id {
			return s.log[idx[i]].seq, nil
		}
		return 0, &ConflictError{Subject: subj, Expected: expected, Actual: last}
	}
	s.seq++
	s.log = append(s.log, memEvent{subject: subj, run: env.Run, msgID: id, seq: s.seq, data: string(data)})
	s.bySubj[subj] = append(idx, len(s.log)-1)
	close(s.changed)
	s.changed = make(chan struct{})
	return s.seq, nil
}

// Last implements Store.
func (s *MemoryStore) Last(ctx context.Context, run string, lane int) (Envelope, error) {
	if err := validateLoad(run, lane); err != nil {
		return Envelope{}, err
	}
	s.mu.Lock()
	idx := s.bySubj[EventSubject(run, lane)]
	if len(idx) == 0 {
		s.mu.Unlock()
		return Envelope{}, ErrNotFound
	}
	e := s.log[idx[len(idx)-1]]
	s.mu.Unlock()
	return decodeStoredString(e.subject, e.seq, e.data)
}

// Load implements Store.
func (s *MemoryStore) Load(ctx context.Context, run string, lane int) ([]Envelope, error) {
	if err := validateLoad(run, lane); err != nil {
		return nil, err
	}
	s.mu.Lock()
	idx := s.bySubj[EventSubject(run, lane)]
	evs := make([]*memEvent, len(idx))
	for i, j := range idx {
		evs[i] = &s.log[j]
	}
	s.mu.Unlock()
	return decodeAll(evs)
}

// LoadRun implements Store.
func (s *MemoryStore) LoadRun(ctx context.Context, run string) ([]Envelope, error) {
	if err := ValidateRunID(run); err != nil {
		return nil, err
	}
	s.mu.Lock()
	n := 0
	for _, e := range s.log {
		if e.run == run {
			n++
		}
	}
	evs := make([]*memEvent, 0, n)
	for i := range s.log {
		if s.log[i].run == run {
			evs = append(evs, &s.log[i])
		}
	}
	s.mu.Unlock()
	return decodeAll(evs)
}

// Runs implements Store.
func (s *MemoryStore) Runs(ctx context.Context) ([]string, error) {
	s.mu.Lock()
	var runs []string
	for subj := range s.bySubj {
		if run, ok := strings.CutSuffix(strings.TrimPrefix(subj, EventSubjectPrefix), "."+runToken); ok {
			runs = append(runs, run)
		}
	}
	s.mu.Unlock()
	sort.Strings(runs)
	return runs, nil
}

// Watch implements Store.
func (s *MemoryStore) Watch(ctx context.Context, run string, after uint64) (<-chan Envelope, error) {
	if run != "" {
		if err := ValidateRunID(run); err != nil {
			return nil, err
		}
	}
	next := memFollower(&s.mu, &s.log, &s.changed, func(e memEvent) (Envelope, bool, error) {
		if e.seq <= after || (run != "" && e.run != run) {
			return Envelope{}, false, nil
		}
		env, err := decodeStoredString(e.subject, e.seq, e.data)
		return env, err == nil, err
	})
	return follow(ctx, next, nil), nil
}

// WatchLane is Watch of run restricted to lane's events and the run-level
// ones, as JetStreamStore.WatchLane.
func (s *MemoryStore) WatchLane(ctx context.Context, run string, lane int, after uint64) (<-chan Envelope, error) {
	if err := validateLoad(run, lane); err != nil {
		return nil, err
	}
	laneSubject, runSubject := EventSubject(run, lane), EventSubject(run, RunLane)
	next := memFollower(&s.mu, &s.log, &s.changed, func(e memEvent) (Envelope, bool, error) {
		if e.seq <= after || (e.subject != laneSubject && e.subject != runSubject) {
			return Envelope{}, false, nil
		}
		env, err := decodeStoredString(e.subject, e.seq, e.data)
		return env, err == nil, err
	})
	return follow(ctx, next, nil), nil
}

// decodeAll decodes evs in order. A long list is cut into contiguous
// parts decoded side by side, one goroutine per processor Go may use
// (decoding is most of a replay's time, and the parts share nothing);
// the error returned is that of the first bad event in log order, as a
// single loop's would be.
//
// The events are pointers into the log: an entry never changes once
// appended (a later append writes past it or into a new array), so they
// are read after the lock is let go without copying them.
func decodeAll(evs []*memEvent) ([]Envelope, error) {
	out := make([]Envelope, len(evs))
	parts := min(runtime.GOMAXPROCS(0), len(evs)/decodePartMin, decodePartsMax)
	if parts < 2 {
		if err := decodeInto(out, evs); err != nil {
			return nil, err
		}
		return out, nil
	}
	size := (len(evs) + parts - 1) / parts
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := 1; p < parts; p++ {
		lo, hi := p*size, min(len(evs), (p+1)*size)
		wg.Go(func() { errs[p] = decodeInto(out[lo:hi], evs[lo:hi]) })
	}
	errs[0] = decodeInto(out[:size], evs[:size])
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// decodeAll's parts: none shorter than decodePartMin events (below that a
// goroutine costs more than it saves), at most decodePartsMax of them.
const (
	decodePartMin  = 128
	decodePartsMax = 8
)

// decodeInto decodes evs into out (of the same length), stopping at the
// first bad event.
func decodeInto(out []Envelope, evs []*memEvent) error {
	for i, e := range evs {
		env, err := decodeStoredString(e.subject, e.seq, e.data)
		if err != nil {
			return err
		}
		out[i] = env
	}
	return nil
}

// decodeStored decodes an event read back from a store and checks that it
// sits on its own subject.
func decodeStored(subject string, seq uint64, data []byte) (Envelope, error) {
	env, err := Decode(data)
	return checkStored(subject, seq, env, err)
}

// decodeStoredString is decodeStored of an event kept as a string.
func decodeStoredString(subject string, seq uint64, data string) (Envelope, error) {
	env, err := decodeString(data)
	return checkStored(subject, seq, env, err)
}

func checkStored(subject string, seq uint64, env Envelope, err error) (Envelope, error) {
	if err != nil {
		return Envelope{}, &DecodeError{What: "stored event " + subject + " #" + itoa64(seq), Err: err}
	}
	if !onEventSubject(subject, env.Run, env.Lane) {
		return Envelope{}, &DecodeError{What: "stored event " + subject + " #" + itoa64(seq), Err: invalidf("envelope belongs on %s", env.Subject())}
	}
	env.Seq = seq
	return env, nil
}
