package events

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// JetStreamQueue is the Queue on the jobs (work-queue) and reports streams.
// Each job subject has one durable pull consumer (jobs_<provider> or
// jobs_native_<parent>) with explicit acks, shared by all its workers.
type JetStreamQueue struct {
	j *JetStream
}

var _ Queue = (*JetStreamQueue)(nil)

// PublishJob implements Queue.
func (q *JetStreamQueue) PublishJob(ctx context.Context, subject string, job Job) error {
	if err := ValidateJobSubject(subject); err != nil {
		return err
	}
	data, err := EncodeJob(job)
	if err != nil {
		return err
	}
	_, err = q.j.publish(ctx, subject, data, jetstream.WithMsgID(job.ExecutionID), jetstream.WithExpectStream(JobsStream))
	if err != nil {
		return translate("publish job "+job.ExecutionID+" on "+subject, err)
	}
	return nil
}

// Jobs implements Queue: it binds to the subject's durable, creating it or
// updating its ack wait and deliveries as opts say. It keeps the
// consumer's MaxAckPending (a provider's concurrency cap, see Caps): a
// provider consumer it creates gets DefaultProviderCap.
func (q *JetStreamQueue) Jobs(ctx context.Context, subject string, opts JobOptions) (JobConsumer, error) {
	name, err := jobQueueName(subject)
	if err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	maxDeliver := opts.MaxDeliver
	if maxDeliver == 0 {
		maxDeliver = -1
	}
	_, provider := providerOfSubject(subject)
	cons, err := q.upsertJobConsumer(ctx, name, subject, func(cfg *jetstream.ConsumerConfig, exists bool) bool {
		changed := !exists || cfg.AckWait != opts.AckWait || cfg.MaxDeliver != maxDeliver
		cfg.AckWait, cfg.MaxDeliver = opts.AckWait, maxDeliver
		if provider && (!exists || cfg.MaxAckPending < 1 || cfg.MaxAckPending > MaxProviderCap) {
			// A new provider consumer, or one from before caps (the
			// server's default of 1000): the default cap.
			changed = changed || cfg.MaxAckPending != DefaultProviderCap
			cfg.MaxAckPending = DefaultProviderCap
		}
		return changed
	})
	if err != nil {
		return nil, translate("jobs consumer "+name, err)
	}
	return &jsConsumer{cons: cons, subject: subject}, nil
}

// upsertJobConsumer binds to the durable name on subject, letting edit
// change its configuration (the stored one when exists, else a new one with
// the default ack wait): it is updated, or created, only when edit says it
// changed. Other fields of a stored configuration, MaxAckPending among
// them, are written back as they were read. A consumer created or deleted
// meanwhile by another process is read again.
func (q *JetStreamQueue) upsertJobConsumer(ctx context.Context, name, subject string, edit func(cfg *jetstream.ConsumerConfig, exists bool) bool) (jetstream.Consumer, error) {
	var err error
	for range 5 {
		var cons jetstream.Consumer
		cons, err = q.j.jobs.Consumer(ctx, name)
		switch {
		case err == nil:
			cfg := cons.CachedInfo().Config
			if !edit(&cfg, true) {
				return cons, nil
			}
			cons, err = q.j.jobs.UpdateConsumer(ctx, cfg)
			if errors.Is(err, jetstream.ErrConsumerDoesNotExist) || errors.Is(err, jetstream.ErrConsumerNotFound) {
				continue
			}
			return cons, err
		case errors.Is(err, jetstream.ErrConsumerNotFound):
			cfg := jetstream.ConsumerConfig{
				Durable: name, FilterSubject: subject, Description: "Switchyard workers for " + subject,
				AckPolicy: jetstream.AckExplicitPolicy, AckWait: DefaultAckWait, MaxDeliver: -1,
				DeliverPolicy: jetstream.DeliverAllPolicy,
			}
			edit(&cfg, false)
			cons, err = q.j.jobs.CreateConsumer(ctx, cfg)
			if errors.Is(err, jetstream.ErrConsumerExists) {
				continue
			}
			return cons, err
		default:
			return nil, err
		}
	}
	return nil, err
}

type jsConsumer struct {
	cons    jetstream.Consumer
	subject string
}

// Next implements JobConsumer with one pull request per job.
func (c *jsConsumer) Next(ctx context.Context) (*Delivery, error) {
	for {
		if err := pullable(ctx); err != nil {
			return nil, err
		}
		m, err := c.cons.Next(jetstream.FetchContext(ctx))
		if err != nil {
			if perr := pullable(ctx); perr != nil {
				return nil, perr
			}
			if errors.Is(err, nats.ErrTimeout) || errors.Is(err, jetstream.ErrNoHeartbeat) {
				continue
			}
			return nil, translate("next job on "+c.subject, err)
		}
		md, err := m.Metadata()
		if err != nil {
			return nil, translate("next job on "+c.subject, err)
		}
		job, err := DecodeJob(m.Data())
		if err != nil {
			_ = m.TermWithReason("malformed job")
			return nil, err
		}
		return &Delivery{Job: job, NumDelivered: md.NumDelivered, Seq: md.Sequence.Stream, acker: jsAcker{m}}, nil
	}
}

type jsAcker struct{ m jetstream.Msg }

// ack waits for the server's confirmation: a worker acks once per job and
// must know the job is gone.
func (a jsAcker) ack(ctx context.Context) error { return a.m.DoubleAck(ctx) }

func (a jsAcker) nak(_ context.Context, delay time.Duration) error {
	if delay > 0 {
		return a.m.NakWithDelay(delay)
	}
	return a.m.Nak()
}

func (a jsAcker) inProgress(context.Context) error { return a.m.InProgress() }

func (a jsAcker) term(_ context.Context, reason string) error {
	if reason == "" {
		return a.m.Term()
	}
	return a.m.TermWithReason(reason)
}

// PublishReport implements Queue.
func (q *JetStreamQueue) PublishReport(ctx context.Context, r Report) (uint64, error) {
	data, err := EncodeReport(r)
	if err != nil {
		return 0, err
	}
	return q.publishReportsStream(ctx, "report", ReportSubject(r.Run, r.Lane), ReportMsgID(r), data)
}

// publishReportsStream publishes a report or control (what) on subj in the
// reports stream with message id id.
func (q *JetStreamQueue) publishReportsStream(ctx context.Context, what, subj, id string, data []byte) (uint64, error) {
	// A role's connection publishes through the engine's proxy, which
	// names it in the report (ReporterHeader).
	ack, err := q.j.publish(ctx, q.j.proxied(subj), data, jetstream.WithMsgID(id), jetstream.WithExpectStream(ReportsStream))
	if err != nil {
		return 0, translate("publish "+what+" on "+subj, err)
	}
	return ack.Sequence, nil
}

// SubscribeReports implements Queue with an ordered consumer.
func (q *JetStreamQueue) SubscribeReports(ctx context.Context, run string, after uint64) (<-chan ReportDelivery, error) {
	if err := ValidateRunID(run); err != nil {
		return nil, err
	}
	return q.readReports(ctx, RunReportsFilter(run), after)
}

// WatchReports implements Queue with an ordered consumer on every run's
// reports.
func (q *JetStreamQueue) WatchReports(ctx context.Context, after uint64) (<-chan ReportDelivery, error) {
	return q.readReports(ctx, ReportSubjectPrefix+">", after)
}

// ReportMark is a report's (or control's) place in the reports stream: its
// sequence and its run, from its subject. It keeps the stored report
// undecoded, for Delivery.
type ReportMark struct {
	Seq uint64
	Run string

	data     []byte
	reporter string
	decoded  *ReportDelivery
}

// MarkOf is the mark of a report delivered already decoded (a watch of a
// queue without WatchReportMarks); its Delivery is rd.
func MarkOf(rd ReportDelivery) ReportMark {
	return ReportMark{Seq: rd.Seq, Run: rd.Run, decoded: &rd}
}

// Delivery decodes the report m marks, as WatchReports would have
// delivered it (a report that does not decode has Err and Raw set).
func (m ReportMark) Delivery() ReportDelivery {
	if m.decoded != nil {
		return *m.decoded
	}
	rd := reportDelivery(m.Seq, m.Run, m.data)
	rd.Reporter = m.reporter
	return rd
}

// WatchReportMarks is WatchReports with the decoding left to the caller:
// it streams the sequence and run (read from the subject) of every run's
// reports and controls after after, each decoded only if the caller asks
// for its Delivery. The engine's one watch of every run's reports uses it:
// it hands a report to its run's driver, decoded once, and only the mark of
// a report no driver here waits for (a final run's, for the catch-up).
func (q *JetStreamQueue) WatchReportMarks(ctx context.Context, after uint64) (<-chan ReportMark, error) {
	filter := ReportSubjectPrefix + ">"
	r, err := newOrderedReader(ctx, q.j, q.j.reports, ReportsStream, after, filter)
	if err != nil {
		return nil, translate("subscribe "+filter, err)
	}
	return followOrdered(ctx, r, func(m jetstream.Msg, md *jetstream.MsgMetadata) (ReportMark, error) {
		return ReportMark{Seq: md.Sequence.Stream, Run: reportSubjectRun(m.Subject()), data: m.Data(), reporter: m.Headers().Get(ReporterHeader)}, nil
	}), nil
}

// readReports follows filter's reports after after.
func (q *JetStreamQueue) readReports(ctx context.Context, filter string, after uint64) (<-chan ReportDelivery, error) {
	r, err := newOrderedReader(ctx, q.j, q.j.reports, ReportsStream, after, filter)
	if err != nil {
		return nil, translate("subscribe "+filter, err)
	}
	return followOrdered(ctx, r, func(m jetstream.Msg, md *jetstream.MsgMetadata) (ReportDelivery, error) {
		rd := reportDelivery(md.Sequence.Stream, reportSubjectRun(m.Subject()), m.Data())
		rd.Reporter = m.Headers().Get(ReporterHeader)
		return rd, nil
	}), nil
}

// LastReportSeq implements Queue.
func (q *JetStreamQueue) LastReportSeq(ctx context.Context, run string) (uint64, error) {
	if run == "" {
		info, err := q.j.reports.Info(ctx)
		if err != nil {
			return 0, translate("reports stream info", err)
		}
		return info.State.LastSeq, nil
	}
	if err := ValidateRunID(run); err != nil {
		return 0, err
	}
	m, err := q.j.reports.GetLastMsgForSubject(ctx, RunReportsFilter(run))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, translate("last report of run "+run, err)
	}
	return m.Sequence, nil
}

// pullable returns ctx's error, waiting for it when the deadline is too
// close for a pull request: jetstream.FetchContext refuses a deadline that
// has (nearly) passed with ErrInvalidOption rather than the context error.
func pullable(ctx context.Context) error {
	if d, ok := ctx.Deadline(); ok && time.Until(d) < 5*time.Millisecond {
		<-ctx.Done()
	}
	return ctx.Err()
}
