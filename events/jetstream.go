package events

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Names of the JetStream resources OpenJetStream creates.
const (
	// EventsStream keeps every event (sy.ev.>) forever: file storage, limits
	// retention without limits, message deletion denied (purging a whole
	// run's subjects stays possible), direct gets on single-replica streams.
	EventsStream = "SY_EVENTS"
	// JobsStream is the jobs work queue (sy.job.>): a job is removed once a
	// consumer acks or terms it.
	JobsStream = "SY_JOBS"
	// ReportsStream keeps worker reports (sy.rep.>), for ReportMaxAge.
	ReportsStream = "SY_REPORTS"
	// ClaimsBucket is the KV bucket of execution claims (stream
	// KV_sy_claims).
	ClaimsBucket = "sy_claims"
	// WorkersStream holds each live worker's latest announcement
	// (sy.wk.>) for PresenceTTL: memory storage, one message per worker.
	WorkersStream = "SY_WORKERS"
)

// capacityStream is the stream behind the CapacityBucket KV bucket.
const capacityStream = "KV_" + CapacityBucket

// JetStreamConfig configures the streams and client behaviour of the
// JetStream implementations.
type JetStreamConfig struct {
	// Replicas of every stream and bucket when OpenJetStream
	// creates them: 1 for an embedded single server (default), 3 for a
	// three-node cluster. Streams that exist keep the replica count they
	// have (a client connecting through one node of a cluster must not
	// strip its replication), unless ForceReplicas is set.
	Replicas int
	// ForceReplicas changes existing streams to Replicas (scaling a
	// deployment up or down); set it only on an explicit request.
	ForceReplicas bool
	// DuplicateWindow is how long the server remembers message ids to drop
	// duplicates. Default 2m (JetStream's). Event appends do not depend on
	// it (a retry is recognised by position, see Store.Append); jobs and
	// reports do, and each id costs about 200 bytes of server memory.
	DuplicateWindow time.Duration
	// ReportMaxAge expires reports; 0 (default) keeps them. Must be 0 or at
	// least DuplicateWindow.
	ReportMaxAge time.Duration
	// ClaimMaxAge expires claims; 0 (default) keeps them. A claim must
	// outlive every redelivery of its job, so set it to days, not minutes.
	ClaimMaxAge time.Duration
	// PresenceTTL is how long a worker's announcement lives (the workers
	// stream's MaxAge). Default DefaultPresenceTTL; at least 100ms.
	PresenceTTL time.Duration
	// SetupTimeout bounds stream creation, retried while a cluster elects
	// its meta leader (about 2s after start). Default 30s.
	SetupTimeout time.Duration
	// Workers, on the engine's connection, are the deployment's
	// provisioned worker identities (workerid.go): its API proxy then
	// lets each worker connection serve only its own providers, and an
	// unlisted worker connection only read. Nil: every worker connection
	// serves every provider.
	Workers *WorkerIdentities
	// AttemptTimeout bounds one publish attempt; a timed-out or unanswered
	// publish is retried with the same message id until the caller's
	// context ends (a leader failover stops writes for 6-7s). Default 2s.
	AttemptTimeout time.Duration
}

// Defaults of JetStreamConfig.
const (
	DefaultDuplicateWindow = 2 * time.Minute
	DefaultSetupTimeout    = 30 * time.Second
	DefaultAttemptTimeout  = 2 * time.Second
)

// Validate reports the first invalid setting.
func (c JetStreamConfig) Validate() error {
	if c.Replicas < 0 || c.Replicas > 5 {
		return fmt.Errorf("jetstream: replicas %d: want 1-5", c.Replicas)
	}
	if c.DuplicateWindow < 0 || c.ReportMaxAge < 0 || c.ClaimMaxAge < 0 || c.SetupTimeout < 0 || c.AttemptTimeout < 0 || c.PresenceTTL < 0 {
		return errors.New("jetstream: durations must not be negative")
	}
	if c.PresenceTTL != 0 && c.PresenceTTL < 100*time.Millisecond {
		return fmt.Errorf("jetstream: PresenceTTL %v: want at least 100ms", c.PresenceTTL)
	}
	w := c.WithDefaults().DuplicateWindow
	if c.ReportMaxAge != 0 && c.ReportMaxAge < w {
		return fmt.Errorf("jetstream: ReportMaxAge %v is shorter than the duplicate window %v", c.ReportMaxAge, w)
	}
	return nil
}

// WithDefaults returns c with every unset field at its default.
func (c JetStreamConfig) WithDefaults() JetStreamConfig {
	c.Replicas = cmp.Or(c.Replicas, 1)
	c.DuplicateWindow = cmp.Or(c.DuplicateWindow, DefaultDuplicateWindow)
	c.SetupTimeout = cmp.Or(c.SetupTimeout, DefaultSetupTimeout)
	c.PresenceTTL = cmp.Or(c.PresenceTTL, DefaultPresenceTTL)
	c.AttemptTimeout = cmp.Or(c.AttemptTimeout, DefaultAttemptTimeout)
	return c
}

// JetStream is an open connection to the Switchyard streams, from which the
// three seams are taken. It does not own the NATS connection.
type JetStream struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	cfg     JetStreamConfig
	events  jetstream.Stream
	jobs    jetstream.Stream
	reports jetstream.Stream
	workers jetstream.Stream
	kv      jetstream.KeyValue
	// capacity is the CapacityBucket bucket.
	capacity jetstream.KeyValue
	// owner starts the names of the consumers a role's connection makes
	// through the engine's API proxy (ownerToken); "" for the engine.
	owner string
	// prefix is the API proxy prefix of a role's connection; "" for the
	// engine.
	prefix string
	// handles caches streamHandle's lookups: stream name to
	// jetstream.Stream.
	handles sync.Map
	// directBatch overrides the batch of readDirect (tests); 0 is the
	// default.
	directBatch int
	// noNotices is set once the server refused this connection a
	// subscription to the events' subjects (CancelNotices).
	noNotices atomic.Bool
}

// streamHandle is js.Stream(name) looked up once: a stream info request
// (a large JSON answer, decoded) for every claim check and consumer count
// of the API proxy was a tenth of its JetStream API work. The handle only
// names the stream; its cached info decides whether a get is a direct
// get, which a stream keeps. A failed use should call forgetStream.
func (j *JetStream) streamHandle(ctx context.Context, name string) (jetstream.Stream, error) {
	if h, ok := j.handles.Load(name); ok {
		return h.(jetstream.Stream), nil
	}
	st, err := j.js.Stream(ctx, name)
	if err != nil {
		return nil, err
	}
	j.handles.Store(name, st)
	return st, nil
}

// forgetStream drops name's cached handle, so the next use looks it up.
func (j *JetStream) forgetStream(name string) { j.handles.Delete(name) }

// proxied is the subject a publish to subject goes to: through the
// engine's API proxy for a role's connection.
func (j *JetStream) proxied(subject string) string {
	if j.prefix == "" {
		return subject
	}
	return j.prefix + "." + subject
}

// OpenJetStream creates or updates the events, jobs, reports and workers
// streams and the claims and capacity buckets on nc (an Embedded's Conn or a Connect result),
// retrying until SetupTimeout while the cluster is not ready.
func OpenJetStream(ctx context.Context, nc *nats.Conn, cfg JetStreamConfig) (*JetStream, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	// A role's connection (its inbox prefix says which) reaches the
	// JetStream API only through the engine's proxy (jsapiproxy.go).
	var js jetstream.JetStream
	var err error
	prefix := apiProxyPrefix(nc.Opts.InboxPrefix)
	if prefix != "" {
		js, err = jetstream.NewWithAPIPrefix(nc, prefix)
	} else {
		js, err = jetstream.New(nc)
	}
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	j := &JetStream{nc: nc, js: js, cfg: cfg}
	if prefix != "" {
		j.owner, j.prefix = ownerToken(nc.Opts.InboxPrefix), prefix
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.SetupTimeout)
	defer cancel()
	// Before a cluster has a meta leader, requests go unanswered until they
	// time out, so early attempts are short.
	retry, attempt := Backoff{Min: 50 * time.Millisecond, Max: time.Second}, time.Second
	for {
		err = j.setup(ctx, attempt)
		if err == nil && prefix == "" {
			// The engine answers the other roles' JetStream API.
			if err = j.serveAPIProxy(); err != nil {
				return nil, fmt.Errorf("jetstream: serve the API proxy: %w", err)
			}
		}
		if err == nil {
			return j, nil
		}
		if !transient(err) && !peersJoining(err) {
			return nil, fmt.Errorf("jetstream: set up streams: %w", err)
		}
		if !retry.Wait(ctx) {
			return nil, fmt.Errorf("jetstream: set up streams: %w (last error: %v)", ctx.Err(), err)
		}
		attempt = min(2*attempt, 8*time.Second)
	}
}

// errCodeNoPeers is JetStream's "no suitable peers for placement" (10005):
// while a cluster forms, a stream of three replicas is refused until every
// peer has joined.
const errCodeNoPeers = 10005

// peersJoining reports a refusal that a forming cluster gives before all
// its peers have joined; OpenJetStream retries it until SetupTimeout (on a
// cluster that is really too small, the error is returned then).
func peersJoining(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == errCodeNoPeers
}

func (j *JetStream) setup(ctx context.Context, timeout time.Duration) error {
	var err error
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if !j.cfg.ForceReplicas {
		// The events stream's replica count is the deployment's: keep it
		// for every stream.
		s, err := j.js.Stream(actx, EventsStream)
		switch {
		case err == nil:
			j.cfg.Replicas = s.CachedInfo().Config.Replicas
		case !errors.Is(err, jetstream.ErrStreamNotFound):
			return fmt.Errorf("stream %s: %w", EventsStream, err)
		}
	}
	c := j.cfg
	j.events, err = j.ensureStream(actx, jetstream.StreamConfig{
		Name: EventsStream, Subjects: []string{EventSubjectPrefix + ">"},
		Description: "Switchyard lane and run events: kept forever",
		Retention:   jetstream.LimitsPolicy, Storage: jetstream.FileStorage, Replicas: c.Replicas,
		MaxMsgSize: MaxEventBytes + 4096, Duplicates: c.DuplicateWindow,
		AllowDirect: directGets(c.Replicas), DenyDelete: true,
	})
	if err != nil {
		return fmt.Errorf("stream %s: %w", EventsStream, err)
	}
	j.jobs, err = j.ensureStream(actx, jetstream.StreamConfig{
		Name: JobsStream, Subjects: []string{JobSubjectPrefix + ">"},
		Description: "Switchyard jobs: one work-queue subject per provider",
		Retention:   jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, Replicas: c.Replicas,
		MaxMsgSize: MaxMessageBytes + 4096, Duplicates: c.DuplicateWindow,
	})
	if err != nil {
		return fmt.Errorf("stream %s: %w", JobsStream, err)
	}
	j.reports, err = j.ensureStream(actx, jetstream.StreamConfig{
		Name: ReportsStream, Subjects: []string{ReportSubjectPrefix + ">"},
		Description: "Switchyard worker reports, per run and lane",
		Retention:   jetstream.LimitsPolicy, Storage: jetstream.FileStorage, Replicas: c.Replicas,
		MaxMsgSize: MaxMessageBytes + 4096, Duplicates: c.DuplicateWindow, MaxAge: c.ReportMaxAge,
	})
	if err != nil {
		return fmt.Errorf("stream %s: %w", ReportsStream, err)
	}
	// The claims bucket is created as its stream, so that direct gets can be
	// turned off on replicated buckets (see directGets); the KV client then
	// binds to it.
	claimsDup := c.DuplicateWindow
	if c.ClaimMaxAge > 0 && c.ClaimMaxAge < claimsDup {
		claimsDup = c.ClaimMaxAge
	}
	_, err = j.ensureStream(actx, jetstream.StreamConfig{
		Name: "KV_" + ClaimsBucket, Subjects: []string{"$KV." + ClaimsBucket + ".>"},
		Description: "Switchyard execution claims and leases (KV bucket " + ClaimsBucket + ")",
		Storage:     jetstream.FileStorage, Replicas: c.Replicas,
		MaxMsgsPerSubject: 1, MaxBytes: -1, MaxMsgs: -1, MaxConsumers: -1, MaxAge: c.ClaimMaxAge,
		// No roll-ups: one message with a Nats-Rollup header would wipe
		// every claim (no client here ever rolls the bucket up).
		MaxMsgSize: 4096, AllowRollup: false, DenyDelete: true, Discard: jetstream.DiscardNew,
		Duplicates: claimsDup, AllowDirect: directGets(c.Replicas),
	})
	if err != nil {
		return fmt.Errorf("bucket %s: %w", ClaimsBucket, err)
	}
	if j.kv, err = j.js.KeyValue(actx, ClaimsBucket); err != nil {
		return fmt.Errorf("bucket %s: %w", ClaimsBucket, err)
	}
	// Presence is advisory and short-lived: memory storage, and the
	// server's MaxAge expires a worker that stopped announcing.
	j.workers, err = j.ensureStream(actx, jetstream.StreamConfig{
		Name: WorkersStream, Subjects: []string{WorkerSubjectPrefix + "*"},
		Description: "Switchyard worker presence: each live worker's latest announcement",
		Retention:   jetstream.LimitsPolicy, Storage: jetstream.MemoryStorage, Replicas: c.Replicas,
		MaxMsgsPerSubject: 1, MaxAge: c.PresenceTTL, MaxMsgSize: 4096, Discard: jetstream.DiscardOld,
		Duplicates: min(c.DuplicateWindow, c.PresenceTTL), AllowDirect: directGets(c.Replicas),
	})
	if err != nil {
		return fmt.Errorf("stream %s: %w", WorkersStream, err)
	}
	// The capacity bucket, created as its stream like the claims bucket:
	// history 1 (only each provider's current report), kept until replaced
	// (staleness is judged by the report's own acquisition time).
	_, err = j.ensureStream(actx, jetstream.StreamConfig{
		Name: capacityStream, Subjects: []string{"$KV." + CapacityBucket + ".>"},
		Description: "Switchyard capacity reports: each provider's current one (KV bucket " + CapacityBucket + ")",
		Storage:     jetstream.FileStorage, Replicas: c.Replicas,
		MaxMsgsPerSubject: 1, MaxBytes: -1, MaxMsgs: -1, MaxConsumers: -1,
		// No roll-ups, as for claims.
		MaxMsgSize: MaxMessageBytes + 4096, AllowRollup: false, DenyDelete: true, Discard: jetstream.DiscardNew,
		Duplicates: c.DuplicateWindow, AllowDirect: directGets(c.Replicas),
	})
	if err != nil {
		return fmt.Errorf("bucket %s: %w", CapacityBucket, err)
	}
	if j.capacity, err = j.js.KeyValue(actx, CapacityBucket); err != nil {
		return fmt.Errorf("bucket %s: %w", CapacityBucket, err)
	}
	// The run index (runindex.go): one entry per final run, derived from
	// the events stream and rebuilt from it when entries are missing.
	_, err = j.ensureStream(actx, jetstream.StreamConfig{
		Name: runsStream, Subjects: []string{"$KV." + RunsBucket + ".>"},
		Description: "Switchyard run index: each final run's summary and status, derived from the events (KV bucket " + RunsBucket + ")",
		Storage:     jetstream.FileStorage, Replicas: c.Replicas,
		MaxMsgsPerSubject: 1, MaxBytes: -1, MaxMsgs: -1, MaxConsumers: -1,
		MaxMsgSize: MaxMessageBytes + 4096, AllowRollup: true, DenyDelete: true, Discard: jetstream.DiscardNew,
		Duplicates: c.DuplicateWindow, AllowDirect: directGets(c.Replicas),
	})
	if err != nil {
		return fmt.Errorf("bucket %s: %w", RunsBucket, err)
	}
	return nil
}

// directGets says whether a stream allows direct gets. Direct gets are 2.3x
// faster, but on a replicated stream any replica may answer, including a
// follower that has not applied the latest write; Last, the append retry
// check and claim inspection must read their own writes, so replicated
// streams serve reads from the leader.
func directGets(replicas int) bool { return replicas == 1 }

// Replicas is the replica count of the streams as opened: the existing
// deployment's, or the configured one for streams this call created or
// was forced to change.
func (j *JetStream) Replicas() int { return j.cfg.Replicas }

// Store returns the events Store.
func (j *JetStream) Store() *JetStreamStore { return &JetStreamStore{j: j} }

// Queue returns the jobs and reports Queue.
func (j *JetStream) Queue() *JetStreamQueue { return &JetStreamQueue{j: j} }

// Claims returns the execution Claims.
func (j *JetStream) Claims() *JetStreamClaims { return &JetStreamClaims{j: j} }

// Presence returns the workers' Presence.
func (j *JetStream) Presence() *JetStreamPresence { return &JetStreamPresence{j: j} }

// Capacity returns the providers' capacity reports (the CapacityBucket
// bucket) and their refresh requests.
func (j *JetStream) Capacity() *JetStreamCapacity { return &JetStreamCapacity{j: j} }

// Config is the configuration in use, defaults applied.
func (j *JetStream) Config() JetStreamConfig { return j.cfg }

// publish sends one message, retrying transient failures (timeouts, no
// responders during a leader election) with a fresh nats.Msg and the same
// options until ctx ends. Callers pass a message id so a retry after an
// unseen success is dropped as a duplicate.
func (j *JetStream) publish(ctx context.Context, subject string, data []byte, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	retry := Backoff{Min: 25 * time.Millisecond, Max: time.Second}
	for {
		actx, cancel := context.WithTimeout(ctx, j.cfg.AttemptTimeout)
		ack, err := j.js.PublishMsg(actx, &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}, opts...)
		cancel()
		if err == nil {
			return ack, nil
		}
		if permissionDenied(j.nc, subject) || proxyRefused(err) {
			return nil, deniedError(subject)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		}
		if !transient(err) {
			return nil, err
		}
		if !retry.Wait(ctx) {
			return nil, fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		}
	}
}

// ensureStream creates the stream of cfg, or updates it when the server's
// configuration differs in a field Switchyard sets; an existing stream
// that already matches is left alone. Every process opens the streams
// (serve, each worker, each command), and an update that changes nothing
// still rewrites the stream's store configuration on the server, which
// nats-server v2.15 does while it may be creating a consumer of that stream
// unlocked (a data race seen under -race); a matching stream is therefore
// only read.
func (j *JetStream) ensureStream(ctx context.Context, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	s, err := j.js.Stream(ctx, cfg.Name)
	if err == nil && sameStreamConfig(s.CachedInfo().Config, cfg) {
		return s, nil
	}
	if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, err
	}
	return j.js.CreateOrUpdateStream(ctx, cfg)
}

// sameStreamConfig compares the fields Switchyard sets on its streams (the
// server fills the others with its defaults).
func sameStreamConfig(have, want jetstream.StreamConfig) bool {
	pick := func(c jetstream.StreamConfig) jetstream.StreamConfig {
		if c.MaxMsgsPerSubject == 0 {
			c.MaxMsgsPerSubject = -1 // unset: the server stores -1, no limit
		}
		return jetstream.StreamConfig{
			Name: c.Name, Description: c.Description, Subjects: c.Subjects, Retention: c.Retention,
			Storage: c.Storage, Replicas: c.Replicas, MaxMsgSize: c.MaxMsgSize, Duplicates: c.Duplicates,
			MaxAge: c.MaxAge, MaxMsgsPerSubject: c.MaxMsgsPerSubject, AllowDirect: c.AllowDirect,
			DenyDelete: c.DenyDelete, AllowRollup: c.AllowRollup, Discard: c.Discard,
		}
	}
	return reflect.DeepEqual(pick(have), pick(want))
}
