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

// readStreams are the streams every role may read with its own consumers.
var readStreams = []string{EventsStream, ReportsStream, WorkersStream, "KV_" + ClaimsBucket, capacityStream, runsStream}

// consumerAPI is the JetStream API a role needs to read stream with
// consumers it creates (ordered consumers included) and, with acks, to
// consume from them.
func consumerAPI(stream, consumer string, acks bool) []string {
	out := []string{
		"$JS.API.CONSUMER.CREATE." + stream + "." + consumer,
		"$JS.API.CONSUMER.CREATE." + stream + "." + consumer + ".>",
		"$JS.API.CONSUMER.DURABLE.CREATE." + stream + "." + consumer,
		"$JS.API.CONSUMER.INFO." + stream + "." + consumer,
		"$JS.API.CONSUMER.DELETE." + stream + "." + consumer,
		"$JS.API.CONSUMER.MSG.NEXT." + stream + "." + consumer,
	}
	if acks {
		out = append(out, "$JS.ACK."+stream+"."+consumer+".>")
	}
	return out
}

// RolePermissions is the subject permissions of r. The engine's are
// everything; the others are lists of exactly what their commands use.
func RolePermissions(r Role) (Permissions, error) {
	if r == RoleEngine {
		return Permissions{PublishAllow: []string{">"}, SubscribeAllow: []string{">"}, Responses: true}, nil
	}
	if _, err := ParseRole(string(r)); err != nil {
		return Permissions{}, err
	}
	p := Permissions{
		PublishAllow: []string{
			"$JS.API.INFO",
			"$JS.API.STREAM.INFO.*",
			"$JS.API.STREAM.NAMES",
			"$JS.API.STREAM.LIST",
			"$JS.API.STREAM.MSG.GET.*",
			"$JS.API.DIRECT.GET.>",
			"$JS.API.CONSUMER.NAMES.*",
			"$JS.API.CONSUMER.LIST.*",
			// Caps: each provider's job consumer's limits.
			"$JS.API.CONSUMER.INFO." + JobsStream + ".*",
			// Worker commands are read-only by their allowlist.
			CommandSubjectPrefix + "*.*",
		},
		SubscribeAllow: []string{InboxPrefix(r) + ".>"},
	}
	for _, s := range readStreams {
		p.PublishAllow = append(p.PublishAllow, consumerAPI(s, "*", false)...)
	}
	switch r {
	case RoleWorker:
		// Every provider's job consumer, but no parent's native one.
		p.PublishAllow = append(p.PublishAllow, consumerAPI(JobsStream, "*", true)...)
		for _, parent := range nativeParents {
			p.PublishDeny = append(p.PublishDeny, consumerAPI(JobsStream, "jobs_native_"+string(parent), true)...)
		}
		p.PublishAllow = append(p.PublishAllow,
			ReportSubjectPrefix+"*.*",
			WorkerSubjectPrefix+"*",
			"$JS.API.STREAM.PURGE."+WorkersStream,
			"$KV."+ClaimsBucket+".>",
			"$KV."+CapacityBucket+".>",
		)
		// A worker reports on lanes; controls and submissions are the
		// parent's.
		p.PublishDeny = append(p.PublishDeny, ReportSubjectPrefix+"*."+controlToken)
		p.SubscribeAllow = append(p.SubscribeAllow, CommandSubjectPrefix+"*.*", CapacityRefreshSubjectPrefix+"*")
		p.Responses = true
	case RoleParent:
		for _, parent := range nativeParents {
			p.PublishAllow = append(p.PublishAllow, consumerAPI(JobsStream, "jobs_native_"+string(parent), true)...)
		}
		p.PublishAllow = append(p.PublishAllow,
			ReportSubjectPrefix+"*.*",
			SubmitSubject,
			CapacityRefreshSubjectPrefix+"*",
			"$KV."+ClaimsBucket+".>",
		)
	}
	return p, nil
}

// String renders r for messages.
func (r Role) String() string { return string(r) }

// roleUser is the NATS user name of a role's connections.
func roleUser(r Role) string { return fmt.Sprintf("switchyard-%s", r) }
