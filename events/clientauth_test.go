package events_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/nkeys"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
)

// Sentinels: values that must never appear in an error.
const (
	sentinelPassword = "SENTINEL-password-7f3a"
	sentinelToken    = "SENTINEL-token-91c2"
	sentinelContent  = "SENTINEL-file-content-4d5e"
)

// noSecret fails when err is nil or its message holds a sentinel or seed.
func noSecret(t *testing.T, err error, secrets ...string) {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, events.ErrInvalid)
	for _, s := range append(secrets, sentinelPassword, sentinelToken, sentinelContent) {
		require.NotContains(t, err.Error(), s)
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// userSeed returns a fresh user nkey seed and its public key.
func userSeed(t *testing.T) (seed, pub string) {
	t.Helper()
	kp, err := nkeys.CreateUser()
	require.NoError(t, err)
	s, err := kp.Seed()
	require.NoError(t, err)
	p, err := kp.PublicKey()
	require.NoError(t, err)
	return string(s), p
}

// TestClientAuthErrorsNameTheSourceNeverTheSecret: every invalid
// combination or file is an ErrInvalid error that names where the value
// came from (the flag, variable or context field) and the fix, and never
// contains a password, a token, a seed or any file's content.
func TestClientAuthErrorsNameTheSourceNeverTheSecret(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seed, pub := userSeed(t)
	garbage := writeFile(t, dir, "garbage", "not a key "+sentinelContent+"\n")
	pubOnly := writeFile(t, dir, "pub.nk", pub+"\n")
	seedFile := writeFile(t, dir, "user.nk", seed+"\n")
	// A creds file whose JWT block is missing but whose seed is there.
	seedOnlyCreds := writeFile(t, dir, "seed-only.creds", "-----BEGIN USER NKEY SEED-----\n"+seed+"\n------END USER NKEY SEED------\n")
	pki := eventstest.NewPKI(t)
	names := events.ClientAuthNames{CredsFile: "--creds", NKeyFile: "--nkey", User: "NATS_USER", Password: "NATS_PASSWORD",
		Token: "NATS_TOKEN", TLSCA: "--tls-ca", TLSCert: "--tls-cert", TLSKey: "--tls-key"}
	for _, tc := range []struct {
		name string
		auth events.ClientAuth
		want []string
	}{
		{"password and token", events.ClientAuth{User: "u", Password: sentinelPassword, Token: sentinelToken}, []string{"NATS_USER/NATS_PASSWORD and NATS_TOKEN", "exactly one"}},
		{"creds and nkey", events.ClientAuth{CredsFile: garbage, NKeyFile: seedFile}, []string{"--creds and --nkey"}},
		{"nkey and token", events.ClientAuth{NKeyFile: seedFile, Token: sentinelToken}, []string{"--nkey and NATS_TOKEN"}},
		{"user without password", events.ClientAuth{User: "u"}, []string{"NATS_USER is set but NATS_PASSWORD is empty"}},
		{"password without user", events.ClientAuth{Password: sentinelPassword}, []string{"NATS_PASSWORD is set but NATS_USER is empty"}},
		{"missing creds file", events.ClientAuth{CredsFile: filepath.Join(dir, "nope.creds")}, []string{"--creds", "nope.creds does not exist"}},
		{"creds file of garbage", events.ClientAuth{CredsFile: garbage}, []string{"--creds " + garbage + " holds no user JWT", "nsc generate creds"}},
		{"creds file without JWT", events.ClientAuth{CredsFile: seedOnlyCreds}, []string{"holds no user JWT"}},
		{"nkey file of garbage", events.ClientAuth{NKeyFile: garbage}, []string{"--nkey " + garbage + " holds no user nkey seed"}},
		{"nkey file of a public key", events.ClientAuth{NKeyFile: pubOnly}, []string{"not the public key"}},
		{"nkey file is a directory", events.ClientAuth{NKeyFile: dir}, []string{"--nkey", "not a regular file"}},
		{"CA of garbage", events.ClientAuth{TLSCA: garbage}, []string{"--tls-ca " + garbage + " holds no PEM certificate"}},
		{"cert without key", events.ClientAuth{TLSCert: pki.CertFile}, []string{"--tls-cert and --tls-key go together"}},
		{"key without cert", events.ClientAuth{TLSKey: pki.KeyFile}, []string{"--tls-cert and --tls-key go together"}},
		{"cert with the wrong key", events.ClientAuth{TLSCert: pki.CertFile, TLSKey: garbage}, []string{"not a matching PEM certificate and private key"}},
		{"cert with a foreign key", events.ClientAuth{TLSCert: pki.CertFile, TLSKey: seedFile}, []string{"not a matching"}},
		{"wildcard inbox prefix", events.ClientAuth{InboxPrefix: "_INBOX.>"}, []string{"inbox prefix"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.auth
			a.Names = names
			err := a.Validate()
			noSecret(t, err, seed)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
			_, err = a.Options()
			noSecret(t, err, seed)
		})
	}
	t.Run("default names", func(t *testing.T) {
		err := events.ClientAuth{CredsFile: garbage}.Validate()
		noSecret(t, err)
		require.Contains(t, err.Error(), "creds file "+garbage)
	})
	t.Run("oversize file", func(t *testing.T) {
		big := filepath.Join(dir, "big")
		require.NoError(t, os.WriteFile(big, make([]byte, events.MaxAuthFileBytes+1), 0o600))
		err := events.ClientAuth{TLSCA: big}.Validate()
		noSecret(t, err)
		require.Contains(t, err.Error(), "larger than")
	})
}

// TestClientAuthValid: each single way to log in, with or without TLS
// files, gives options (one for the login, one for TLS, one for the inbox
// prefix) and names its method.
func TestClientAuthValid(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seed, _ := userSeed(t)
	seedFile := writeFile(t, dir, "user.nk", seed+"\n")
	creds := writeFile(t, dir, "user.creds", "-----BEGIN NATS USER JWT-----\neyJhbGciOiJlZDI1NTE5In0.eyJzdWIiOiJVIn0.c2ln\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n"+seed+"\n------END USER NKEY SEED------\n")
	pki := eventstest.NewPKI(t)
	cert, key := pki.Issue(t, "client", false)
	for _, tc := range []struct {
		auth   events.ClientAuth
		method string
		nopts  int
	}{
		{events.ClientAuth{}, "none", 0},
		{events.ClientAuth{CredsFile: creds}, "creds file", 1},
		{events.ClientAuth{NKeyFile: seedFile}, "nkey", 1},
		{events.ClientAuth{User: "u", Password: sentinelPassword}, "user and password", 1},
		{events.ClientAuth{Token: sentinelToken}, "token", 1},
		{events.ClientAuth{Token: sentinelToken, TLSCA: pki.CAFile}, "token", 2},
		{events.ClientAuth{NKeyFile: seedFile, TLSCA: pki.CAFile, TLSCert: cert, TLSKey: key, InboxPrefix: events.InboxPrefix(events.RoleWorker)}, "nkey", 3},
		{events.ClientAuth{TLSCA: pki.CAFile, TLSFirst: true}, "none", 2},
	} {
		opts, err := tc.auth.Options()
		require.NoError(t, err, tc.method)
		require.Len(t, opts, tc.nopts, tc.method)
		require.Equal(t, tc.method, tc.auth.Method())
	}
	require.True(t, events.ClientAuth{}.IsZero())
	require.False(t, events.ClientAuth{TLSFirst: true}.IsZero())
	require.True(t, events.ClientAuth{TLSCA: "x"}.HasTLS())
	require.False(t, events.ClientAuth{Token: "x"}.HasTLS())
}

// TestNATSContext: a context file of the nats CLI (every field written,
// most empty) is read from $XDG_CONFIG_HOME/nats/context/NAME.json: its
// url, login and TLS files (~ expanded, file:// accepted); fields that
// would change the connection and that Switchyard does not implement are
// refused when set, naming the field, never its value.
func TestNATSContext(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	home := t.TempDir()
	t.Setenv("HOME", home)
	ctxDir := filepath.Join(cfg, "nats", "context")
	require.NoError(t, os.MkdirAll(ctxDir, 0o700))
	dir, err := events.NATSContextDir()
	require.NoError(t, err)
	require.Equal(t, ctxDir, dir)

	seed, _ := userSeed(t)
	writeFile(t, home, "user.nk", seed+"\n")
	pki := eventstest.NewPKI(t)
	write := func(name, body string) { writeFile(t, ctxDir, name+".json", body) }

	write("prod", `{"description":"production","url":"tls://n1:4222,tls://n2:4222","token":"","user":"","password":"",
		"creds":"","nkey":"~/user.nk","cert":"","key":"","ca":"file-not-uri-`+"x"+`","nsc":"","jetstream_domain":"",
		"jetstream_api_prefix":"","jetstream_event_prefix":"","inbox_prefix":"_INBOX_worker","user_jwt":"",
		"color_scheme":"nord","tls_first":false,"windows_cert_store":"","socks_proxy":""}`)
	_, err = events.LoadNATSContext("prod")
	noSecret(t, err, seed)
	require.Contains(t, err.Error(), "context prod field ca file-not-uri-x does not exist")

	write("prod", `{"description":"production","url":"tls://n1:4222,tls://n2:4222","nkey":"~/user.nk","ca":"`+pki.CAFile+`",
		"inbox_prefix":"_INBOX_worker","nsc":"","color_scheme":"nord","tls_first":false,"some_future_field":""}`)
	c, err := events.LoadNATSContext("prod")
	require.NoError(t, err)
	require.Equal(t, "tls://n1:4222,tls://n2:4222", c.URL)
	require.Equal(t, "production", c.Description)
	require.Equal(t, filepath.Join(ctxDir, "prod.json"), c.Path)
	require.Equal(t, filepath.Join(home, "user.nk"), c.Auth.NKeyFile)
	require.Equal(t, pki.CAFile, c.Auth.TLSCA)
	require.Equal(t, "_INBOX_worker", c.Auth.InboxPrefix)
	require.Equal(t, "--context prod field nkey", c.Auth.Names.NKeyFile)
	opts, err := c.Auth.Options()
	require.NoError(t, err)
	require.Len(t, opts, 3)

	write("uri", `{"creds":"file://`+filepath.Join(home, "user.nk")+`"}`)
	_, err = events.LoadNATSContext("uri")
	noSecret(t, err, seed)
	require.Contains(t, err.Error(), "context uri field creds "+filepath.Join(home, "user.nk")+" holds no user JWT", "a file:// URI is a path")

	write("up", `{"user":"ops","password":"`+sentinelPassword+`"}`)
	c, err = events.LoadNATSContext("up")
	require.NoError(t, err)
	require.Equal(t, "user and password", c.Auth.Method())

	for _, tc := range []struct{ name, body, want string }{
		{"nsc", `{"nsc":"nsc://op/acct/` + sentinelContent + `"}`, `sets "nsc", which Switchyard does not support; resolve it to a .creds file`},
		{"jwt", `{"user_jwt":"` + sentinelToken + `"}`, `sets "user_jwt"`},
		{"domain", `{"jetstream_domain":"hub"}`, `sets "jetstream_domain"`},
		{"unknown", `{"url":"nats://a:4222","surprise":"` + sentinelContent + `"}`, `unknown field "surprise"`},
		{"opuri", `{"creds":"op://vault/item/` + sentinelContent + `"}`, `context opuri field creds uses the "op" scheme`},
		{"envuri", `{"nkey":"env://` + sentinelContent + `"}`, `uses the "env" scheme`},
		{"twologins", `{"user":"u","password":"` + sentinelPassword + `","token":"` + sentinelToken + `"}`, "--context twologins field user/--context twologins field password and --context twologins field token"},
		{"badjson", `{"password":"` + sentinelPassword + `",`, "is not a JSON object"},
		{"wrongtype", `{"url":42,"password":"` + sentinelPassword + `"}`, `field "url" has the wrong type`},
		{"array", `["` + sentinelContent + `"]`, "is not a JSON object"},
	} {
		write(tc.name, tc.body)
		_, err := events.LoadNATSContext(tc.name)
		noSecret(t, err)
		require.Contains(t, err.Error(), tc.want, tc.name)
		require.Contains(t, err.Error(), "--context "+tc.name, "names the flag")
	}

	_, err = events.LoadNATSContext("absent")
	noSecret(t, err)
	require.Contains(t, err.Error(), "no context file "+filepath.Join(ctxDir, "absent.json"))
	require.Contains(t, err.Error(), "nats context save absent")
	for _, bad := range []string{"", "../prod", "a/b", ".hidden"} {
		_, err = events.LoadNATSContext(bad)
		noSecret(t, err)
		require.Contains(t, err.Error(), "is not a context name")
	}

	// Without XDG_CONFIG_HOME: ~/.config/nats/context.
	t.Setenv("XDG_CONFIG_HOME", "")
	dir, err = events.NATSContextDir()
	require.NoError(t, err)
	require.Equal(t, filepath.Join(home, ".config", "nats", "context"), dir)
}
