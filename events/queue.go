package events

import (
	"context"
	"time"
)

// Queue carries jobs to workers and reports back to the engine.
//
// Jobs: one work-queue subject per provider (JobSubject) and one per parent
// for native lanes (NativeJobSubject). Every consumer of one subject shares
// one durable consumer, so each job is delivered to one of them at a time;
// an unacknowledged job is delivered again after the ack wait. A job is
// removed by Ack or Term.
//
// Reports: kept per run (ReportSubject) and read back in order with
// SubscribeReports; the engine's events, not acknowledgements, record which
// reports it has applied.
//
// Implementations: *JetStreamQueue and *MemoryQueue; both pass
// eventstest.RunQueueJobsConformance and RunQueueReportsConformance.
type Queue interface {
	// PublishJob validates and publishes job on subject (JobSubject or
	// NativeJobSubject) with message id job.ExecutionID, so a retried
	// publish is queued once within the duplicate window. Claims, not this
	// id, are what keep an execution from running twice.
	PublishJob(ctx context.Context, subject string, job Job) error

	// Jobs returns a consumer of subject's jobs. All consumers of one
	// subject, in any process, share one durable consumer; opts from the
	// latest call apply to all of them. A provider subject's concurrency
	// cap (Caps) is kept as it is: a consumer created here gets
	// DefaultProviderCap.
	Jobs(ctx context.Context, subject string, opts JobOptions) (JobConsumer, error)

	// PublishReport validates and publishes r on ReportSubject(r.Run,
	// r.Lane) with message id ReportMsgID(r), returning its reports-stream
	// sequence (a retried report returns the original sequence while within
	// the duplicate window).
	PublishReport(ctx context.Context, r Report) (uint64, error)

	// SubscribeReports streams the reports of run with a sequence greater
	// than after, in order: first those already stored, then new ones. The
	// channel is closed when ctx is done.
	SubscribeReports(ctx context.Context, run string, after uint64) (<-chan ReportDelivery, error)

	// WatchReports streams every run's reports and controls with a
	// sequence greater than after, in order, like SubscribeReports; each
	// delivery names its run. The engine uses it to notice reports that
	// arrive after their run is final.
	WatchReports(ctx context.Context, after uint64) (<-chan ReportDelivery, error)

	// LastReportSeq returns the reports-stream sequence of the newest
	// report or control of run, or of any run when run is "" (0: none).
	LastReportSeq(ctx context.Context, run string) (uint64, error)
}

// JobOptions configure a job subject's shared durable consumer.
type JobOptions struct {
	// AckWait is how long a delivered job may go without Ack, Nak, Term or
	// InProgress before it is delivered again. Default 30s.
	AckWait time.Duration
	// MaxDeliver bounds deliveries per job; 0 means unlimited. A job that
	// exhausts it is never delivered again but stays queued (JetStream), so
	// prefer Term for permanent failures.
	MaxDeliver int
}

// DefaultAckWait is JobOptions.AckWait's default.
const DefaultAckWait = 30 * time.Second

func (o JobOptions) withDefaults() JobOptions {
	if o.AckWait <= 0 {
		o.AckWait = DefaultAckWait
	}
	if o.MaxDeliver < 0 {
		o.MaxDeliver = 0
	}
	return o
}

// JobConsumer hands out jobs of one subject.
type JobConsumer interface {
	// Next blocks until a job is delivered or ctx is done (then it returns
	// ctx's error). A message on the subject that is not a valid job is
	// terminated (removed) and reported as an error matching ErrInvalid;
	// call Next again.
	Next(ctx context.Context) (*Delivery, error)
}

// Delivery is one delivered job. Exactly one of Ack, Nak or Term ends it;
// InProgress keeps it while the execution runs.
type Delivery struct {
	Job Job
	// NumDelivered counts deliveries of this job, this one included. A value
	// above 1 means an earlier delivery was not acknowledged in time (or a
	// pull was abandoned); check the execution's claim before running it.
	NumDelivered uint64
	// Seq is the job's sequence in the jobs stream.
	Seq uint64

	acker acker
}

type acker interface {
	ack(ctx context.Context) error
	nak(ctx context.Context, delay time.Duration) error
	inProgress(ctx context.Context) error
	term(ctx context.Context, reason string) error
}

// Ack removes the job: it is done (or was found already done).
func (d *Delivery) Ack(ctx context.Context) error { return d.acker.ack(ctx) }

// Nak returns the job for redelivery after delay (0: at once).
func (d *Delivery) Nak(ctx context.Context, delay time.Duration) error {
	return d.acker.nak(ctx, delay)
}

// InProgress restarts the ack wait; call it well within AckWait while the
// execution runs.
func (d *Delivery) InProgress(ctx context.Context) error { return d.acker.inProgress(ctx) }

// Term removes the job without success; it is never delivered again.
func (d *Delivery) Term(ctx context.Context, reason string) error {
	return d.acker.term(ctx, reason)
}

// ReportDelivery is one report read back by SubscribeReports.
type ReportDelivery struct {
	// Seq is the report's sequence in the reports stream; record it (Claim,
	// Finish and Audit carry ReportSeq) to resume after it.
	Seq uint64
	// Run is the run named by the message's subject.
	Run string
	// Report is the decoded report; zero when Err is set.
	Report Report
	// Err is set when the stored bytes are not a valid report (ErrInvalid);
	// Raw then holds them, for an audit event.
	Err error
	Raw []byte
	// Reporter is the inbox prefix of the connection that published the
	// report, as the engine's API proxy stamped it (ReporterHeader): a
	// role's connection publishes reports only through it, so the role
	// and, on the embedded server, the very connection are known. Empty
	// when the engine's own connection (or a deployment without roles)
	// published it.
	Reporter string
}

// ReporterHeader is the header in which the engine's API proxy names the
// connection that published a report or control (its inbox prefix).
const ReporterHeader = "Sy-Reporter"

// ReporterRole is the role of a report's Reporter.
func ReporterRole(reporter string) (Role, bool) { return inboxRole(reporter) }
