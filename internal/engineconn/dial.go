package engineconn

import (
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// A client that found its server through the data directory (a worker, a
// waiting run, status --watch, any command served by a serve) must find it
// again when that serve is restarted, even on another port (serve --listen
// 127.0.0.1:0). So it never dials a URL frozen at start: every connection
// attempt, the first and every reconnect, re-reads serve.json and dials the
// address named there. With the client's reconnect wait (250ms, see
// events.Connect) a serve back on any address is found within one
// reconnect interval.

// dataDirDialer is a nats.CustomDialer that dials the current holder of a
// data directory, whatever address the client's server pool names.
type dataDirDialer struct {
	dir     string
	timeout time.Duration

	mu   sync.Mutex
	last ServeInfo // the holder last dialed successfully
}

// Dial ignores address: it dials the URL in dir/serve.json, when that
// names a live process.
func (d *dataDirDialer) Dial(network, _ string) (net.Conn, error) {
	info, err := ReadServeInfo(d.dir)
	if err != nil {
		return nil, fmt.Errorf("nothing serves %s: %v", d.dir, err)
	}
	if err := info.Live(); err != nil {
		return nil, fmt.Errorf("nothing serves %s: %s names a server that is not live: %v", d.dir, ServeInfoName, err)
	}
	u, err := url.Parse(info.URL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%s of %s: bad url %q", ServeInfoName, d.dir, info.URL)
	}
	c, err := net.DialTimeout(network, u.Host, d.timeout)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.last = info
	d.mu.Unlock()
	return c, nil
}

// holder is the serve.json of the process last dialed.
func (d *dataDirDialer) holder() ServeInfo {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.last
}

// LinkEvents reports a client connection's losses and recoveries, once
// each: lost when the connection to the server drops, back when it is
// re-established (to whichever address serve.json names by then).
type LinkEvents struct {
	Lost func(err error)
	Back func()
}

// linkWatch tracks whether a connection is up, for the worker's logging
// (activities.WorkerConfig.Offline): while it is down, and for a short
// while after it came back (an operation begun during the outage may still
// fail then), failures are the known outage and not worth a warning each.
type linkWatch struct {
	mu       sync.Mutex
	down     bool
	upSince  time.Time
	settling time.Duration
}

func (l *linkWatch) setDown() {
	l.mu.Lock()
	l.down = true
	l.mu.Unlock()
}

func (l *linkWatch) setUp() {
	l.mu.Lock()
	l.down, l.upSince = false, time.Now()
	l.mu.Unlock()
}

// offline reports a connection that is down or just came back.
func (l *linkWatch) offline() bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.down || (!l.upSince.IsZero() && time.Since(l.upSince) < l.settling)
}

// linkOptions are the nats options that feed ev and watch.
func linkOptions(ev LinkEvents, watch *linkWatch) []nats.Option {
	return []nats.Option{
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			if nc.IsClosed() {
				return // our own Close at exit, not a loss
			}
			watch.setDown()
			if ev.Lost != nil {
				ev.Lost(err)
			}
		}),
		nats.ReconnectHandler(func(*nats.Conn) {
			watch.setUp()
			if ev.Back != nil {
				ev.Back()
			}
		}),
	}
}

// DataDirDialer is a nats.CustomDialer that dials the current holder of
// dir (serve.json) at every connection attempt, as Open's clients do.
func DataDirDialer(dir string, timeout time.Duration) nats.CustomDialer {
	return &dataDirDialer{dir: dir, timeout: timeout}
}
