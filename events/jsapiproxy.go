package events

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchyard-dev/switchyard/policy"
)

// The JetStream API of every role but the engine goes through the engine.
//
// NATS subject permissions cannot tell a harmless consumer from a harmful
// one: $JS.API.CONSUMER.CREATE.<stream>.<name> creates an ordered reader's
// ephemeral consumer and, with another body, a durable that never
// expires (enough of them and the engine can no longer create the
// consumers runs need), a push consumer whose deliver subject relays
// stored messages into subjects the role may not publish, or an update of
// a provider's job consumer that changes the deployment-wide cap. So no
// role but the engine may publish to $JS.API.> or $KV.> at all. Their
// clients use the API prefix APIProxyPrefix + <their inbox prefix>
// (jetstream.NewWithAPIPrefix), which their permissions allow only for
// their own inbox prefix, and the engine's proxy (serveAPIProxy) forwards
// each request to $JS.API (or $KV) only when it is one the role needs, in
// the shape its clients make it:
//
//   - reads pass: stream and consumer info and lists, and message and
//     direct gets of the readable streams (a job's payload is its
//     consumers' alone);
//   - a consumer on a readable stream must be ephemeral, unacknowledged,
//     in memory and expire when idle (at most maxProxyInactive); it is
//     created, never updated. A pull consumer's name starts with its
//     creator's owner token (ownerToken of its inbox prefix), and only
//     requests under that inbox prefix may pull from it or delete it; a
//     push consumer delivers only into its creator's inbox. A stream takes
//     no new client consumer once it has maxProxyConsumers consumers, and
//     one inbox prefix holds at most maxProxyConsumersPerInbox pull
//     consumers (counted from a listing at most consumerTallyTTL old
//     plus the creates forwarded since, so a limit refuses early, never
//     late);
//   - a job consumer may be pulled from and acknowledged by its role
//     (a provider's by workers, a parent's native queue by parents) and
//     created or updated only as the workers' own Queue.Jobs does it:
//     same subject, same cap, only the ack wait and deliveries changed;
//   - a key-value write goes only to the buckets the role writes (claims:
//     workers and parents; capacity: workers), never with a roll-up or a
//     delete or purge marker; a claim names the connection that wrote it,
//     and another connection may only abandon it once it is stale
//     (checkClaimWrite);
//   - a worker's report on a lane and a parent's report or control go to
//     the reports stream with the publishing connection's inbox prefix
//     in ReporterHeader (replacing any the client set), so the engine
//     knows who reported (engine/reports.go);
//     A run takes at most reportBurst reports at once, then reportRateSec
//     a second, per engine;
//   - a worker may purge only one worker's presence subject;
//   - every reply subject must be under the requester's inbox prefix, so
//     the server's answer cannot be relayed into another subject.
//
// Anything else is refused with a JetStream API error (code 403).

// APIProxyPrefix starts the subjects of the proxied JetStream API: a
// client's requests go to APIProxyPrefix + <its inbox prefix> + "." +
// <the $JS.API request without "$JS.API.">, or + "$KV.<bucket>.<key>"
// for a key-value write.
const APIProxyPrefix = "sy.jsapi."

// Limits of the consumers the proxy creates for clients.
const (
	maxProxyInactive          = 10 * time.Minute
	maxProxyConsumers         = 1024
	maxProxyConsumersPerInbox = 256
)

// ConsumerOwnerToken is ownerToken, for tests and diagnostics.
func ConsumerOwnerToken(inbox string) string { return ownerToken(inbox) }

// ownerToken starts the names of the pull consumers a connection with
// inbox prefix inbox creates through the proxy: anyone can compute it,
// but only that connection's role (or, with per-connection inboxes, that
// connection) may send requests under inbox.
func ownerToken(inbox string) string {
	h := sha256.Sum256([]byte(inbox))
	return hex.EncodeToString(h[:8])
}

// consumerName is a fresh name for a consumer j creates: under its owner
// token for a role's connection (the proxy requires it), "" (the server
// or the client library picks one) for the engine.
func (j *JetStream) consumerName() string {
	if j.owner == "" {
		return ""
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	return j.owner + "-" + hex.EncodeToString(b[:])
}

// ownedName reports whether name is a consumer inbox's connections made.
func ownedName(inbox, name string) bool {
	return strings.HasPrefix(name, ownerToken(inbox)+"-")
}

// apiProxyPrefix is the API prefix of a connection whose inbox prefix is
// inbox, or "" when it connects as the engine (or without roles) and uses
// $JS.API itself.
func apiProxyPrefix(inbox string) string {
	r, ok := inboxRole(inbox)
	if !ok || r == RoleEngine {
		return ""
	}
	return APIProxyPrefix + inbox
}

// inboxRole is the role whose inbox prefix is inbox: InboxPrefix(r), or
// that followed by "_" and a connection's own token.
func inboxRole(inbox string) (Role, bool) {
	rest, ok := strings.CutPrefix(inbox, "_INBOX_")
	if !ok {
		return "", false
	}
	name, _, _ := strings.Cut(rest, "_")
	r, err := ParseRole(name)
	return r, err == nil
}

// apiProxy is the engine's side of the proxied API. Its only state is
// the reports' rate per run; several engines answer alike otherwise.
type apiProxy struct {
	j *JetStream

	mu    sync.Mutex
	rates map[string]*reportRate // per run

	// tallyMu guards tallies, the consumer names reserveConsumer last
	// listed per stream.
	tallyMu sync.Mutex
	tallies map[string]*consumerTally
}

// consumerTally is a stream's consumer names as listed at at, with the
// names of the creates the proxy forwarded since. Listing every consumer
// of the events stream for each consumer a role creates was a twentieth
// of serve's CPU; a listing now serves consumerTallyTTL. Roles create
// consumers only through the proxy, so the tally never counts fewer than
// the stream holds (beyond what other engines' proxies forwarded within
// the TTL); a consumer deleted or expired since still counts until the
// next listing, so a limit refuses early, never late.
type consumerTally struct {
	names map[string]bool
	at    time.Time
}

const consumerTallyTTL = time.Second

// Reports' rate limit per run: a burst of reportBurst, then reportRate a
// second (a worker sends a handful per execution).
const (
	reportBurst   = 200
	reportRateSec = 50
	// maxRateRuns bounds the runs tracked; idle ones are dropped first.
	maxRateRuns = 10000
)

type reportRate struct {
	tokens float64
	last   time.Time
}

// allowReport takes one of run's report tokens.
func (p *apiProxy) allowReport(run string, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.rates[run]
	if !ok {
		if len(p.rates) >= maxRateRuns {
			for k, v := range p.rates {
				if now.Sub(v.last).Seconds()*reportRateSec >= reportBurst {
					delete(p.rates, k)
				}
			}
			if len(p.rates) >= maxRateRuns {
				return false
			}
		}
		r = &reportRate{tokens: reportBurst, last: now}
		p.rates[run] = r
	}
	r.tokens = min(reportBurst, r.tokens+now.Sub(r.last).Seconds()*reportRateSec)
	r.last = now
	if r.tokens < 1 {
		return false
	}
	r.tokens--
	return true
}

// proxied holds the connections that already serve the proxy.
var proxied sync.Map

// serveAPIProxy starts the proxy on the engine's connection (once per
// connection), in a queue group: several engines share the requests.
func (j *JetStream) serveAPIProxy() error {
	if _, loaded := proxied.LoadOrStore(j.nc, true); loaded {
		return nil
	}
	p := &apiProxy{j: j, rates: map[string]*reportRate{}, tallies: map[string]*consumerTally{}}
	_, err := j.nc.QueueSubscribe(APIProxyPrefix+">", "switchyard-jsapi", p.handle)
	if err != nil {
		proxied.Delete(j.nc)
	}
	return err
}

// proxyRequest is one request, split.
type proxyRequest struct {
	m     *nats.Msg
	inbox string
	role  Role
	api   string // the request without "$JS.API.", or "$KV.<bucket>.<key>"
	// unlisted: a worker connection whose key the deployment's worker
	// identities do not list, handled as a reader.
	unlisted bool
}

func (p *apiProxy) handle(m *nats.Msg) {
	rest := strings.TrimPrefix(m.Subject, APIProxyPrefix)
	inbox, api, ok := strings.Cut(rest, ".")
	if !ok {
		return
	}
	r, ok := inboxRole(inbox)
	if !ok || r == RoleEngine {
		return
	}
	// The answer goes only to the requester's own inbox; a request
	// without one (or naming another subject) is dropped unanswered,
	// since answering it is exactly the relay refused.
	if !strings.HasPrefix(m.Reply, inbox+".") {
		return
	}
	req := proxyRequest{m: m, inbox: inbox, role: r, api: api}
	if reg := p.j.cfg.Workers; r == RoleWorker && reg != nil && !reg.Known(workerKey(inbox)) {
		// Not a worker the deployment provisioned: a reader.
		req.role, req.unlisted = RoleReader, true
	}
	if reason := p.check(&req); reason != "" {
		p.refuse(req, reason)
		return
	}
	subject := "$JS.API." + req.api
	header := req.m.Header
	switch {
	case strings.HasPrefix(req.api, "$KV."+ClaimsBucket+"."):
		// A claim names the connection that wrote it (checkClaimWrite).
		subject = req.api
		header = stamped(req.m.Header, req.inbox)
	case strings.HasPrefix(req.api, "$KV."):
		subject = req.api
	case strings.HasPrefix(req.api, ReportSubjectPrefix):
		// The report names its publisher; no client names itself. Its
		// message id is its publisher's own: a report's id is computed
		// from what anyone can learn (execution, kind, worker id), and a
		// shared id would let another connection publish first and have
		// the stream drop the real report as a duplicate.
		subject = req.api
		header = stamped(req.m.Header, req.inbox)
		if id := header.Get(jetstream.MsgIDHeader); id != "" {
			header.Set(jetstream.MsgIDHeader, id+"@"+ownerToken(req.inbox))
		}
	}
	_ = p.j.nc.PublishMsg(&nats.Msg{Subject: subject, Reply: m.Reply, Header: header, Data: req.m.Data})
}

// stamped is h with ReporterHeader naming inbox, whatever h said.
func stamped(h nats.Header, inbox string) nats.Header {
	out := nats.Header{}
	for k, v := range h {
		if k != ReporterHeader {
			out[k] = v
		}
	}
	out.Set(ReporterHeader, inbox)
	return out
}

// proxyRefusalCode is the JetStream error code of the proxy's refusals.
const proxyRefusalCode = 10999

// proxyRefused reports whether err is the engine's API proxy refusing a
// request.
func proxyRefused(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.Code == 403 && apiErr.ErrorCode == proxyRefusalCode
}

// refuse answers req with a JetStream API error.
func (p *apiProxy) refuse(req proxyRequest, reason string) {
	desc := fmt.Sprintf("switchyard: the %s role may not %s", req.role, reason)
	if req.unlisted {
		desc = fmt.Sprintf("switchyard: worker connection %s is no provisioned worker identity, so it may only read; it may not %s", req.inbox, reason)
	}
	if strings.HasPrefix(req.api, "CONSUMER.MSG.NEXT.") {
		// A pull request's answers are messages; a status message ends it.
		h := nats.Header{}
		h.Set("Status", "409")
		h.Set("Description", desc)
		_ = p.j.nc.PublishMsg(&nats.Msg{Subject: req.m.Reply, Header: h})
		return
	}
	body, _ := json.Marshal(map[string]any{
		"type":  "io.nats.jetstream.api.v1.error",
		"error": map[string]any{"code": 403, "err_code": proxyRefusalCode, "description": desc},
	})
	_ = p.j.nc.Publish(req.m.Reply, body)
}

// check says why req is refused, or "" to forward it (possibly rewritten).
func (p *apiProxy) check(req *proxyRequest) string {
	toks := strings.Split(req.api, ".")
	at := func(i int) string {
		if i < len(toks) {
			return toks[i]
		}
		return ""
	}
	if at(0) == "$KV" {
		return p.checkKV(req, toks)
	}
	if strings.HasPrefix(req.api, ReportSubjectPrefix) {
		return p.checkReport(req, toks)
	}
	switch {
	case req.api == "INFO",
		at(0) == "STREAM" && (at(1) == "INFO" || at(1) == "NAMES" || at(1) == "LIST") && len(toks) <= 3,
		at(0) == "STREAM" && at(1) == "MSG" && at(2) == "GET" && len(toks) == 4 && readable(at(3)),
		at(0) == "DIRECT" && at(1) == "GET" && len(toks) >= 3 && readable(at(2)),
		at(0) == "CONSUMER" && (at(1) == "NAMES" || at(1) == "LIST") && len(toks) == 3,
		at(0) == "CONSUMER" && at(1) == "INFO" && len(toks) == 4:
		return ""
	case at(0) == "CONSUMER" && at(1) == "MSG" && at(2) == "NEXT" && len(toks) == 5:
		return p.checkPull(req, at(3), at(4))
	case at(0) == "CONSUMER" && at(1) == "CREATE" && len(toks) >= 3:
		return p.checkCreate(req, at(2), at(3))
	case at(0) == "CONSUMER" && at(1) == "DELETE" && len(toks) == 4:
		if !readable(at(2)) || !ownedName(req.inbox, at(3)) {
			return "delete consumer " + at(3) + " of " + at(2) + ": only the consumers it created"
		}
		return ""
	case at(0) == "STREAM" && at(1) == "PURGE" && at(2) == WorkersStream && len(toks) == 3 && req.role == RoleWorker:
		return p.checkPresencePurge(req)
	}
	return "use the JetStream API " + req.api + " (streams, buckets and consumers are the engine's)"
}

// readable reports whether stream is one every role reads with its own
// consumers.
func readable(stream string) bool {
	for _, s := range readStreams {
		if s == stream {
			return true
		}
	}
	return false
}

// jobConsumerAllowed reports whether role r consumes the job consumer
// name: a provider's for workers, a parent's native one for parents.
func jobConsumerAllowed(r Role, name string) (subject string, ok bool) {
	if p, isProvider := cutProviderQueue(name); isProvider {
		return JobSubject(string(p)), r == RoleWorker
	}
	for _, parent := range nativeParents {
		if name == "jobs_native_"+string(parent) {
			return NativeJobSubject(string(parent)), r == RoleParent
		}
	}
	return "", false
}

// serves says why the worker connection of req may not serve provider's
// jobs or capacity, or "" when it may: without provisioned identities
// every worker serves every provider.
func (p *apiProxy) serves(req *proxyRequest, provider policy.Provider) string {
	reg := p.j.cfg.Workers
	if req.role != RoleWorker || reg == nil {
		return ""
	}
	key := workerKey(req.inbox)
	if reg.Serves(key, provider) {
		return ""
	}
	return fmt.Sprintf("serve provider %s: worker identity %s serves only %v", provider, key, reg.Providers(key))
}

func (p *apiProxy) checkPull(req *proxyRequest, stream, name string) string {
	if stream == JobsStream {
		if _, ok := jobConsumerAllowed(req.role, name); !ok {
			return "pull from job consumer " + name
		}
		if prov, ok := cutProviderQueue(name); ok {
			if why := p.serves(req, prov); why != "" {
				return why
			}
		}
		return ""
	}
	if !readable(stream) || !ownedName(req.inbox, name) {
		return "pull from consumer " + name + " of " + stream + ": only from the consumers it created"
	}
	return ""
}

// createRequest is a consumer create request's body.
type createRequest struct {
	Stream   string                    `json:"stream_name"`
	Config   *jetstream.ConsumerConfig `json:"config"`
	Action   string                    `json:"action"`
	Pedantic bool                      `json:"pedantic,omitempty"`
}

func (p *apiProxy) checkCreate(req *proxyRequest, stream, subjName string) string {
	if stream == "DURABLE" {
		return "create durable consumers"
	}
	var cr createRequest
	if err := json.Unmarshal(req.m.Data, &cr); err != nil || cr.Config == nil || cr.Stream != stream {
		return "send a malformed consumer request"
	}
	cfg := cr.Config
	name := subjName
	if name == "" {
		name = cfg.Name
	}
	if name == "" || (cfg.Name != "" && cfg.Name != name) {
		return "create a consumer without a name"
	}
	if stream == JobsStream {
		return p.checkJobConsumer(req, cfg, name)
	}
	if !readable(stream) {
		return "create consumers on " + stream
	}
	switch {
	case cfg.Durable != "":
		return "create durable consumers"
	case cfg.AckPolicy != jetstream.AckNonePolicy:
		return "create consumers that take acknowledgements"
	case !cfg.MemoryStorage || cfg.Replicas > 1:
		return "create consumers stored on disk or replicated"
	case cfg.InactiveThreshold < 0 || cfg.InactiveThreshold > maxProxyInactive:
		// 0: the server's default for an ephemeral consumer (5s).
		return fmt.Sprintf("create consumers that live idle longer than %v", maxProxyInactive)
	case cfg.DeliverSubject != "" && !strings.HasPrefix(cfg.DeliverSubject, req.inbox+"."):
		return "create a consumer delivering to " + cfg.DeliverSubject + ": only to its own inbox"
	case cfg.DeliverGroup != "":
		return "create queue push consumers"
	}
	if cfg.DeliverSubject == "" && !ownedName(req.inbox, name) {
		return "create pull consumer " + name + ": its name must start with " + ownerToken(req.inbox) + "-"
	}
	if why := p.reserveConsumer(stream, req.inbox, name); why != "" {
		return why
	}
	// Created, never updated: an existing consumer of that name (the
	// engine's, say) is left as it is.
	cr.Action = "create"
	data, err := json.Marshal(cr)
	if err != nil {
		return "send a malformed consumer request"
	}
	req.m = &nats.Msg{Subject: req.m.Subject, Reply: req.m.Reply, Header: req.m.Header, Data: data}
	return ""
}

// reserveConsumer counts stream's consumers, and those inbox's
// connections made, from the stream's tally (listed again once it is
// older than consumerTallyTTL), and adds name to it unless a limit is
// reached; it says why not, or "".
func (p *apiProxy) reserveConsumer(stream, inbox, name string) string {
	p.tallyMu.Lock()
	defer p.tallyMu.Unlock()
	t := p.tallies[stream]
	if t == nil || time.Since(t.at) > consumerTallyTTL {
		names, err := p.listConsumers(stream)
		if err != nil {
			delete(p.tallies, stream)
			return "create a consumer now: " + err.Error()
		}
		t = &consumerTally{names: names, at: time.Now()}
		p.tallies[stream] = t
	}
	owner := ownerToken(inbox) + "-"
	total, mine := len(t.names), 0
	for n := range t.names {
		if strings.HasPrefix(n, owner) {
			mine++
		}
	}
	if total >= maxProxyConsumers || mine >= maxProxyConsumersPerInbox {
		return fmt.Sprintf("create more consumers: %d on %s (at most %d), %d of its own (at most %d)", total, stream, maxProxyConsumers, mine, maxProxyConsumersPerInbox)
	}
	t.names[name] = true
	return ""
}

// listConsumers lists stream's consumers.
func (p *apiProxy) listConsumers(stream string) (map[string]bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), p.j.cfg.AttemptTimeout)
	defer cancel()
	st, err := p.j.streamHandle(ctx, stream)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	l := st.ConsumerNames(ctx)
	for n := range l.Name() {
		names[n] = true
	}
	if err := l.Err(); err != nil {
		p.j.forgetStream(stream)
		return nil, err
	}
	return names, nil
}

// checkJobConsumer allows what Queue.Jobs does: create a job consumer the
// way it does, or update its ack wait and deliveries, nothing else.
func (p *apiProxy) checkJobConsumer(req *proxyRequest, cfg *jetstream.ConsumerConfig, name string) string {
	subject, ok := jobConsumerAllowed(req.role, name)
	if !ok {
		return "create or change job consumer " + name
	}
	if prov, ok := cutProviderQueue(name); ok {
		if why := p.serves(req, prov); why != "" {
			return why
		}
	}
	if cfg.Durable != name || cfg.FilterSubject != subject || len(cfg.FilterSubjects) > 0 ||
		cfg.DeliverSubject != "" || cfg.AckPolicy != jetstream.AckExplicitPolicy || cfg.AckWait <= 0 {
		return "create job consumer " + name + " other than workers do"
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.j.cfg.AttemptTimeout)
	defer cancel()
	cons, err := p.j.js.Consumer(ctx, JobsStream, name)
	if err != nil {
		// Not there yet: created as Queue.Jobs creates it, with the
		// default cap.
		_, provider := cutProviderQueue(name)
		if provider && cfg.MaxAckPending != DefaultProviderCap {
			return "create job consumer " + name + " with a cap other than the default"
		}
		return ""
	}
	have, want := cons.CachedInfo().Config, *cfg
	have.AckWait, want.AckWait = 0, 0
	have.MaxDeliver, want.MaxDeliver = 0, 0
	if !reflect.DeepEqual(have, want) {
		return "change job consumer " + name + " beyond its ack wait and deliveries (its cap is the engine's)"
	}
	return ""
}

func (p *apiProxy) checkPresencePurge(req *proxyRequest) string {
	var pr struct {
		Filter string `json:"filter"`
		Seq    uint64 `json:"seq,omitempty"`
		Keep   uint64 `json:"keep,omitempty"`
	}
	dec := json.NewDecoder(strings.NewReader(string(req.m.Data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pr); err != nil || pr.Seq != 0 || pr.Keep != 0 ||
		!strings.HasPrefix(pr.Filter, WorkerSubjectPrefix) || strings.ContainsAny(pr.Filter[len(WorkerSubjectPrefix):], "*>.") ||
		len(pr.Filter) == len(WorkerSubjectPrefix) {
		return "purge the workers stream but one worker's presence"
	}
	return ""
}

// checkReport allows a worker's report on a lane and a parent's report
// or control: sy.rep.<run>.<lane or ctl>, published for a stream ack.
func (p *apiProxy) checkReport(req *proxyRequest, toks []string) string {
	// toks: "sy", "rep", run, token.
	if len(toks) != 4 || ValidateRunID(toks[2]) != nil {
		return "publish on " + req.api
	}
	switch {
	case req.role == RoleParent:
	case req.role == RoleWorker && toks[3] != controlToken:
	default:
		return "publish on " + req.api
	}
	if !p.allowReport(toks[2], time.Now()) {
		return fmt.Sprintf("publish more than %d reports a second on run %s (after a burst of %d)", reportRateSec, toks[2], reportBurst)
	}
	return ""
}

// checkKV allows the key-value writes of the role's buckets.
func (p *apiProxy) checkKV(req *proxyRequest, toks []string) string {
	if len(toks) < 3 {
		return "write " + req.api
	}
	bucket := toks[1]
	switch {
	case bucket == ClaimsBucket && (req.role == RoleWorker || req.role == RoleParent):
	case bucket == CapacityBucket && req.role == RoleWorker:
	default:
		return "write bucket " + bucket
	}
	if req.m.Header.Get(jetstream.MsgRollup) != "" {
		return "roll up bucket " + bucket
	}
	if req.m.Header.Get("KV-Operation") != "" {
		return "delete or purge keys of bucket " + bucket
	}
	if bucket == ClaimsBucket {
		return p.checkClaimWrite(req, strings.Join(toks[2:], "."), time.Now())
	}
	// A capacity report's key is its provider: a worker puts only its
	// own providers' (one lifting another provider's billing-policy
	// exclusion is refused).
	return p.serves(req, policy.Provider(strings.Join(toks[2:], ".")))
}

// checkClaimWrite allows a new claim, any change of a claim by the
// connection that wrote it last (renew, release, abandon its own), and,
// by another connection, only the abandon of a held lease that has not
// been renewed for longer than its TTL (a crashed worker's stale lease,
// which any worker abandons: activities/worker_claim.go). A claim written
// without a ReporterHeader (by the engine, or before the proxy stamped
// claims) is anyone's to change.
func (p *apiProxy) checkClaimWrite(req *proxyRequest, key string, now time.Time) string {
	if req.m.Header.Get(jetstream.ExpectedLastSubjSeqHeader) == "0" {
		// A create: the server refuses it when the claim exists, and the
		// worker reads that as already claimed (a job delivered twice)
		// and drops the job; a refusal here it would retry.
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.j.cfg.AttemptTimeout)
	defer cancel()
	st, err := p.j.streamHandle(ctx, "KV_"+ClaimsBucket)
	if err != nil {
		return "write a claim now: " + err.Error()
	}
	cur, err := st.GetLastMsgForSubject(ctx, "$KV."+ClaimsBucket+"."+key)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return "" // a new claim: the create-only put decides
	}
	if err != nil {
		p.j.forgetStream("KV_" + ClaimsBucket)
		return "write a claim now: " + err.Error()
	}
	writer := cur.Header.Get(ReporterHeader)
	if writer == "" || writer == req.inbox {
		return ""
	}
	have, err1 := decodeClaim(key, cur.Data)
	want, err2 := decodeClaim(key, req.m.Data)
	switch {
	case err1 != nil || err2 != nil:
		return "write claim " + key + ": not a claim"
	case have.State == LeaseHeld && want.State == LeaseAbandoned && want.WorkerID == have.WorkerID && now.Sub(cur.Time) > have.TTL:
		return ""
	}
	return "change claim " + key + ", another connection's (only a stale lease may be abandoned)"
}
