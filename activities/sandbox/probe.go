package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"time"
)

// ProbeKind is one thing the self-test tries inside the sandbox.
type ProbeKind string

const (
	// ProbeWrite creates (or truncates) Target and writes to it.
	ProbeWrite ProbeKind = "write"
	// ProbeConnect opens a TCP connection to Target (host:port).
	ProbeConnect ProbeKind = "connect"
	// ProbeConnectMPTCP opens a Multipath TCP connection to Target
	// (host:port): Landlock's TCP rules do not name MPTCP, so the sandbox
	// must refuse it another way.
	ProbeConnectMPTCP ProbeKind = "connect-mptcp"
	// ProbeProxyGet fetches http://Target/ through the proxy at Proxy
	// (a plain HTTP forward).
	ProbeProxyGet ProbeKind = "proxy-get"
	// ProbeProxyConnect opens a CONNECT tunnel to Target through the
	// proxy at Proxy and fetches / over it.
	ProbeProxyConnect ProbeKind = "proxy-connect"
)

// Probe is one attempt the sandboxed child makes.
type Probe struct {
	Kind   ProbeKind `json:"kind"`
	Target string    `json:"target"`
	Proxy  string    `json:"proxy,omitempty"`
}

// ProbeResult is what happened: Allowed when the write, connection or
// request succeeded; Refusal names who refused otherwise ("kernel" for
// EACCES/EPERM from the kernel, "proxy" for the proxy's 403, "" for any
// other failure, which the self-test counts as inconclusive).
type ProbeResult struct {
	Probe   Probe  `json:"probe"`
	Allowed bool   `json:"allowed"`
	Refusal string `json:"refusal,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

const probeTimeout = 10 * time.Second

func (p Probe) run() ProbeResult {
	r := ProbeResult{Probe: p}
	var err error
	switch p.Kind {
	case ProbeWrite:
		err = os.WriteFile(p.Target, []byte("probe\n"), 0o600)
	case ProbeConnect:
		var c net.Conn
		if c, err = net.DialTimeout("tcp", p.Target, probeTimeout); err == nil {
			c.Close()
		}
	case ProbeConnectMPTCP:
		d := net.Dialer{Timeout: probeTimeout}
		d.SetMultipathTCP(true)
		var c net.Conn
		if c, err = d.Dial("tcp", p.Target); err == nil {
			c.Close()
		}
	case ProbeProxyGet:
		err = proxyGet(p)
	case ProbeProxyConnect:
		err = proxyConnect(p)
	default:
		err = fmt.Errorf("unknown probe kind %q", p.Kind)
	}
	switch {
	case err == nil:
		r.Allowed = true
	case errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM):
		r.Refusal, r.Detail = "kernel", err.Error()
	case errors.Is(err, errProxyRefused):
		r.Refusal, r.Detail = "proxy", err.Error()
	default:
		r.Detail = err.Error()
	}
	return r
}

var errProxyRefused = errors.New("the proxy refused the request")

func proxyGet(p Probe) error {
	pu, err := url.Parse("http://" + p.Proxy)
	if err != nil {
		return err
	}
	c := &http.Client{Timeout: probeTimeout, Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
	resp, err := c.Get("http://" + p.Target + "/")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode == http.StatusForbidden {
		return fmt.Errorf("%w: %s", errProxyRefused, resp.Status)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %s", resp.Status)
	}
	return nil
}

func proxyConnect(p Probe) error {
	c, err := net.DialTimeout("tcp", p.Proxy, probeTimeout)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(probeTimeout))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", p.Target, p.Target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return err
	}
	if resp.StatusCode == http.StatusForbidden {
		return fmt.Errorf("%w: %s", errProxyRefused, resp.Status)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("CONNECT status %s", resp.Status)
	}
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", p.Target)
	got, err := http.ReadResponse(br, nil)
	if err != nil {
		return err
	}
	got.Body.Close()
	if got.StatusCode != http.StatusOK {
		return fmt.Errorf("status through the tunnel %s", got.Status)
	}
	return nil
}
