package console

import (
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
)

// writeJSON writes v as indented JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// apiRuns lists runs as `status --json` does (newest first), filtered by
// ?state= (comma-separated run states), ?role= (exact role) and ?q= (run id
// prefix), at most ?limit= (default every run).
func (s *Server) apiRuns(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var states []engine.RunState
	if v := q.Get("state"); v != "" {
		for _, name := range strings.Split(v, ",") {
			st := engine.RunState(strings.TrimSpace(name))
			if !slices.Contains(engine.RunStates, st) {
				s.fail(w, http.StatusBadRequest, "state %q is not a run state; want one of running, waiting-for-parent, final, cancelled", name)
				return
			}
			states = append(states, st)
		}
	}
	limit := 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			s.fail(w, http.StatusBadRequest, "limit %q: want a number of runs (0: every run)", v)
			return
		}
		limit = n
	}
	all, err := s.o.Engine.Runs(r.Context())
	if err != nil {
		s.fail(w, http.StatusServiceUnavailable, "list runs: %v", err)
		return
	}
	role, prefix := q.Get("role"), q.Get("q")
	out := make([]engine.RunStatus, 0, len(all))
	for _, st := range all {
		if (len(states) == 0 || slices.Contains(states, st.State())) &&
			(role == "" || st.Role == role) && strings.HasPrefix(st.Run, prefix) {
			out = append(out, st)
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		if !out[a].Created.Equal(out[b].Created) {
			return out[a].Created.After(out[b].Created)
		}
		return out[a].Run > out[b].Run
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	writeJSON(w, http.StatusOK, out)
}

// apiRun serves one run's status: the object `status --run ID --json`
// prints.
func (s *Server) apiRun(w http.ResponseWriter, r *http.Request) {
	id, ok := s.runID(w, r)
	if !ok {
		return
	}
	st, err := s.o.Engine.Status(r.Context(), id)
	if err != nil {
		s.failEngine(w, err, "run "+id)
		return
	}
	var doc any = st
	if s.o.RunDoc != nil {
		if doc, err = s.o.RunDoc(r.Context(), st); err != nil {
			s.fail(w, http.StatusServiceUnavailable, "run %s: %v", id, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, doc)
}

// apiReport serves the run report (`switchyard report --json`): every
// attempt, skipped and excluded ones with their cause, and the diversity.
func (s *Server) apiReport(w http.ResponseWriter, r *http.Request) {
	id, ok := s.runID(w, r)
	if !ok {
		return
	}
	rep, err := s.o.Engine.Report(r.Context(), id)
	if err != nil {
		s.failEngine(w, err, "run "+id)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

// apiEvents serves the run's event log in store order, each event as its
// wire JSON; ?after=SEQ keeps the events after that sequence.
func (s *Server) apiEvents(w http.ResponseWriter, r *http.Request) {
	id, ok := s.runID(w, r)
	if !ok {
		return
	}
	after, ok := s.afterParam(w, r)
	if !ok {
		return
	}
	envs, err := s.o.Store.LoadRun(r.Context(), id)
	if err != nil {
		s.fail(w, http.StatusServiceUnavailable, "load run %s: %v", id, err)
		return
	}
	if len(envs) == 0 {
		s.fail(w, http.StatusNotFound, "run %s: %v", id, engine.ErrUnknownRun)
		return
	}
	out := make([]events.Envelope, 0, len(envs))
	for _, e := range envs {
		if e.Seq > after {
			out = append(out, e)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// apiTimeline serves the run's lanes as timelines (see Timeline).
func (s *Server) apiTimeline(w http.ResponseWriter, r *http.Request) {
	id, ok := s.runID(w, r)
	if !ok {
		return
	}
	envs, err := s.o.Store.LoadRun(r.Context(), id)
	if err != nil {
		s.fail(w, http.StatusServiceUnavailable, "load run %s: %v", id, err)
		return
	}
	if len(envs) == 0 {
		s.fail(w, http.StatusNotFound, "run %s: %v", id, engine.ErrUnknownRun)
		return
	}
	writeJSON(w, http.StatusOK, BuildTimeline(envs))
}

// afterParam reads ?after= (or the Last-Event-ID header of a resumed event
// stream): a store sequence, 0 when absent.
func (s *Server) afterParam(w http.ResponseWriter, r *http.Request) (uint64, bool) {
	v := r.URL.Query().Get("after")
	if h := r.Header.Get("Last-Event-ID"); h != "" {
		v = h
	}
	if v == "" {
		return 0, true
	}
	after, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		s.fail(w, http.StatusBadRequest, "after %q: want an event sequence number", v)
		return 0, false
	}
	return after, true
}

// machineSVG serves the lane machine's diagram.
func (s *Server) machineSVG(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(MachineSVG()))
}
