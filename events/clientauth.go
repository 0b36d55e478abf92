package events

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// ClientAuth is how a client proves who it is to an external NATS server
// or cluster and how it checks the server: at most one of a credentials
// file (JWT + nkey seed, as nsc writes it), an nkey seed file, a user and
// password, or a token; and TLS (a CA to trust, a client certificate and
// key). The zero value connects anonymously without TLS options (a tls://
// URL still gets TLS with the system's roots).
//
// Files are read again at every (re)connect, so rotated credentials are
// picked up without a restart. No error of this type contains a password,
// a token or any file's content: only file paths, the Names of where a
// value came from, and what to do.
type ClientAuth struct {
	// CredsFile is a .creds file: a user JWT and its nkey seed.
	CredsFile string
	// NKeyFile holds a user nkey seed (SU...).
	NKeyFile string
	// User and Password authenticate together.
	User, Password string
	// Token is a bearer token.
	Token string
	// TLSCA is a PEM file of the CAs that sign the servers' certificates;
	// empty: the system's roots.
	TLSCA string
	// TLSCert and TLSKey are the client's certificate and key (PEM), for
	// servers that verify clients; both or neither.
	TLSCert, TLSKey string
	// TLSFirst does the TLS handshake before the server's INFO (servers
	// configured with handshake_first).
	TLSFirst bool
	// InboxPrefix replaces "_INBOX" in reply subjects; a server that gives
	// each role its own inbox namespace (InboxPrefix) needs it.
	InboxPrefix string
	// Names say where each value came from ("--creds", "NATS_PASSWORD",
	// `context "prod" field "creds"`), for errors. Unset names default to
	// a plain description of the field.
	Names ClientAuthNames
}

// ClientAuthNames name the source of each ClientAuth field in messages.
type ClientAuthNames struct {
	CredsFile, NKeyFile, User, Password, Token, TLSCA, TLSCert, TLSKey string
}

// MaxAuthFileBytes bounds a credentials, nkey, certificate or CA file.
const MaxAuthFileBytes = 1 << 20

// IsZero reports whether a sets nothing.
func (a ClientAuth) IsZero() bool {
	return a.CredsFile == "" && a.NKeyFile == "" && a.User == "" && a.Password == "" && a.Token == "" &&
		a.TLSCA == "" && a.TLSCert == "" && a.TLSKey == "" && !a.TLSFirst && a.InboxPrefix == ""
}

// HasTLS reports whether a configures TLS (then the client requires it).
func (a ClientAuth) HasTLS() bool {
	return a.TLSCA != "" || a.TLSCert != "" || a.TLSKey != "" || a.TLSFirst
}

// Method names the authentication a uses, for messages: "creds file",
// "nkey", "user and password", "token" or "none".
func (a ClientAuth) Method() string {
	switch {
	case a.CredsFile != "":
		return "creds file"
	case a.NKeyFile != "":
		return "nkey"
	case a.User != "":
		return "user and password"
	case a.Token != "":
		return "token"
	}
	return "none"
}

func (a ClientAuth) name(set, def string) string {
	if set != "" {
		return set
	}
	return def
}

// Validate checks that a is consistent and that every file it names can
// be read and holds what it should, without connecting.
func (a ClientAuth) Validate() error {
	n := a.Names
	var methods []string
	if a.CredsFile != "" {
		methods = append(methods, a.name(n.CredsFile, "creds file"))
	}
	if a.NKeyFile != "" {
		methods = append(methods, a.name(n.NKeyFile, "nkey file"))
	}
	if a.User != "" || a.Password != "" {
		methods = append(methods, a.name(n.User, "user")+"/"+a.name(n.Password, "password"))
	}
	if a.Token != "" {
		methods = append(methods, a.name(n.Token, "token"))
	}
	if len(methods) > 1 {
		return authErrorf("NATS authentication: %s are given together; use exactly one way to log in", strings.Join(methods, " and "))
	}
	if a.User != "" && a.Password == "" {
		// The nats CLI would take a lone user for a token; a guess here
		// could send a user name where a secret is expected.
		return authErrorf("NATS authentication: %s is set but %s is empty; set both, or neither (a token alone goes in %s)",
			a.name(n.User, "user"), a.name(n.Password, "password"), a.name(n.Token, "the token"))
	}
	if a.User == "" && a.Password != "" {
		return authErrorf("NATS authentication: %s is set but %s is empty; set both, or neither", a.name(n.Password, "password"), a.name(n.User, "user"))
	}
	if (a.TLSCert == "") != (a.TLSKey == "") {
		return authErrorf("TLS: %s and %s go together; give both the client certificate and its key, or neither",
			a.name(n.TLSCert, "client certificate"), a.name(n.TLSKey, "client key"))
	}
	if a.InboxPrefix != "" && (strings.ContainsAny(a.InboxPrefix, "*> \t\r\n") || strings.HasSuffix(a.InboxPrefix, ".") || strings.HasPrefix(a.InboxPrefix, ".")) {
		return authErrorf("inbox prefix %q: want subject tokens without wildcards, e.g. _INBOX_reader", a.InboxPrefix)
	}
	if a.CredsFile != "" {
		if err := checkCredsFile(a.CredsFile, a.name(n.CredsFile, "creds file")); err != nil {
			return err
		}
	}
	if a.NKeyFile != "" {
		if err := checkNKeyFile(a.NKeyFile, a.name(n.NKeyFile, "nkey file")); err != nil {
			return err
		}
	}
	if _, err := a.tlsConfig(); err != nil {
		return err
	}
	return nil
}

// Options are the nats.Options that apply a (after Validate).
func (a ClientAuth) Options() ([]nats.Option, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	var opts []nats.Option
	switch {
	case a.CredsFile != "":
		opts = append(opts, nats.UserCredentials(a.CredsFile))
	case a.NKeyFile != "":
		o, err := nats.NkeyOptionFromSeed(a.NKeyFile)
		if err != nil {
			// Checked above; the file changed since.
			return nil, authErrorf("%s %s: not a user nkey seed file; pass the seed file nsc or `nk -gen user` wrote", a.name(a.Names.NKeyFile, "nkey file"), a.NKeyFile)
		}
		opts = append(opts, o)
	case a.User != "":
		opts = append(opts, nats.UserInfo(a.User, a.Password))
	case a.Token != "":
		opts = append(opts, nats.Token(a.Token))
	}
	tc, err := a.tlsConfig()
	if err != nil {
		return nil, err
	}
	if tc != nil {
		opts = append(opts, nats.Secure(tc))
	}
	if a.TLSFirst {
		opts = append(opts, nats.TLSHandshakeFirst())
	}
	if a.InboxPrefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(a.InboxPrefix))
	}
	return opts, nil
}

// tlsConfig builds the client TLS configuration, or nil when a sets no CA
// or client certificate.
func (a ClientAuth) tlsConfig() (*tls.Config, error) {
	if a.TLSCA == "" && a.TLSCert == "" {
		return nil, nil
	}
	n := a.Names
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if a.TLSCA != "" {
		name := a.name(n.TLSCA, "TLS CA file")
		pem, err := readAuthFile(a.TLSCA, name)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, authErrorf("%s %s holds no PEM certificate; pass the CA certificate (-----BEGIN CERTIFICATE-----) that signed the servers' certificates", name, a.TLSCA)
		}
		tc.RootCAs = pool
	}
	if a.TLSCert != "" {
		certName, keyName := a.name(n.TLSCert, "client certificate"), a.name(n.TLSKey, "client key")
		certPEM, err := readAuthFile(a.TLSCert, certName)
		if err != nil {
			return nil, err
		}
		keyPEM, err := readAuthFile(a.TLSKey, keyName)
		if err != nil {
			return nil, err
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		clear(keyPEM)
		if err != nil {
			return nil, authErrorf("%s %s and %s %s are not a matching PEM certificate and private key; pass the client certificate and the key it was issued for",
				certName, a.TLSCert, keyName, a.TLSKey)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// readAuthFile reads a small file, naming it (and never its content) in
// errors.
func readAuthFile(path, name string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, authErrorf("%s %s does not exist; check the path", name, path)
		}
		if errors.Is(err, os.ErrPermission) {
			return nil, authErrorf("%s %s cannot be read (permission denied); run as its owner or fix its mode", name, path)
		}
		return nil, authErrorf("%s %s: cannot open: %v", name, path, errors.Unwrap(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, authErrorf("%s %s: %v", name, path, errors.Unwrap(err))
	}
	if !st.Mode().IsRegular() {
		return nil, authErrorf("%s %s is not a regular file", name, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxAuthFileBytes+1))
	if err != nil {
		return nil, authErrorf("%s %s: read: %v", name, path, errors.Unwrap(err))
	}
	if len(b) > MaxAuthFileBytes {
		clear(b)
		return nil, authErrorf("%s %s is larger than %d bytes; it is not a credentials, key or certificate file", name, path, MaxAuthFileBytes)
	}
	return b, nil
}

// checkCredsFile checks that path holds a user JWT and a user nkey seed.
func checkCredsFile(path, name string) error {
	b, err := readAuthFile(path, name)
	if err != nil {
		return err
	}
	defer clear(b)
	if jwt, err := nkeys.ParseDecoratedJWT(b); err != nil || strings.Count(jwt, ".") != 2 {
		return authErrorf("%s %s holds no user JWT; pass the .creds file nsc generated (`nsc generate creds`)", name, path)
	}
	kp, err := nkeys.ParseDecoratedUserNKey(b)
	if err != nil {
		return authErrorf("%s %s holds no user nkey seed; pass the .creds file nsc generated (`nsc generate creds`)", name, path)
	}
	kp.Wipe()
	return nil
}

// checkNKeyFile checks that path holds a user nkey seed.
func checkNKeyFile(path, name string) error {
	b, err := readAuthFile(path, name)
	if err != nil {
		return err
	}
	defer clear(b)
	kp, err := nkeys.ParseDecoratedUserNKey(b)
	if err != nil {
		return authErrorf("%s %s holds no user nkey seed (SU...); pass the seed file `nk -gen user` or nsc wrote, not the public key", name, path)
	}
	kp.Wipe()
	return nil
}

// authError is a ClientAuth or NATS context error: its message names the
// source and the fix, and it matches ErrInvalid.
type authError struct{ msg string }

func (e *authError) Error() string        { return e.msg }
func (e *authError) Is(target error) bool { return target == ErrInvalid }

func authErrorf(format string, args ...any) error {
	return &authError{msg: fmt.Sprintf(format, args...)}
}
