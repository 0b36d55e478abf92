package console_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine/console"
)

// limitedServer serves a small handler within l on a loopback port and
// returns its address. /slow-body reads the whole body and answers 200,
// or 408 when reading it failed.
func limitedServer(t *testing.T, l console.Limits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			w.WriteHeader(http.StatusRequestTimeout)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	srv, done := l.Serve(ln, h, context.Background())
	t.Cleanup(func() {
		require.NoError(t, srv.Close())
		require.ErrorIs(t, <-done, http.ErrServerClosed)
	})
	return ln.Addr().String()
}

// dialGet opens a connection and sends one keep-alive GET on it.
func dialGet(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost: console\r\n\r\n")
	require.NoError(t, err)
	return c, bufio.NewReader(c)
}

// readStatus reads one response's status code within limit.
func readStatus(c net.Conn, br *bufio.Reader, limit time.Duration) (int, error) {
	_ = c.SetReadDeadline(time.Now().Add(limit))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// TestLimitsCapConnections: with MaxConns 2, two open connections hold
// both slots; a third is accepted by the kernel but not served until one
// of the two closes, and then it is.
func TestLimitsCapConnections(t *testing.T) {
	addr := limitedServer(t, console.Limits{MaxConns: 2})
	a, abr := dialGet(t, addr)
	b, bbr := dialGet(t, addr)
	for _, c := range []struct {
		c  net.Conn
		br *bufio.Reader
	}{{a, abr}, {b, bbr}} {
		code, err := readStatus(c.c, c.br, waitTimeout)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code)
	}
	third, tbr := dialGet(t, addr)
	// Nothing to wait on for "not served": a second is many times what
	// serving it takes when a slot is free (the first two took less).
	_, err := readStatus(third, tbr, time.Second)
	require.ErrorIs(t, err, os.ErrDeadlineExceeded, "a third connection was served while two held the slots")
	require.NoError(t, a.Close())
	code, err := readStatus(third, tbr, waitTimeout)
	require.NoError(t, err, "the third connection is served once a slot frees")
	require.Equal(t, http.StatusOK, code)
}

// TestLimitsIdleTimeout: a kept-alive connection that sends nothing after
// its response is closed after IdleTimeout.
func TestLimitsIdleTimeout(t *testing.T) {
	addr := limitedServer(t, console.Limits{IdleTimeout: 300 * time.Millisecond})
	c, br := dialGet(t, addr)
	code, err := readStatus(c, br, waitTimeout)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	start := time.Now()
	_ = c.SetReadDeadline(time.Now().Add(waitTimeout))
	_, err = br.ReadByte()
	require.ErrorIs(t, err, io.EOF, "the server closes the idle connection")
	require.GreaterOrEqual(t, time.Since(start), 250*time.Millisecond, "closed before the idle timeout")
}

// TestLimitsHalfSentRequests: a connection that stops in the middle of
// its headers, or of its body, is cut after ReadHeaderTimeout or
// BodyTimeout instead of holding its slot.
func TestLimitsHalfSentRequests(t *testing.T) {
	addr := limitedServer(t, console.Limits{ReadHeaderTimeout: 300 * time.Millisecond, BodyTimeout: 300 * time.Millisecond})
	for _, tc := range []struct{ name, sent string }{
		{"headers", "GET / HTTP/1.1\r\nHost: console\r\n"},
		{"body", "POST / HTTP/1.1\r\nHost: console\r\nContent-Length: 100\r\n\r\nkind=cancel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			defer c.Close()
			start := time.Now()
			_, err = io.WriteString(c, tc.sent)
			require.NoError(t, err)
			_ = c.SetReadDeadline(time.Now().Add(waitTimeout))
			rest, err := io.ReadAll(c) // until the server closes it
			require.NoError(t, err, "the server did not close the connection: %q", rest)
			require.GreaterOrEqual(t, time.Since(start), 250*time.Millisecond)
			require.False(t, strings.HasPrefix(string(rest), "HTTP/1.1 200"), "a half-sent request was served: %q", rest)
			var ne net.Error
			require.False(t, errors.As(err, &ne))
		})
	}
}
