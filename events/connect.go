package events

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// SplitURLs splits a --nats value ("nats://a:4222,nats://b:4222") into its
// URLs, trimming spaces and dropping empty entries.
func SplitURLs(s string) []string {
	var out []string
	for _, u := range strings.Split(s, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// Connect connects to an external NATS server or cluster. urls lists
// servers to try (any node of a cluster will do; listing all of them lets
// the client fail over). Defaults: reconnect forever every 250ms; opts are
// applied after them.
func Connect(urls []string, opts ...nats.Option) (*nats.Conn, error) {
	if len(urls) == 0 {
		return nil, errors.New("connect: no NATS URL given")
	}
	base := []nats.Option{nats.Name("switchyard"), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond)}
	nc, err := nats.Connect(strings.Join(urls, ","), append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", RedactURLs(strings.Join(urls, ",")), err)
	}
	return nc, nil
}

// RedactURLs hides the user info (user:password@ or token@) of every URL
// in a comma-separated list, for messages and logs.
func RedactURLs(s string) string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		parts[i] = redactURL(p)
	}
	return strings.Join(parts, ",")
}

func redactURL(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err == nil && u.User != nil {
		u.User = url.User("REDACTED")
		return u.String()
	}
	if at := strings.LastIndex(s, "@"); at >= 0 {
		// Unparsable, or a bare host:port with user info.
		return "REDACTED@" + s[at+1:]
	}
	return s
}
