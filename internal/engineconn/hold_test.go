package engineconn

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDataDirHoldDecision: what a command does about its data directory,
// from what it wants and what one look found (lock, serve.json, pid).
func TestDataDirHoldDecision(t *testing.T) {
	t.Parallel()
	serve := &ServeInfo{PID: 4242, URL: "nats://127.0.0.1:4222", Kind: "serve"}
	run := &ServeInfo{PID: 4343, URL: "nats://127.0.0.1:4223", Kind: "run"}
	embed := holdDecision{action: holdEmbed}
	connect := holdDecision{action: holdConnect}
	wait := holdDecision{action: holdWait}
	refuse := func(r holdReason) holdDecision { return holdDecision{action: holdRefuse, reason: r} }
	for _, c := range []struct {
		name  string
		facts holdFacts
		want  holdDecision
	}{
		{"free lock: start the embedded server", holdFacts{lockFree: true}, embed},
		{"free lock: serve takes it", holdFacts{exclusive: true, lockFree: true}, embed},
		{"free lock, serve.json left behind: it is not read", holdFacts{lockFree: true, info: serve, alive: true}, embed},
		{"free lock: a worker refuses, nothing serves", holdFacts{noEmbed: true, lockFree: true}, refuse(refuseNoServe)},
		{"free lock after the wait ran out: still embed", holdFacts{lockFree: true, expired: true}, embed},

		{"a serve listens: connect", holdFacts{info: serve, alive: true}, connect},
		{"a serve listens: a worker connects", holdFacts{noEmbed: true, info: serve, alive: true}, connect},
		{"a serve listens: a run connects", holdFacts{isRun: true, info: serve, alive: true}, connect},
		{"a serve listens, wait ran out: the connect is the last try", holdFacts{info: serve, alive: true, expired: true},
			holdDecision{action: holdConnect, lastTry: true}},
		{"a serve listens, a run was waited for: no deadline", holdFacts{info: serve, alive: true, expired: true, waitingForRun: true}, connect},
		{"a serve listens: a second serve refuses", holdFacts{exclusive: true, info: serve, alive: true}, refuse(refuseServed)},

		{"a self-contained run listens: a query connects", holdFacts{info: run, alive: true}, connect},
		{"a self-contained run listens: serve refuses", holdFacts{exclusive: true, info: run, alive: true}, refuse(refuseServed)},
		{"a self-contained run listens: a worker refuses", holdFacts{noEmbed: true, info: run, alive: true}, refuse(refuseSelfContained)},
		{"a self-contained run listens: a run waits for it and says so", holdFacts{isRun: true, info: run, alive: true},
			holdDecision{action: holdWait, waitForRun: true, announce: true}},
		{"a self-contained run listens: a run already waiting says nothing more", holdFacts{isRun: true, info: run, alive: true, waitingForRun: true, expired: true},
			holdDecision{action: holdWait, waitForRun: true}},

		{"held, no serve.json: wait", holdFacts{}, wait},
		{"held, serve.json names a dead pid: wait", holdFacts{info: serve}, wait},
		{"held, no serve.json, wait ran out: refuse", holdFacts{expired: true}, refuse(refuseStaysLocked)},
		{"held, serve.json names a dead pid, wait ran out: refuse", holdFacts{info: serve, expired: true}, refuse(refuseStaysLocked)},
		{"held, no serve.json: a worker waits too", holdFacts{noEmbed: true}, wait},
		{"held, no serve.json, wait ran out: a worker refuses, nothing listens", holdFacts{noEmbed: true, expired: true}, refuse(refuseNotListening)},
		{"held, dead serve: serve waits, then refuses", holdFacts{exclusive: true, info: serve, expired: true}, refuse(refuseStaysLocked)},
		{"held, a run was waited for and its serve.json is gone: no deadline", holdFacts{isRun: true, expired: true, waitingForRun: true}, wait},
	} {
		require.Equal(t, c.want, decideHold(c.facts), c.name)
	}
}

// TestDataDirHoldRefusals: every refusal names the data directory and a
// way on.
func TestDataDirHoldRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	info := &ServeInfo{PID: 4343, URL: "nats://127.0.0.1:4223", Kind: "run"}
	for r, fix := range map[holdReason]string{
		refuseNoServe:       "switchyard serve --data-dir",
		refuseServed:        "pass another --data-dir",
		refuseSelfContained: "switchyard serve --data-dir",
		refuseNotListening:  "or pass --nats URL",
		refuseStaysLocked:   "pass another --data-dir",
	} {
		err := holdRefusal(r, dir, info)
		require.ErrorContains(t, err, dir, "reason %d", r)
		require.ErrorContains(t, err, fix, "reason %d", r)
	}
}
