package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/switchyard-dev/switchyard/events"
)

// keepAlive is how often an idle event stream sends a comment, so proxies
// and browsers keep it open.
const keepAlive = 15 * time.Second

// hub fans the shared watch of every run out to the runs-list streams.
type hub struct {
	mu   sync.Mutex
	subs map[chan runChange]struct{}
}

// runChange is one event of the shared watch, as the runs list needs it.
type runChange struct {
	Run  string      `json:"run"`
	Lane int         `json:"lane"`
	Type events.Type `json:"type"`
	Seq  uint64      `json:"seq"`
}

func newHub() *hub { return &hub{subs: map[chan runChange]struct{}{}} }

func (h *hub) subscribe() (chan runChange, func()) {
	ch := make(chan runChange, 64)
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs, ch)
		h.mu.Unlock()
	}
}

// publish hands env to every subscriber; a subscriber whose buffer is full
// misses it (the list it feeds refetches on the next change anyway).
func (h *hub) publish(env events.Envelope) {
	c := runChange{Run: env.Run, Lane: env.Lane, Type: env.Type, Seq: env.Seq}
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- c:
		default:
		}
	}
}

// sse prepares w for a server-sent event stream; nil if w cannot flush.
func sse(w http.ResponseWriter) http.Flusher {
	f, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return nil
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": switchyard\n\n")
	f.Flush()
	return f
}

// runStream streams one run's events after ?after= (or Last-Event-ID) as
// server-sent events ("event: event", id the store sequence, data the
// event's JSON), fed by a JetStream watch of the run, until the client
// goes away.
func (s *Server) runStream(w http.ResponseWriter, r *http.Request) {
	id, ok := s.runID(w, r)
	if !ok {
		return
	}
	after, ok := s.afterParam(w, r)
	if !ok {
		return
	}
	ch, err := s.o.Store.Watch(r.Context(), id, after)
	if err != nil {
		s.fail(w, http.StatusServiceUnavailable, "watch run %s: %v", id, err)
		return
	}
	f := sse(w)
	if f == nil {
		return
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case env, open := <-ch:
			if !open {
				return // the browser reconnects with Last-Event-ID
			}
			b, err := json.Marshal(env)
			if err != nil {
				continue
			}
			extendWrite(w, r)
			fmt.Fprintf(w, "id: %d\nevent: event\ndata: %s\n\n", env.Seq, b)
			f.Flush()
		case <-tick.C:
			extendWrite(w, r)
			fmt.Fprint(w, ": keep-alive\n\n")
			f.Flush()
		case <-r.Context().Done():
			return
		}
	}
}

// runsStream streams a notice per event of any run ("event: change",
// data {"run","lane","type","seq"}) from the shared watch, for the runs
// list.
func (s *Server) runsStream(w http.ResponseWriter, r *http.Request) {
	ch, done := s.hub.subscribe()
	defer done()
	f := sse(w)
	if f == nil {
		return
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case c := <-ch:
			b, _ := json.Marshal(c)
			extendWrite(w, r)
			fmt.Fprintf(w, "event: change\ndata: %s\n\n", b)
			f.Flush()
		case <-tick.C:
			extendWrite(w, r)
			fmt.Fprint(w, ": keep-alive\n\n")
			f.Flush()
		case <-r.Context().Done():
			return
		}
	}
}
