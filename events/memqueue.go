package events

import (
	"context"
	"sync"
	"time"
)

// MemoryQueue is the in-memory Queue. Job subjects behave like JetStream's
// work queue with one shared durable consumer per subject: each job goes to
// one consumer at a time and comes back after the ack wait. Message-id
// duplicates are remembered for the queue's lifetime (JetStream: for its
// duplicate window).
type MemoryQueue struct {
	mu        sync.Mutex
	jobSeq    uint64
	jobIDs    map[string]bool
	queues    map[string]*memJobQueue
	reports   []memReport
	reportIDs map[string]uint64
	changed   chan struct{} // closed and replaced on every report
}

type memJobQueue struct {
	opts JobOptions
	// cap bounds the jobs in flight (a provider's concurrency cap, see
	// Caps); 0: no bound (native subjects).
	cap     int
	jobs    []*memJob
	changed chan struct{} // closed and replaced whenever a job may have become deliverable
}

type memJob struct {
	seq       uint64
	data      []byte
	delivered uint64
	due       time.Time // deliverable from this instant on
	removed   bool
}

type memReport struct {
	seq  uint64
	run  string
	data []byte
}

var _ Queue = (*MemoryQueue)(nil)

// NewMemoryQueue returns an empty MemoryQueue.
func NewMemoryQueue() *MemoryQueue {
	return &MemoryQueue{jobIDs: map[string]bool{}, queues: map[string]*memJobQueue{},
		reportIDs: map[string]uint64{}, changed: make(chan struct{})}
}

func (q *MemoryQueue) queue(subject string) *memJobQueue {
	mq := q.queues[subject]
	if mq == nil {
		mq = &memJobQueue{opts: JobOptions{}.withDefaults(), changed: make(chan struct{})}
		if _, provider := providerOfSubject(subject); provider {
			mq.cap = DefaultProviderCap
		}
		q.queues[subject] = mq
	}
	return mq
}

func (mq *memJobQueue) signal() {
	close(mq.changed)
	mq.changed = make(chan struct{})
}

// PublishJob implements Queue.
func (q *MemoryQueue) PublishJob(ctx context.Context, subject string, job Job) error {
	if err := ValidateJobSubject(subject); err != nil {
		return err
	}
	data, err := EncodeJob(job)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.jobIDs[job.ExecutionID] {
		return nil
	}
	q.jobIDs[job.ExecutionID] = true
	q.jobSeq++
	mq := q.queue(subject)
	mq.jobs = append(mq.jobs, &memJob{seq: q.jobSeq, data: data})
	mq.signal()
	return nil
}

// Jobs implements Queue.
func (q *MemoryQueue) Jobs(ctx context.Context, subject string, opts JobOptions) (JobConsumer, error) {
	if err := ValidateJobSubject(subject); err != nil {
		return nil, err
	}
	q.mu.Lock()
	q.queue(subject).opts = opts.withDefaults()
	q.mu.Unlock()
	return &memConsumer{q: q, subject: subject}, nil
}

type memConsumer struct {
	q       *MemoryQueue
	subject string
}

// Next implements JobConsumer.
func (c *memConsumer) Next(ctx context.Context) (*Delivery, error) {
	for {
		c.q.mu.Lock()
		mq := c.q.queue(c.subject)
		now := time.Now()
		var wake time.Time
		full := mq.cap > 0 && mq.inFlight(now) >= mq.cap
		for _, j := range mq.jobs {
			if j.removed || mq.exhausted(j) {
				continue
			}
			if now.Before(j.due) {
				if wake.IsZero() || j.due.Before(wake) {
					wake = j.due
				}
				continue
			}
			if full && j.delivered == 0 {
				// At the cap only a redelivery goes out, as in JetStream:
				// it is in flight already.
				continue
			}
			j.delivered++
			j.due = now.Add(mq.opts.AckWait)
			d := &Delivery{NumDelivered: j.delivered, Seq: j.seq, acker: &memAcker{q: c.q, mq: mq, job: j}}
			data := j.data
			c.q.mu.Unlock()
			job, err := DecodeJob(data)
			if err != nil {
				_ = d.Term(ctx, "malformed job")
				return nil, err
			}
			d.Job = job
			return d, nil
		}
		wait := mq.changed
		c.q.mu.Unlock()
		var timer *time.Timer
		var fire <-chan time.Time
		if !wake.IsZero() {
			timer = time.NewTimer(time.Until(wake))
			fire = timer.C
		}
		select {
		case <-wait:
		case <-fire:
		case <-ctx.Done():
		}
		if timer != nil {
			timer.Stop()
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

type memAcker struct {
	q   *MemoryQueue
	mq  *memJobQueue
	job *memJob
}

func (a *memAcker) set(f func(j *memJob)) error {
	a.q.mu.Lock()
	defer a.q.mu.Unlock()
	if !a.job.removed {
		f(a.job)
		a.mq.signal()
	}
	return nil
}

func (a *memAcker) ack(context.Context) error {
	return a.set(func(j *memJob) { j.removed = true; a.mq.compact() })
}

func (a *memAcker) term(ctx context.Context, _ string) error { return a.ack(ctx) }

func (a *memAcker) nak(_ context.Context, delay time.Duration) error {
	return a.set(func(j *memJob) { j.due = time.Now().Add(delay) })
}

func (a *memAcker) inProgress(context.Context) error {
	return a.set(func(j *memJob) { j.due = time.Now().Add(a.mq.opts.AckWait) })
}

// exhausted reports whether j may not be delivered again.
func (mq *memJobQueue) exhausted(j *memJob) bool {
	return mq.opts.MaxDeliver > 0 && j.delivered >= uint64(mq.opts.MaxDeliver)
}

// inFlight counts the jobs delivered and neither acknowledged nor
// abandoned: JetStream's NumAckPending. A job whose deliveries are
// exhausted leaves it when its last ack wait ends.
func (mq *memJobQueue) inFlight(now time.Time) int {
	n := 0
	for _, j := range mq.jobs {
		if j.delivered > 0 && !j.removed && !(mq.exhausted(j) && !now.Before(j.due)) {
			n++
		}
	}
	return n
}

// queued counts the jobs never delivered: JetStream's NumPending.
func (mq *memJobQueue) queued() int {
	n := 0
	for _, j := range mq.jobs {
		if j.delivered == 0 && !j.removed {
			n++
		}
	}
	return n
}

// compact drops removed jobs from the front of the queue.
func (mq *memJobQueue) compact() {
	i := 0
	for i < len(mq.jobs) && mq.jobs[i].removed {
		i++
	}
	mq.jobs = mq.jobs[i:]
}

// PublishReport implements Queue.
func (q *MemoryQueue) PublishReport(ctx context.Context, r Report) (uint64, error) {
	data, err := EncodeReport(r)
	if err != nil {
		return 0, err
	}
	return q.storeReport(ctx, r.Run, ReportMsgID(r), data)
}

// storeReport appends a report or control of run to the reports, once per
// message id, and wakes the readers.
func (q *MemoryQueue) storeReport(ctx context.Context, run, id string, data []byte) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if seq, dup := q.reportIDs[id]; dup {
		return seq, nil
	}
	seq := uint64(len(q.reports) + 1)
	q.reports = append(q.reports, memReport{seq: seq, run: run, data: data})
	q.reportIDs[id] = seq
	close(q.changed)
	q.changed = make(chan struct{})
	return seq, nil
}

// SubscribeReports implements Queue.
func (q *MemoryQueue) SubscribeReports(ctx context.Context, run string, after uint64) (<-chan ReportDelivery, error) {
	if err := ValidateRunID(run); err != nil {
		return nil, err
	}
	return q.readReports(ctx, run, after), nil
}

// WatchReports implements Queue.
func (q *MemoryQueue) WatchReports(ctx context.Context, after uint64) (<-chan ReportDelivery, error) {
	return q.readReports(ctx, "", after), nil
}

// readReports follows run's reports (every run's for "") after after.
func (q *MemoryQueue) readReports(ctx context.Context, run string, after uint64) <-chan ReportDelivery {
	next := memFollower(&q.mu, &q.reports, &q.changed, func(r memReport) (ReportDelivery, bool, error) {
		if r.seq <= after || (run != "" && r.run != run) {
			return ReportDelivery{}, false, nil
		}
		return reportDelivery(r.seq, r.run, r.data), true, nil
	})
	return follow(ctx, next, nil)
}

// LastReportSeq implements Queue.
func (q *MemoryQueue) LastReportSeq(ctx context.Context, run string) (uint64, error) {
	if run != "" {
		if err := ValidateRunID(run); err != nil {
			return 0, err
		}
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for i := len(q.reports) - 1; i >= 0; i-- {
		if run == "" || q.reports[i].run == run {
			return q.reports[i].seq, nil
		}
	}
	return 0, nil
}

func reportDelivery(seq uint64, run string, data []byte) ReportDelivery {
	r, err := DecodeReport(data)
	if err != nil {
		return ReportDelivery{Seq: seq, Run: run, Err: err, Raw: data}
	}
	return ReportDelivery{Seq: seq, Run: run, Report: r}
}
