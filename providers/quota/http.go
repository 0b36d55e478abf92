package quota

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/switchyard-dev/switchyard/policy"
)

// maxBody caps what an HTTP source or a credential file may be: anything
// larger is not the documented shape and is refused unread.
const maxBody = 1 << 20

// userAgent identifies Switchyard to the usage endpoints.
const userAgent = "switchyard-quota"

// newHTTPClient is the default client of the HTTP sources: bounded, no
// redirects (a redirect is not the documented endpoint, and the bearer
// token must not follow it), no idle connections kept between the one or
// two calls of an acquisition.
func newHTTPClient(timeout time.Duration) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableKeepAlives = true
	return &http.Client{
		Timeout:   timeout,
		Transport: t,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// lookupEnv returns key's value in env (NAME=value entries; the last one
// wins, as for a process).
func lookupEnv(env []string, key string) (string, bool) {
	val, found := "", false
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			val, found = v, true
		}
	}
	return val, found
}

// testURL returns the test-only base-URL override named key from env. Only
// a loopback http(s) URL is accepted, so no environment can send a bearer
// token to another host; any other value is refused (ok false) and the
// acquisition fails closed.
func testURL(env []string, key, def string) (u string, ok bool) {
	v, set := lookupEnv(env, key)
	if !set || v == "" {
		return def, true
	}
	p, err := url.Parse(v)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.User != nil {
		return "", false
	}
	h := p.Hostname()
	if h == "localhost" {
		return strings.TrimRight(v, "/"), true
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return strings.TrimRight(v, "/"), true
	}
	return "", false
}

// readCapped reads a credential file of at most maxBody bytes. Every
// failure (absent, unreadable, not a regular file, too large) is reported
// as an error whose text is never shown to anyone.
func readCapped(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, maxBody+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxBody {
		return nil, errors.New("too large")
	}
	return b, nil
}

// request is one call of an HTTP source.
type request struct {
	Method string
	URL    string
	Token  string            // sent as Authorization: Bearer; never logged or returned
	Header map[string]string // extra headers
	Body   []byte            // a JSON body, or nil
}

// do performs one call and returns the body of a 200 answer, or the reason
// it failed: 401 token_expired, 403 token_lacks_scope, 429 throttled, any
// other status or a transport failure backend_error, the deadline timeout,
// a body over maxBody unparseable. Response bodies of failures are never
// read: they may echo account data.
func do(ctx context.Context, c *http.Client, r request) ([]byte, policy.CapacityReason) {
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, body)
	if err != nil {
		return nil, policy.CapacityReasonBackendError
	}
	req.Header.Set("Authorization", "Bearer "+r.Token)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	if r.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, transportReason(ctx, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
	case resp.StatusCode == http.StatusUnauthorized:
		return nil, policy.CapacityReasonTokenExpired
	case resp.StatusCode == http.StatusForbidden:
		return nil, policy.CapacityReasonTokenLacksScope
	case resp.StatusCode == http.StatusTooManyRequests:
		return nil, policy.CapacityReasonThrottled
	default:
		return nil, policy.CapacityReasonBackendError
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, transportReason(ctx, err)
	}
	if len(b) > maxBody {
		return nil, policy.CapacityReasonUnparseable
	}
	return b, ""
}

// transportReason classifies a failed exchange: the acquisition's deadline
// (or its caller's cancellation) is timeout, anything else backend_error.
func transportReason(ctx context.Context, err error) policy.CapacityReason {
	var ne net.Error
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return policy.CapacityReasonTimeout
	}
	return policy.CapacityReasonBackendError
}
