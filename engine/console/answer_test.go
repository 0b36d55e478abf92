package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
)

// TestAnswerNeedsTheHeader: an answer is taken only with the bearer token
// in the Authorization header. What a cross-site form post can carry is
// refused (401) and records nothing: no header, the token as a cookie or
// a query parameter, a wrong token.
func TestAnswerNeedsTheHeader(t *testing.T) {
	f := newFixture(t, "")
	form := url.Values{"kind": {"cancel"}, "reason": {"from another origin"}}
	for _, tc := range []struct {
		name   string
		path   string
		header []string
	}{
		{"no header", "/runs/alpha/lanes/0/answer", []string{"Authorization", ""}},
		{"token as a cookie", "/runs/alpha/lanes/0/answer", []string{"Authorization", "", "Cookie", "switchyard_token=" + f.token}},
		{"token in the query", "/runs/alpha/lanes/0/answer?token=" + f.token, []string{"Authorization", ""}},
		{"wrong token", "/runs/alpha/lanes/0/answer", []string{"Authorization", "Bearer x" + f.token}},
		{"not bearer", "/runs/alpha/lanes/0/answer", []string{"Authorization", "Basic " + f.token}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := f.post(tc.path, form, tc.header...)
			require.Equal(t, http.StatusUnauthorized, resp.StatusCode, body)
			require.Equal(t, `Bearer realm="switchyard"`, resp.Header.Get("WWW-Authenticate"))
			require.Contains(t, body, "send Authorization: Bearer")
			require.NotContains(t, body, f.token)
		})
	}
	envs, err := f.store.Load(context.Background(), "alpha", 0)
	require.NoError(t, err)
	for _, e := range envs {
		require.NotEqual(t, events.TypeCancel, e.Type, "a refused answer was recorded")
	}
}

// TestAnswerValidation: bad answers are 400s naming the field and the fix;
// an answer the lane does not wait for is a 409 from the engine; an
// unknown run a 404.
func TestAnswerValidation(t *testing.T) {
	f := newFixture(t, "")
	for _, tc := range []struct {
		name   string
		path   string
		form   url.Values
		status int
		want   string
	}{
		{"unknown kind", "/runs/alpha/lanes/0/answer", url.Values{"kind": {"approve"}}, 400, `answer kind "approve": want verdict, operation, recover or cancel`},
		{"bad verdict", "/runs/alpha/lanes/0/answer", url.Values{"kind": {"verdict"}, "state": {"ok"}, "evidence": {"x"}}, 400, `verdict state "ok": want clear or unsafe`},
		{"no evidence", "/runs/alpha/lanes/0/answer", url.Values{"kind": {"verdict"}, "state": {"clear"}}, 400, "a verdict needs evidence"},
		{"bad result", "/runs/alpha/lanes/0/answer", url.Values{"kind": {"operation"}, "result": {"done"}}, 400, `operation result "done": want succeeded, failed or rejected`},
		{"bad recovery", "/runs/alpha/lanes/0/answer", url.Values{"kind": {"recover"}, "decision": {"maybe"}, "evidence": {"x"}}, 400, `recovery decision "maybe"`},
		{"clear recovery without its fields", "/runs/alpha/lanes/0/answer", url.Values{"kind": {"recover"}, "decision": {"clear"}, "evidence": {"x"}}, 400, "a clear recover needs the correction"},
		{"decline with a recovery field", "/runs/alpha/lanes/0/answer", url.Values{"kind": {"recover"}, "decision": {"decline"}, "evidence": {"x"}, "correction": {"c"}}, 400, "correction describes a continuation; a decline takes only evidence"},
		{"recovery the lane does not wait for", "/runs/alpha/lanes/0/answer", url.Values{"kind": {"recover"}, "decision": {"decline"}, "evidence": {"x"}}, 409, "run alpha lane 0 is inspecting, not awaiting recovery"},
		{"not awaiting an operation", "/runs/alpha/lanes/0/answer", url.Values{"kind": {"operation"}, "result": {"succeeded"}}, 409, "run alpha lane 0 is inspecting, not awaiting-operation"},
		{"unknown run", "/runs/nosuch/lanes/0/answer", url.Values{"kind": {"cancel"}}, 404, "run nosuch: unknown run"},
		{"bad lane", "/runs/alpha/lanes/x/answer", url.Values{"kind": {"cancel"}}, 400, `lane "x": want a zero-based lane index`},
		{"no such lane", "/runs/alpha/lanes/3/answer", url.Values{"kind": {"verdict"}, "state": {"clear"}, "evidence": {"x"}}, 404, "unknown lane"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := f.post(tc.path, tc.form)
			require.Equal(t, tc.status, resp.StatusCode, body)
			var e apiErr
			require.NoError(t, json.Unmarshal([]byte(body), &e))
			require.Contains(t, e.Error.Message, tc.want)
		})
	}
}

// TestAnswerVerdictMovesTheLane: a verdict posted from the form goes
// through engine.Verdict, so the running engine records it in the lane's
// log as it records `switchyard inspect`'s.
func TestAnswerVerdictMovesTheLane(t *testing.T) {
	f := newFixture(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.eng.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	resp, body := f.post("/runs/alpha/lanes/0/answer", url.Values{"kind": {"verdict"},
		"state": {"unsafe"}, "evidence": {"notes/console-review.md"}})
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.JSONEq(t, `{"message":"verdict unsafe recorded for run alpha lane 0"}`, body)

	wctx, wcancel := context.WithTimeout(ctx, waitTimeout)
	defer wcancel()
	ch, err := f.store.Watch(wctx, "alpha", 0)
	require.NoError(t, err)
	for env := range ch {
		if v, ok := env.Payload.(events.Verdict); ok {
			require.Equal(t, events.VerdictUnsafe, v.State)
			require.Equal(t, "notes/console-review.md", v.EvidenceRef)
			require.NotEmpty(t, v.By)
			return
		}
	}
	t.Fatal("no verdict event within the deadline")
}

// TestAnswerCancelWithoutJSON: a plain form post (no JSON Accept) is
// answered with a redirect to the run page, and the cancel is recorded.
func TestAnswerCancelWithoutJSON(t *testing.T) {
	f := newFixture(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.eng.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	form := url.Values{"kind": {"cancel"}, "reason": {"superseded"}}
	req, err := http.NewRequest(http.MethodPost, f.http.URL+"/runs/alpha/lanes/0/answer", stringsReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+f.token)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/runs/alpha", resp.Header.Get("Location"))

	wctx, wcancel := context.WithTimeout(ctx, waitTimeout)
	defer wcancel()
	ch, err := f.store.Watch(wctx, "alpha", 0)
	require.NoError(t, err)
	for env := range ch {
		if c, ok := env.Payload.(events.Cancel); ok && env.Lane == 0 {
			require.Equal(t, "superseded", c.Reason)
			st, err := f.eng.Status(ctx, "alpha")
			require.NoError(t, err)
			require.Equal(t, "cancelled", string(st.Lanes[0].State))
			return
		}
	}
	t.Fatal("no cancel event within the deadline")
}

// TestAnswerOperationNeedsBegin: settling a handoff's operation from the
// page goes through the operation ledger as `operation done` does: with
// no begun (pending) operation the ledger refuses it, 409 with its reason.
func TestAnswerOperationNeedsBegin(t *testing.T) {
	f := newFixture(t, "")
	t0 := eventstest.T0.Add(3 * time.Hour)
	f.append(eventstest.SampleEnvelope(events.TypeRunCreated, "delta", 0, t0))
	f.append(eventstest.SampleEnvelope(events.TypeLaunch, "delta", 0, t0.Add(time.Second)))
	claim := eventstest.SamplePayload(events.TypeClaim).(events.Claim)
	claim.ReportSeq = 0
	f.append(events.NewEnvelope("delta", 0, t0.Add(2*time.Second), claim))
	finish := eventstest.SamplePayload(events.TypeFinish).(events.Finish)
	finish.ReportSeq = 0
	f.append(events.NewEnvelope("delta", 0, t0.Add(3*time.Second), finish))
	f.append(eventstest.SampleEnvelope(events.TypeRequestOperation, "delta", 0, t0.Add(4*time.Second)))
	st, err := f.eng.Status(context.Background(), "delta")
	require.NoError(t, err)
	require.Equal(t, "operation", string(st.Lanes[0].WaitingFor))

	resp, body := f.post("/runs/delta/lanes/0/answer", url.Values{"kind": {"operation"},
		"result": {"rejected"}, "detail": {"not now"}})
	require.Equal(t, http.StatusConflict, resp.StatusCode, body)
	require.Contains(t, body, "has no pending operation: run switchyard operation validate and begin before performing it")
}
