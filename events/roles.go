package events

import (
	"fmt"
	"slices"

	"github.com/switchyard-dev/switchyard/policy"
)

// Role is what a connection may do on the Switchyard subjects. Every
// command connects as the role it needs, and a server that enforces roles
// (the embedded server always; a cluster configured as docs/DEPLOY.md
// shows) refuses everything else.
type Role string

// Roles, from the least to the most privileged.
const (
	// RoleReader reads events, reports, presence, claims, capacity and
	// caps, and asks workers their allowlisted read-only commands:
	// status, history, replay, report, doctor, the console's reads.
	RoleReader Role = "reader"
	// RoleWorker is a reader that also consumes its providers' jobs,
	// publishes reports (never a control or a submission), announces its
	// presence, uses the claims bucket, puts capacity reports and answers
	// worker commands.
	RoleWorker Role = "worker"
	// RoleParent is a reader that also submits runs, publishes controls
	// (verdicts, operation results, recoveries, cancels), claims and
	// reports its own native jobs, and asks for capacity refreshes:
	// run (against a serve), cancel, inspect, operation, recover,
	// native, prune, usage.
	RoleParent Role = "parent"
	// RoleEngine may do everything: it creates the streams and is the only
	// writer of events and jobs (serve, a self-contained run).
	RoleEngine Role = "engine"
)

// Roles lists every role, least privileged first.
var Roles = []Role{RoleReader, RoleWorker, RoleParent, RoleEngine}

// ParseRole accepts exactly the names of Roles.
func ParseRole(s string) (Role, error) {
	if slices.Contains(Roles, Role(s)) {
		return Role(s), nil
	}
	return "", invalidf("role %q: want reader, worker, parent or engine", s)
}

// SubmitSubject is where a parent asks the engine to create a run
// (request-reply, no stream): the engine alone appends events, so a
// parent's run-created reaches the log only through the engine that
// validated it.
const SubmitSubject = "sy.api.submit"

// InboxPrefix is the reply-subject prefix of a role's connections: each
// role subscribes only to its own replies.
func InboxPrefix(r Role) string { return "_INBOX_" + string(r) }

// ConnInboxPrefix is the reply-subject prefix of one connection of role r
// to the embedded server, named by the public key of the connection's own
// nkey (drawn for that connection, proven by signing the server's nonce):
// only that connection subscribes to its replies, not every connection of
// its role.
func ConnInboxPrefix(r Role, pub string) string { return InboxPrefix(r) + "_" + pub }

// Permissions is what a role may publish and subscribe to, as NATS subject
// patterns: allowed unless a deny pattern matches. Responses: the role may
// answer requests it received (worker commands), once each.
type Permissions struct {
	PublishAllow   []string
	PublishDeny    []string
	SubscribeAllow []string
	SubscribeDeny  []string
	Responses      bool
}

// nativeParents are the parents whose native jobs have a consumer.
var nativeParents = []policy.Parent{policy.ParentClaude, policy.ParentCodex}

// readStreams are the streams every role may read with consumers the
// engine's API proxy creates for it (jsapiproxy.go).
var readStreams = []string{EventsStream, ReportsStream, WorkersStream, "KV_" + ClaimsBucket, capacityStream, runsStream}

// jobAcks is the subject a role acknowledges job consumer consumer's jobs on.
func jobAcks(consumer string) string { return "$JS.ACK." + JobsStream + "." + consumer + ".>" }

// RolePermissions is the subject permissions of r. The engine's are
// everything; the others are lists of exactly what their commands use.
// No role but the engine may publish to the JetStream API ($JS.API.>) or
// write a bucket ($KV.>) itself: its JetStream requests go through the
// engine's proxy under its own inbox prefix (APIProxyPrefix), which
// forwards only what the role needs (see jsapiproxy.go).
//
// These are the permissions of a deployment whose connections of one role
// share a user (docs/deploy/nats-server.conf): they share the role's inbox
// prefix. The embedded server gives each connection its own inbox prefix
// (ConnInboxPrefix) and the permissions rolePermissions renders for it.
func RolePermissions(r Role) (Permissions, error) {
	return rolePermissions(r, InboxPrefix(r))
}

// rolePermissions is RolePermissions for a connection whose inbox prefix
// is inbox: it alone subscribes to its replies and sends JetStream
// requests under it.
func rolePermissions(r Role, inbox string) (Permissions, error) {
	return rolePermissionsFor(r, inbox, nil)
}

// WorkerIdentityPermissions is the subject permissions of the worker
// whose nkey's public key is key, serving providers: a deployment's
// nats-server gives each provisioned worker a user of its own with these
// (docs/DEPLOY.md), its own inbox prefix, and acknowledgements of its
// own providers' jobs only.
func WorkerIdentityPermissions(key string, providers []policy.Provider) (Permissions, error) {
	if len(providers) == 0 {
		return Permissions{}, invalidf("worker identity %s: no providers", key)
	}
	return rolePermissionsFor(RoleWorker, ConnInboxPrefix(RoleWorker, key), providers)
}

// rolePermissionsFor is rolePermissions for a worker serving only
// providers (nil: every provider).
func rolePermissionsFor(r Role, inbox string, providers []policy.Provider) (Permissions, error) {
	if r == RoleEngine {
		return Permissions{PublishAllow: []string{">"}, SubscribeAllow: []string{">"}, Responses: true}, nil
	}
	if _, err := ParseRole(string(r)); err != nil {
		return Permissions{}, err
	}
	p := Permissions{
		PublishAllow: []string{
			APIProxyPrefix + inbox + ".>",
			// Worker commands are read-only by their allowlist.
			CommandSubjectPrefix + "*.*",
		},
		SubscribeAllow: []string{inbox + ".>"},
	}
	switch r {
	case RoleWorker:
		if providers != nil {
			// Its own providers' job consumers only.
			for _, prov := range providers {
				p.PublishAllow = append(p.PublishAllow, jobAcks("jobs_"+string(prov)))
			}
		} else {
			// Every provider's job consumer, but no parent's native one.
			p.PublishAllow = append(p.PublishAllow, jobAcks("*"))
			for _, parent := range nativeParents {
				p.PublishDeny = append(p.PublishDeny, jobAcks("jobs_native_"+string(parent)))
			}
		}
		// Reports go through the proxy, which names the reporter (and
		// takes a worker's only on lanes: controls are the parent's).
		p.PublishAllow = append(p.PublishAllow, WorkerSubjectPrefix+"*")
		p.SubscribeAllow = append(p.SubscribeAllow, CommandSubjectPrefix+"*.*", CapacityRefreshSubjectPrefix+"*",
			// The events as the engine publishes them, for the cancel
			// notices of the lanes it runs (JetStreamStore.CancelNotices):
			// what its proxied reads already reach, without a consumer.
			EventSubjectPrefix+"*.*")
		p.Responses = true
	case RoleParent:
		for _, parent := range nativeParents {
			p.PublishAllow = append(p.PublishAllow, jobAcks("jobs_native_"+string(parent)))
		}
		p.PublishAllow = append(p.PublishAllow,
			SubmitSubject,
			CapacityRefreshSubjectPrefix+"*",
		)
	}
	return p, nil
}

// String renders r for messages.
func (r Role) String() string { return string(r) }

// roleUser is the NATS user name of a role's connections.
func roleUser(r Role) string { return fmt.Sprintf("switchyard-%s", r) }
