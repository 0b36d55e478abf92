package console

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// Limits bound what one HTTP listener gives its clients, so that a local
// process (another user can reach a loopback port too) cannot hold the
// console by opening connections and leaving them idle or half-sent.
type Limits struct {
	// MaxConns is the most connections served at once; a further one
	// waits in the kernel's accept queue until one closes. Default 64.
	MaxConns int
	// ReadHeaderTimeout bounds reading a request's headers. Default 10 s.
	ReadHeaderTimeout time.Duration
	// BodyTimeout bounds reading a request's body (an answer form).
	// Default 30 s.
	BodyTimeout time.Duration
	// IdleTimeout closes a kept-alive connection with no request for
	// this long. Default 60 s.
	IdleTimeout time.Duration
	// WriteTimeout bounds each write of a response: a whole plain answer,
	// and each event (or keep-alive) of a stream, so a client that stops
	// reading frees its connection. Default 30 s.
	WriteTimeout time.Duration
}

// DefaultLimits are the console's and the worker's --http limits.
var DefaultLimits = Limits{MaxConns: 64, ReadHeaderTimeout: 10 * time.Second, BodyTimeout: 30 * time.Second,
	IdleTimeout: 60 * time.Second, WriteTimeout: 30 * time.Second}

// maxHeaderBytes caps a request's headers.
const maxHeaderBytes = 16 << 10

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxConns > 0 {
		d.MaxConns = l.MaxConns
	}
	if l.ReadHeaderTimeout > 0 {
		d.ReadHeaderTimeout = l.ReadHeaderTimeout
	}
	if l.BodyTimeout > 0 {
		d.BodyTimeout = l.BodyTimeout
	}
	if l.IdleTimeout > 0 {
		d.IdleTimeout = l.IdleTimeout
	}
	if l.WriteTimeout > 0 {
		d.WriteTimeout = l.WriteTimeout
	}
	return d
}

// Serve serves handler on ln within the limits (zero fields take the
// defaults) until the returned server is closed: at most MaxConns
// connections at once, headers within ReadHeaderTimeout, a body within
// BodyTimeout, each response write within WriteTimeout, idle connections
// closed after IdleTimeout. Streams stay open as long as their client
// reads them. base is every request's parent context.
func (l Limits) Serve(ln net.Listener, handler http.Handler, base context.Context) (*http.Server, <-chan error) {
	l = l.withDefaults()
	srv := &http.Server{
		Handler:           l.deadlines(handler),
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(LimitListener(ln, l.MaxConns)) }()
	return srv, done
}

// deadlines sets each request's body read deadline and first write
// deadline (no http.Server field does: ReadTimeout and WriteTimeout would
// also end the event streams). A stream moves its write deadline on with
// every event it sends (see streamWriter).
func (l Limits) deadlines(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
			_ = rc.SetReadDeadline(time.Now().Add(l.BodyTimeout))
		}
		_ = rc.SetWriteDeadline(time.Now().Add(l.WriteTimeout))
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), writeTimeoutKey{}, l.WriteTimeout)))
	})
}

// writeTimeoutKey carries Limits.WriteTimeout in a request's context.
type writeTimeoutKey struct{}

// extendWrite moves w's write deadline WriteTimeout past now (for the
// next event of a stream); nothing when the request came without Limits.
func extendWrite(w http.ResponseWriter, r *http.Request) {
	if d, ok := r.Context().Value(writeTimeoutKey{}).(time.Duration); ok {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(d))
	}
}

// LimitListener returns a listener that accepts at most n connections at
// once: Accept waits while n are open.
func LimitListener(ln net.Listener, n int) net.Listener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn gives its slot back once, when closed.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
