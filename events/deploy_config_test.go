package events_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/testdata/golden"
)

// deployConfigPath is the ready nats-server configuration docs/DEPLOY.md
// describes.
const deployConfigPath = "../docs/deploy/nats-server.conf"

// deployTLSDir is where the configuration expects its PEM files.
const deployTLSDir = "/etc/nats/tls/"

// renderDeployConfig renders the configuration of one node of a three-node
// JetStream cluster with TLS on clients and routes, and one user per role
// with exactly RolePermissions, in one account.
func renderDeployConfig(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`# Switchyard: one node of a three-node NATS JetStream cluster with TLS on
# clients and routes, and one user per Switchyard role (docs/DEPLOY.md).
#
# Generated from events.RolePermissions by TestDeployConfig; do not edit
# the permissions by hand (go test ./events -run TestDeployConfig -update
# rewrites this file, and the test fails when it drifts from the code).
#
# Every node runs this same file with its own environment:
#   SY_NODE_NAME        this node's name: n1, n2 or n3 (unique)
#   SY_<ROLE>_PASSWORD  each role user's password (or a bcrypt hash from
#                       "nats server passwd"), the same on every node
#   SY_SYS_PASSWORD     the system user's, for "nats server" reports
# The TLS files are the node's certificate (valid for its host name, with
# both server and client authentication: routes dial both ways), its key,
# and the CA that signed every node's and client's certificate.

server_name: $SY_NODE_NAME
listen: 0.0.0.0:4222
http: 127.0.0.1:8222

# Limits no connection may push the server past (the embedded server's).
max_connections: ` + fmt.Sprint(events.ServerMaxConnections) + `
max_payload: ` + fmt.Sprint(events.ServerMaxPayload) + `
max_pending: ` + fmt.Sprint(events.ServerMaxPending) + `
max_subscriptions: ` + fmt.Sprint(events.ServerMaxSubscriptions) + `

jetstream {
  store_dir: /var/lib/nats
  max_file_store: 64GB
  max_memory_store: 1GB
}

tls {
  cert_file: "` + deployTLSDir + `server.pem"
  key_file: "` + deployTLSDir + `server-key.pem"
  ca_file: "` + deployTLSDir + `ca.pem"
  timeout: 5
}

cluster {
  name: switchyard
  listen: 0.0.0.0:6222
  tls {
    cert_file: "` + deployTLSDir + `server.pem"
    key_file: "` + deployTLSDir + `server-key.pem"
    ca_file: "` + deployTLSDir + `ca.pem"
    timeout: 5
  }
  routes: [
    nats-route://n1.switchyard.internal:6222
    nats-route://n2.switchyard.internal:6222
    nats-route://n3.switchyard.internal:6222
  ]
}

accounts {
  SWITCHYARD {
    jetstream: enabled
    users: [
`)
	for _, r := range slices.Backward(events.Roles) {
		p, err := events.RolePermissions(r)
		require.NoError(t, err)
		fmt.Fprintf(&b, "      # %s\n", roleComment(r))
		fmt.Fprintf(&b, "      {\n        user: switchyard-%s\n        password: $SY_%s_PASSWORD\n        permissions: {\n", r, strings.ToUpper(string(r)))
		writeSubjects(&b, "publish", p.PublishAllow, p.PublishDeny)
		writeSubjects(&b, "subscribe", p.SubscribeAllow, p.SubscribeDeny)
		if p.Responses {
			b.WriteString("          allow_responses: { max: 1, expires: \"1m\" }\n")
		}
		b.WriteString("        }\n      }\n")
	}
	b.WriteString(`    ]
  }
  SYS {
    users: [ { user: system, password: $SY_SYS_PASSWORD } ]
  }
}
system_account: SYS
`)
	return b.String()
}

func roleComment(r events.Role) string {
	switch r {
	case events.RoleEngine:
		return "engine: switchyard serve --nats (creates the streams; the only writer of events and jobs)"
	case events.RoleParent:
		return "parent: run, cancel, inspect, operation done, recover, native, prune, usage"
	case events.RoleWorker:
		return "worker: switchyard worker (jobs of its providers, reports, presence, claims)"
	}
	return "reader: status, history, replay, report, doctor"
}

func writeSubjects(b *strings.Builder, what string, allow, deny []string) {
	fmt.Fprintf(b, "          %s: {\n", what)
	list := func(name string, subjects []string) {
		if len(subjects) == 0 {
			return
		}
		fmt.Fprintf(b, "            %s: [\n", name)
		for _, s := range subjects {
			fmt.Fprintf(b, "              %q\n", s)
		}
		b.WriteString("            ]\n")
	}
	list("allow", allow)
	list("deny", deny)
	b.WriteString("          }\n")
}

// TestDeployConfig: docs/deploy/nats-server.conf is exactly what
// RolePermissions renders, and the real nats-server parser reads it (with
// its TLS files present and its variables set) into one user per role in
// the SWITCHYARD account whose permissions are RolePermissions', a
// three-route cluster with TLS on clients and routes, and JetStream.
func TestDeployConfig(t *testing.T) {
	conf := renderDeployConfig(t)
	golden.Check(t, deployConfigPath, conf)

	// Parse a copy whose TLS paths point at a CA generated here.
	pki := eventstest.NewPKI(t)
	dir := t.TempDir()
	for name, src := range map[string]string{"server.pem": pki.CertFile, "server-key.pem": pki.KeyFile, "ca.pem": pki.CAFile} {
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o600))
	}
	onDisk, err := os.ReadFile(deployConfigPath)
	require.NoError(t, err)
	path := filepath.Join(dir, "nats-server.conf")
	require.NoError(t, os.WriteFile(path, []byte(strings.ReplaceAll(string(onDisk), deployTLSDir, dir+"/")), 0o600))
	t.Setenv("SY_NODE_NAME", "n1")
	for _, r := range append(slices.Clone(events.Roles), "sys") {
		t.Setenv("SY_"+strings.ToUpper(string(r))+"_PASSWORD", "pw-"+string(r))
	}
	opts, err := server.ProcessConfigFile(path)
	require.NoError(t, err, "nats-server parses the configuration")

	require.Equal(t, "n1", opts.ServerName)
	require.True(t, opts.JetStream)
	require.NotNil(t, opts.TLSConfig, "clients need TLS")
	require.NotNil(t, opts.Cluster.TLSConfig, "routes need TLS")
	require.Equal(t, "switchyard", opts.Cluster.Name)
	require.Len(t, opts.Routes, 3)
	require.Equal(t, "SYS", opts.SystemAccount)
	require.Equal(t, events.ServerMaxConnections, opts.MaxConn, "max_connections")
	require.EqualValues(t, events.ServerMaxPayload, opts.MaxPayload, "max_payload")
	require.EqualValues(t, events.ServerMaxPending, opts.MaxPending, "max_pending")
	require.EqualValues(t, events.ServerMaxSubscriptions, opts.MaxSubs, "max_subscriptions")

	users := map[string]*server.User{}
	for _, u := range opts.Users {
		users[u.Username] = u
	}
	for _, r := range events.Roles {
		u := users["switchyard-"+string(r)]
		require.NotNil(t, u, "a user for role %s", r)
		require.Equal(t, "SWITCHYARD", u.Account.Name, r)
		require.Equal(t, "pw-"+string(r), u.Password, "the password comes from SY_%s_PASSWORD", strings.ToUpper(string(r)))
		want, err := events.RolePermissions(r)
		require.NoError(t, err)
		got := u.Permissions
		require.NotNil(t, got, r)
		require.Equal(t, norm(want.PublishAllow), norm(got.Publish.Allow), "%s publish allow", r)
		require.Equal(t, norm(want.PublishDeny), norm(got.Publish.Deny), "%s publish deny", r)
		require.Equal(t, norm(want.SubscribeAllow), norm(got.Subscribe.Allow), "%s subscribe allow", r)
		if got.Subscribe != nil {
			require.Equal(t, norm(want.SubscribeDeny), norm(got.Subscribe.Deny), "%s subscribe deny", r)
		}
		if want.Responses {
			require.NotNil(t, got.Response, "%s answers requests", r)
			require.Equal(t, 1, got.Response.MaxMsgs, r)
			require.Equal(t, time.Minute, got.Response.Expires, r)
		} else {
			require.Nil(t, got.Response, "%s answers no requests", r)
		}
	}
	require.Len(t, users, len(events.Roles)+1, "the role users and the system user, nothing else")
}

// norm makes nil and empty lists equal.
func norm(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
