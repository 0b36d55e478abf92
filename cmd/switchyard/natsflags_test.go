package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
)

// natsCmd is a command with the engine flags, parsed from args.
func natsCmd(t *testing.T, name string, args ...string) (*cobra.Command, *engineFlags) {
	t.Helper()
	var f engineFlags
	c := &cobra.Command{Use: name}
	(&cobra.Command{Use: "switchyard"}).AddCommand(c)
	addEngineFlags(c, &f, false)
	require.NoError(t, c.Flags().Parse(args))
	return c, &f
}

// TestNATSFlagsResolve: where the servers and the login come from (the
// command line over the context over the environment), the role's inbox
// prefix, and that the password and token leave the environment once read
// (a worker's provider CLIs inherit it). Not parallel: it sets the
// process's environment.
func TestNATSFlagsResolve(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	require.NoError(t, os.MkdirAll(filepath.Join(cfg, "nats", "context"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(cfg, "nats", "context", "prod.json"),
		[]byte(`{"url":"tls://ctx:4222","user":"ctx-user","password":"ctx-pw"}`), 0o600))

	t.Setenv("NATS_URL", "nats://env:4222")
	t.Setenv("NATS_USER", "env-user")
	t.Setenv("NATS_PASSWORD", "env-pw")
	c, f := natsCmd(t, "worker")
	require.NoError(t, f.validate(c))
	require.Equal(t, "nats://env:4222", f.nats, "NATS_URL is --nats's default")
	require.Equal(t, "env-user", f.natsAuth.auth.User)
	require.Equal(t, "env-pw", f.natsAuth.auth.Password)
	require.Equal(t, events.InboxPrefix(events.RoleWorker), f.natsAuth.auth.InboxPrefix)
	_, set := os.LookupEnv("NATS_PASSWORD")
	require.False(t, set, "the password left the environment")
	require.Equal(t, "", (&engineConn{}).connFlags(*f), "NATS_URL reaches it from any shell: nothing to print")

	t.Setenv("NATS_PASSWORD", "env-pw")
	c, f = natsCmd(t, "status", "--context", "prod")
	require.NoError(t, f.validate(c))
	require.Equal(t, "tls://ctx:4222", f.nats, "the context's url beats NATS_URL")
	require.Equal(t, "ctx-user", f.natsAuth.auth.User, "the context's login beats the environment's")
	require.Equal(t, events.InboxPrefix(events.RoleReader), f.natsAuth.auth.InboxPrefix)
	require.Equal(t, " --context prod", (&engineConn{}).connFlags(*f))

	t.Setenv("NATS_TOKEN", "env-token")
	ca := eventstest.NewPKI(t).CAFile
	c, f = natsCmd(t, "serve", "--context", "prod", "--nats", "nats://u:flag-pw@flag:4222", "--tls-ca", ca)
	require.NoError(t, f.validate(c))
	require.Equal(t, "nats://u:flag-pw@flag:4222", f.nats, "--nats beats the context")
	require.Equal(t, ca, f.natsAuth.auth.TLSCA)
	require.Equal(t, " --context prod --nats nats://REDACTED@flag:4222 --tls-ca "+ca, (&engineConn{}).connFlags(*f), "no password is printed")
	_, set = os.LookupEnv("NATS_TOKEN")
	require.False(t, set, "the token left the environment")
}

// TestRedactURLs: user info never survives, whatever the URL's shape.
func TestRedactURLs(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"nats://a:4222,tls://b:4222":           "nats://a:4222,tls://b:4222",
		"nats://user:s3cret@a:4222":            "nats://REDACTED@a:4222",
		"tls://tok3n@a:4222, nats://b:4222":    "tls://REDACTED@a:4222, nats://b:4222",
		"user:s3cret@a:4222":                   "REDACTED@a:4222",
		"nats://us%zz:s3cret@a:4222":           "REDACTED@a:4222",
		"nats://a:4222,nats://x:s3cret@b:4222": "nats://a:4222,nats://REDACTED@b:4222",
	} {
		require.Equal(t, want, events.RedactURLs(in), in)
	}
}
