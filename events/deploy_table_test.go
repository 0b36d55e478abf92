package events_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
)

// grantWords says, for each kind of subject a role may publish to or
// subscribe to, what docs/DEPLOY.md's role table must say that role may
// do (any one of the phrases). A subject of no kind here fails the test:
// every grant must be one the table states.
var grantWords = []struct {
	match   func(subject string, r events.Role) bool
	phrases []string
}{
	// The proxied JetStream API: reads, and what the proxy lets the role
	// write (jsapiproxy.go), which the rest of the row names.
	{func(s string, r events.Role) bool { return s == events.APIProxyPrefix+events.InboxPrefix(r)+".>" }, []string{"read", "reports", "claims"}},
	{func(s string, r events.Role) bool { return s == events.InboxPrefix(r)+".>" }, []string{""}}, // its own replies
	{func(s string, _ events.Role) bool { return s == events.CommandSubjectPrefix+"*.*" }, []string{"worker commands", "read-only commands", "read everything"}},
	{func(s string, _ events.Role) bool {
		return strings.HasPrefix(s, "$JS.ACK."+events.JobsStream+".jobs_native_")
	}, []string{"its native jobs"}},
	{func(s string, _ events.Role) bool { return s == "$JS.ACK."+events.JobsStream+".*.>" }, []string{"its providers' jobs"}},
	{func(s string, _ events.Role) bool { return s == events.WorkerSubjectPrefix+"*" }, []string{"presence"}},
	{func(s string, _ events.Role) bool { return s == events.SubmitSubject }, []string{"submit runs"}},
	{func(s string, _ events.Role) bool { return s == events.CapacityRefreshSubjectPrefix+"*" }, []string{"capacity refreshes", "capacity"}},
	{func(s string, _ events.Role) bool { return s == events.EventSubjectPrefix+"*.*" }, []string{"follow events live"}},
}

// TestDeployTableGrants: the deployment guide's configuration grants no
// role more than the guide's role table says. Each role's subjects
// (RolePermissions, which TestDeployConfig shows the configuration
// equals) must each be something that role's row in docs/DEPLOY.md
// states, and the engine's row must say it may do everything.
func TestDeployTableGrants(t *testing.T) {
	doc, err := os.ReadFile("../docs/DEPLOY.md")
	require.NoError(t, err)
	rows := map[events.Role]string{}
	for line := range strings.SplitSeq(string(doc), "\n") {
		for _, r := range events.Roles {
			if strings.HasPrefix(line, "| "+string(r)+" (`switchyard-"+string(r)+"`)") {
				cells := strings.Split(line, "|")
				require.GreaterOrEqual(t, len(cells), 5, line)
				rows[r] = strings.TrimSpace(cells[3])
			}
		}
	}
	require.Len(t, rows, len(events.Roles), "one table row per role")
	require.True(t, strings.HasPrefix(rows[events.RoleEngine], "everything"), rows[events.RoleEngine])
	for _, r := range events.Roles {
		if r == events.RoleEngine {
			continue
		}
		p, err := events.RolePermissions(r)
		require.NoError(t, err)
		require.Empty(t, p.SubscribeDeny)
		for _, s := range append(append([]string(nil), p.PublishAllow...), p.SubscribeAllow...) {
			found := false
			for _, g := range grantWords {
				if !g.match(s, r) {
					continue
				}
				for _, ph := range g.phrases {
					if strings.Contains(rows[r], ph) {
						found = true
					}
				}
			}
			require.True(t, found, "role %s may use %s, which its row in docs/DEPLOY.md does not state: %q", r, s, rows[r])
		}
		if p.Responses {
			require.Contains(t, rows[r], "answer", "role %s answers requests", r)
		}
	}
}
