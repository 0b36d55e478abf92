package sandbox

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Denial is one request the egress proxy refused.
type Denial struct {
	Method string `json:"method"` // CONNECT, or the HTTP method of a plain forward
	Target string `json:"target"` // host:port as requested
	Reason string `json:"reason"`
}

// String renders a denial for a receipt ("CONNECT evil.example:443: not
// on the allowlist").
func (d Denial) String() string { return d.Method + " " + d.Target + ": " + d.Reason }

// Proxy is a loopback HTTP egress proxy: CONNECT tunnels and plain HTTP
// forwards reach only the host:port pairs on its allowlist; every other
// request gets 403 and is recorded as a Denial (and logged). The sandbox
// lets a contained process connect to nothing but this proxy's port.
type Proxy struct {
	ln    net.Listener
	srv   *http.Server
	allow []string
	log   *slog.Logger
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)

	mu      sync.Mutex
	denials []Denial
	open    map[net.Conn]struct{}
	closed  bool           // set by Close; no tunnel starts after it
	tunnels sync.WaitGroup // Add only under mu with closed false
}

// maxDenials bounds what a proxy keeps; later denials are still refused.
const maxDenials = 64

// StartProxy listens on 127.0.0.1 on a free port and serves allow (each
// "host:port", compared case-insensitively). log may be nil.
func StartProxy(allow []string, log *slog.Logger) (*Proxy, error) {
	for _, a := range allow {
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			return nil, fmt.Errorf("proxy allowlist entry %q is not host:port", a)
		}
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Proxy{ln: ln, log: log, allow: lower(allow), dial: (&net.Dialer{Timeout: 30 * time.Second}).DialContext}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	go p.srv.Serve(ln)
	return p, nil
}

func lower(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = strings.ToLower(s)
	}
	return out
}

// Addr is the proxy's host:port; Port its TCP port; URL its http:// URL.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }
func (p *Proxy) Port() uint16 { return uint16(p.ln.Addr().(*net.TCPAddr).Port) }
func (p *Proxy) URL() string  { return "http://" + p.Addr() }

// Env is the proxy variables a contained child gets: HTTP(S)_PROXY and
// ALL_PROXY in both cases, and an empty NO_PROXY so nothing bypasses it.
func (p *Proxy) Env() []string {
	u := p.URL()
	var out []string
	for _, n := range []string{"HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"} {
		out = append(out, n+"="+u, strings.ToLower(n)+"="+u)
	}
	return append(out, "NO_PROXY=", "no_proxy=")
}

// Denials returns the requests refused so far, oldest first.
func (p *Proxy) Denials() []Denial {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.denials)
}

// Close stops the proxy and its open tunnels, including one whose 200 a
// client has read: a tunnel is recorded before it is answered.
func (p *Proxy) Close() error {
	err := p.srv.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.open {
		c.Close()
	}
	p.mu.Unlock()
	p.tunnels.Wait()
	return err
}

func (p *Proxy) allowed(target string) bool {
	return slices.Contains(p.allow, strings.ToLower(target))
}

func (p *Proxy) deny(w http.ResponseWriter, method, target, reason string) {
	d := Denial{Method: method, Target: target, Reason: reason}
	p.mu.Lock()
	if len(p.denials) < maxDenials {
		p.denials = append(p.denials, d)
	}
	p.mu.Unlock()
	p.log.Warn("egress denied", "method", method, "target", target, "reason", reason)
	http.Error(w, "switchyard egress proxy: "+d.String(), http.StatusForbidden)
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if r.URL.Scheme != "http" || r.URL.Host == "" {
		p.deny(w, r.Method, r.Host, "not a proxy request (absolute http:// URL or CONNECT)")
		return
	}
	target := r.URL.Host
	if _, _, err := net.SplitHostPort(target); err != nil {
		target = net.JoinHostPort(r.URL.Hostname(), "80")
	}
	if !p.allowed(target) {
		p.deny(w, r.Method, target, "not on the provider's allowlist")
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Header.Del("Proxy-Authorization")
	out.Header.Del("Proxy-Connection")
	tr := &http.Transport{Proxy: nil, DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return p.dial(ctx, network, target)
	}}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(out)
	if err != nil {
		http.Error(w, "switchyard egress proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	target := r.Host
	if _, port, err := net.SplitHostPort(target); err != nil || port == "" {
		p.deny(w, r.Method, target, "CONNECT target is not host:port")
		return
	}
	if !p.allowed(target) {
		p.deny(w, r.Method, target, "not on the provider's allowlist")
		return
	}
	up, err := p.dial(r.Context(), "tcp", target)
	if err != nil {
		http.Error(w, "switchyard egress proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "switchyard egress proxy: no tunnel support", http.StatusInternalServerError)
		return
	}
	down, rw, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !p.track(up, down) {
		down.Close()
		up.Close()
		return
	}
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		down.Close()
		up.Close()
		p.untrack(up, down)
		p.tunnels.Add(-2)
		return
	}
	go func() {
		defer p.tunnels.Done()
		if n := rw.Reader.Buffered(); n > 0 {
			b, _ := rw.Reader.Peek(n)
			up.Write(b)
		}
		io.Copy(up, down)
		closeWrite(up)
	}()
	go func() {
		defer p.tunnels.Done()
		io.Copy(down, up)
		down.Close()
		up.Close()
		p.untrack(up, down)
	}()
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.CloseWrite()
		return
	}
	c.Close()
}

// track records a tunnel's connections so Close can end them, and counts
// the tunnel's two copiers in p.tunnels. It reports false, recording
// nothing, once Close has begun.
func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.tunnels.Add(2)
	if p.open == nil {
		p.open = map[net.Conn]struct{}{}
	}
	for _, c := range cs {
		p.open[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.open, c)
	}
}
