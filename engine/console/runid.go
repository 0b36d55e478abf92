package console

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/switchyard-dev/switchyard/events"
)

// maxListedCandidates bounds the run ids an ambiguous prefix's error
// lists (it always gives their count).
const maxListedCandidates = 5

// runID resolves the {id} of the path as the CLI's --run does: the run
// with exactly that id, else the one run whose id starts with it. A
// malformed id is a 400 invalid_input, no match a 404 not_found, more
// than one an ambiguous_prefix naming how many runs it starts.
func (s *Server) runID(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("id")
	if err := events.ValidateRunID(id); err != nil {
		s.failField(w, http.StatusBadRequest, "id", "%s", invalidReason(err))
		return "", false
	}
	ctx := r.Context()
	if _, err := s.o.Store.Last(ctx, id, events.RunLane); err == nil {
		return id, true
	} else if !errors.Is(err, events.ErrNotFound) {
		s.fail(w, http.StatusServiceUnavailable, "look up run %s: %v", id, err)
		return "", false
	}
	ids, err := s.o.Store.Runs(ctx)
	if err != nil {
		s.fail(w, http.StatusServiceUnavailable, "list runs: %v", err)
		return "", false
	}
	var hits []string
	for _, run := range ids {
		if strings.HasPrefix(run, id) {
			hits = append(hits, run)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], true
	case 0:
		s.failField(w, http.StatusNotFound, "id", "run %s: unknown run", id)
		return "", false
	}
	slices.Sort(hits)
	listed := strings.Join(hits[:min(len(hits), maxListedCandidates)], ", ")
	if len(hits) > maxListedCandidates {
		listed += ", …"
	}
	s.failCode(w, http.StatusBadRequest, codeAmbiguousPrefix, "id", "run id prefix %q is ambiguous: it starts %d runs (%s); pass more of the id", id, len(hits), listed)
	return "", false
}

// invalidReason is a validation error's message without its "events:
// invalid: " prefixes: it names the value and what is wanted ("run id
// \"bad id\": want 1-128 characters ...").
func invalidReason(err error) string {
	return strings.TrimPrefix(cleanMessage(err.Error()), "invalid: ")
}
