package events

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"sync/atomic"
)

// A data directory's serve.json names the process serving it. A bare pid
// proves nothing: after that process dies the kernel may give its pid to
// any other process, another user's included, which may listen on the
// same port and collect the credentials clients present. So a holder is
// live only when all three agree: the pid runs, it is the same process
// (its start identity is the one recorded), and it holds the socket
// listening on the recorded address, owned by this user.

// SelfStart is this process's start identity, to record beside its pid
// ("" when the platform gives none; a reader then refuses the record).
// A live answer cannot change while the process runs, so it is read once
// (the runner stamps it on every attempt's progress snapshots, and
// reading it costs a /proc read here and a ps process elsewhere); a
// failed read is tried again next time.
func SelfStart() string {
	if tok := selfStart.Load(); tok != nil {
		return *tok
	}
	tok, st := ProcessStart(os.Getpid())
	if st != ProcLive {
		return ""
	}
	selfStart.Store(&tok)
	return tok
}

// selfStart holds SelfStart's live answer once it has one.
var selfStart atomic.Pointer[string]

// CheckServer reports why the process a serve.json names (pid, its
// recorded start identity start, its client URL) is not the live server
// of this user it claims to be, or nil when it is. Where the platform
// cannot tell a socket's owner (no /proc), pid and start identity decide.
func CheckServer(pid int, start, clientURL string) error {
	if pid <= 0 {
		return fmt.Errorf("no pid recorded")
	}
	if start == "" {
		return fmt.Errorf("pid %d has no recorded start identity (written by an older switchyard, or not by switchyard), so it cannot be told from a reused pid", pid)
	}
	tok, st := ProcessStart(pid)
	switch {
	case st == ProcAbsent:
		return fmt.Errorf("pid %d has exited", pid)
	case st == ProcUnverified:
		return fmt.Errorf("pid %d: its start identity cannot be read, so it cannot be told from a reused pid", pid)
	case tok != start:
		return fmt.Errorf("pid %d is another process now (the recorded one exited and its pid was reused)", pid)
	}
	u, err := url.Parse(clientURL)
	if err != nil || u.Host == "" {
		return fmt.Errorf("pid %d: bad url %q", pid, clientURL)
	}
	_, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return fmt.Errorf("pid %d: bad url %q", pid, clientURL)
	}
	return checkListener(pid, port)
}
