package events

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// JetStreamPresence is Presence on the stream WorkersStream: one subject
// per worker (WorkerSubjectPrefix + a digest of its id), at most one
// message per subject, and MaxAge = the TTL, so the server itself drops an
// announcement nobody refreshed. Withdraw purges the worker's subject.
type JetStreamPresence struct {
	j *JetStream
}

var _ Presence = (*JetStreamPresence)(nil)

// Announce implements Presence.
func (p *JetStreamPresence) Announce(ctx context.Context, w WorkerPresence) error {
	if err := validatePresence(w); err != nil {
		return err
	}
	data, err := json.Marshal(w.record())
	if err != nil {
		return err
	}
	subj := WorkerSubjectPrefix + presenceToken(w.WorkerID)
	if _, err := p.j.publish(ctx, subj, data, jetstream.WithExpectStream(WorkersStream)); err != nil {
		return translate("announce worker "+w.WorkerID, err)
	}
	return nil
}

// Withdraw implements Presence.
func (p *JetStreamPresence) Withdraw(ctx context.Context, workerID string) error {
	if err := ValidateWorkerID(workerID); err != nil {
		return err
	}
	if err := p.j.workers.Purge(ctx, jetstream.WithPurgeSubject(WorkerSubjectPrefix+presenceToken(workerID))); err != nil {
		return translate("withdraw worker "+workerID, err)
	}
	return nil
}

// Live implements Presence, from the stream's per-subject counts and one
// last-message get per worker. A record that does not decode is skipped:
// presence is advisory, and one bad record must not hide the others.
func (p *JetStreamPresence) Live(ctx context.Context) ([]WorkerPresence, error) {
	info, err := p.j.workers.Info(ctx, jetstream.WithSubjectFilter(WorkerSubjectPrefix+"*"))
	if err != nil {
		return nil, translate("live workers", err)
	}
	out := make([]WorkerPresence, 0, len(info.State.Subjects))
	for subj := range info.State.Subjects {
		if !strings.HasPrefix(subj, WorkerSubjectPrefix) {
			continue
		}
		m, err := p.j.workers.GetLastMsgForSubject(ctx, subj)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue // expired or withdrawn since the count
		}
		if err != nil {
			return nil, translate("live workers", err)
		}
		w, err := decodePresence(m.Data)
		if err != nil || subj != WorkerSubjectPrefix+presenceToken(w.WorkerID) {
			continue
		}
		w.Seen = m.Time.UTC()
		out = append(out, w)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].WorkerID < out[b].WorkerID })
	return out, nil
}

// TTL implements Presence.
func (p *JetStreamPresence) TTL() time.Duration { return p.j.cfg.PresenceTTL }
