package console

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
)

// maxFormBytes caps an answer form's body.
const maxFormBytes = 64 << 10

// Answer kinds a form posts (field "kind"): the CLI command each matches.
const (
	answerVerdict   = "verdict"   // switchyard inspect
	answerOperation = "operation" // switchyard operation done / reject
	answerRecover   = "recover"   // switchyard recover
	answerCancel    = "cancel"    // switchyard cancel --lane
)

// recoveryFields are the form fields of a clear recovery (recover
// --clear's options).
var recoveryFields = []string{"correction", "blockageId", "snapshotRef", "snapshotDigest", "partialWorkRef", "sideEffectsRef", "stoppedWritersRef"}

// answerResult is the JSON reply to an answer posted with
// Accept: application/json.
type answerResult struct {
	Message string `json:"message"`
}

// answer records a parent's answer for a lane through the engine call the
// matching CLI command makes (Verdict, OperationDone, Recover, Cancel), so
// it is recorded the same way. It is reached only with the bearer token in
// the Authorization header (auth), which no other origin's page holds or
// can make a browser attach, so it needs no CSRF token. The reply is a
// redirect to the run page, or JSON when the request accepts it.
func (s *Server) answer(w http.ResponseWriter, r *http.Request) {
	id, ok := s.runID(w, r)
	if !ok {
		return
	}
	lane, err := strconv.Atoi(r.PathValue("lane"))
	if err != nil || lane < 0 || lane > events.MaxLanes {
		s.failField(w, http.StatusBadRequest, "lane", "lane %q: want a zero-based lane index", r.PathValue("lane"))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		s.fail(w, http.StatusBadRequest, "read the form: %v", err)
		return
	}
	f := func(name string) string { return strings.TrimSpace(r.PostForm.Get(name)) }
	var msg string
	ctx := r.Context()
	switch kind := f("kind"); kind {
	case answerVerdict:
		v := events.VerdictState(f("state"))
		if v != events.VerdictClear && v != events.VerdictUnsafe {
			s.fail(w, http.StatusBadRequest, "verdict state %q: want clear or unsafe", f("state"))
			return
		}
		if f("evidence") == "" {
			s.fail(w, http.StatusBadRequest, "a verdict needs evidence: a reference to your inspection record")
			return
		}
		err, msg = s.o.Engine.Verdict(ctx, id, lane, v, f("evidence")), fmt.Sprintf("verdict %s recorded for run %s lane %d", v, id, lane)
	case answerOperation:
		// Settles the pending operation as switchyard operation done (or
		// reject) does; validate and begin stay with the parent's CLI,
		// beside the worktree the operation is performed in.
		res, rejected := events.OperationResult(f("result")), false
		switch f("result") {
		case string(events.OperationSucceeded), string(events.OperationFailed):
		case "rejected":
			res, rejected = events.OperationFailed, true
		default:
			s.fail(w, http.StatusBadRequest, "operation result %q: want succeeded, failed or rejected", f("result"))
			return
		}
		what := string(res)
		if rejected {
			what = "rejected"
		}
		err = s.o.Engine.OperationSettle(ctx, id, lane, res, rejected, f("ref"), f("detail"))
		msg = fmt.Sprintf("operation %s recorded for run %s lane %d", what, id, lane)
	case answerRecover:
		in := engine.RecoverInput{EvidenceRef: f("evidence"), Correction: f("correction"), BlockageID: f("blockageId"),
			SnapshotRef: f("snapshotRef"), SnapshotDigest: f("snapshotDigest"), PartialWorkRef: f("partialWorkRef"),
			SideEffectsRef: f("sideEffectsRef"), StoppedWritersRef: f("stoppedWritersRef")}
		switch f("decision") {
		case "clear":
			in.Clear = true
			msg = fmt.Sprintf("continuation requested for run %s lane %d", id, lane)
		case "decline":
			for _, name := range recoveryFields {
				if f(name) != "" {
					s.fail(w, http.StatusBadRequest, "%s describes a continuation; a decline takes only evidence", name)
					return
				}
			}
			msg = fmt.Sprintf("continuation declined for run %s lane %d", id, lane)
		default:
			s.fail(w, http.StatusBadRequest, "recovery decision %q: want clear (continue) or decline (stop the lane)", f("decision"))
			return
		}
		if in.EvidenceRef == "" {
			s.fail(w, http.StatusBadRequest, "a recovery needs evidence: what you inspected")
			return
		}
		err = s.o.Engine.Recover(ctx, id, lane, in)
	case answerCancel:
		reason := f("reason")
		if reason == "" {
			reason = "cancelled from the web console"
		}
		err, msg = s.o.Engine.Cancel(ctx, id, lane, reason), fmt.Sprintf("cancel requested for run %s lane %d", id, lane)
	default:
		s.fail(w, http.StatusBadRequest, "answer kind %q: want verdict, operation, recover or cancel", kind)
		return
	}
	if err != nil {
		s.failEngine(w, err, fmt.Sprintf("run %s lane %d", id, lane))
		return
	}
	if strings.Contains(r.Header.Get("Accept"), "application/json") {
		writeJSON(w, http.StatusOK, answerResult{Message: msg})
		return
	}
	http.Redirect(w, r, "/runs/"+id, http.StatusSeeOther)
}
