package engineconn

// Who holds a data directory, and what a command does about it: the pure
// part of openEngineConn. dataDirConn looks (serve.lock, serve.json, the
// holder's pid), decideHold says what to do with what it saw, and
// dataDirConn does it, looking again after a short wait while the decision
// is to wait.

// holdFacts is what a command wants and what one look at its data
// directory found.
type holdFacts struct {
	// noEmbed: the command needs a server that outlives it (worker), so
	// it never starts the embedded one.
	noEmbed bool
	// exclusive: the command must own the directory (serve).
	exclusive bool
	// isRun: the command is a self-contained run (serveKind "run"), which
	// waits for another self-contained run rather than lean on its server.
	isRun bool

	// lockFree: this process just took serve.lock.
	lockFree bool
	// info is serve.json (nil when it is missing or unreadable); alive says
	// whether the pid it names is a live process. Only read while another
	// process holds the lock.
	info  *ServeInfo
	alive bool
	// expired: the wait for a holder that does not listen ran out.
	expired bool
	// waitingForRun: an earlier look decided to wait for another run to
	// finish, which has no deadline.
	waitingForRun bool
}

// holdAction is what to do after a look.
type holdAction int

const (
	// holdEmbed: start the embedded server under the lock just taken.
	holdEmbed holdAction = iota + 1
	// holdConnect: connect to the holder serve.json names; if that fails,
	// give up when the decision says it was the last try, else look again.
	holdConnect
	// holdWait: look again after a short wait.
	holdWait
	// holdRefuse: fail with the reason's error (releasing a lock just
	// taken).
	holdRefuse
)

// holdReason says why a command refuses.
type holdReason int

const (
	// refuseNoServe: the lock was free, so nothing serves the directory,
	// and the command will not embed.
	refuseNoServe holdReason = iota + 1
	// refuseServed: another process serves it and the command must own it.
	refuseServed
	// refuseSelfContained: a self-contained run holds it, which stops with
	// its run; the command needs a lasting server.
	refuseSelfContained
	// refuseNotListening: the holder does not listen and the command will
	// not embed.
	refuseNotListening
	// refuseStaysLocked: the holder neither listens nor lets go.
	refuseStaysLocked
)

// holdDecision is decideHold's answer.
type holdDecision struct {
	action holdAction
	reason holdReason // holdRefuse
	// lastTry (holdConnect): the wait ran out, so a failed connect is the
	// command's error.
	lastTry bool
	// waitForRun (holdWait): the holder is another self-contained run;
	// wait for it to finish, without a deadline. announce: this is the
	// first such look, so tell the user once.
	waitForRun, announce bool
}

// decideHold decides, from one look at the data directory, whether the
// command starts the embedded server, connects to the holder, waits, or
// refuses.
func decideHold(f holdFacts) holdDecision {
	if f.lockFree {
		if f.noEmbed {
			return holdDecision{action: holdRefuse, reason: refuseNoServe}
		}
		return holdDecision{action: holdEmbed}
	}
	expired := f.expired && !f.waitingForRun
	if f.info != nil && f.alive {
		// Another process holds the directory and listens.
		switch {
		case f.exclusive:
			return holdDecision{action: holdRefuse, reason: refuseServed}
		case f.info.Kind != "serve" && f.noEmbed:
			return holdDecision{action: holdRefuse, reason: refuseSelfContained}
		case f.info.Kind != "serve" && f.isRun:
			// Its server (and engine) stop when its run is final, so a
			// second run waits for the directory rather than lean on it.
			return holdDecision{action: holdWait, waitForRun: true, announce: !f.waitingForRun}
		}
		return holdDecision{action: holdConnect, lastTry: expired}
	}
	switch {
	case f.noEmbed && expired:
		return holdDecision{action: holdRefuse, reason: refuseNotListening}
	case expired:
		return holdDecision{action: holdRefuse, reason: refuseStaysLocked}
	}
	return holdDecision{action: holdWait}
}
