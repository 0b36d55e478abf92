package events

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/switchyard-dev/switchyard/policy"
)

// Credentials are an embedded server's per-start secrets: one per role.
// The server accepts a connection only as a role's user with that role's
// secret, and grants it the role's permissions (RolePermissions).
//
// The secrets reach other processes only through a file the owner alone
// can read (WriteCredentials: 0600, in the 0700 data directory), never on
// a command line, in an environment variable or in a log.
type Credentials struct {
	secrets map[Role]string
}

// credentialsVersion is the file format's version.
const credentialsVersion = 1

// credentialsFile is the file's JSON.
type credentialsFile struct {
	Version int             `json:"version"`
	Secrets map[Role]string `json:"secrets"`
}

// NewCredentials draws a fresh 256-bit secret for every role.
func NewCredentials() (*Credentials, error) {
	c := &Credentials{secrets: map[Role]string{}}
	for _, r := range Roles {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("credentials: %w", err)
		}
		c.secrets[r] = base64.RawURLEncoding.EncodeToString(b[:])
	}
	return c, nil
}

// MaxCredentialsBytes bounds a credentials file.
const MaxCredentialsBytes = 4096

// WriteCredentials writes c to path, readable by the owner only. It
// replaces any earlier file atomically (a client never reads half a file),
// and refuses a path whose directory others can enter.
func WriteCredentials(path string, c *Credentials) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	if err := CheckPrivateDir(dir, "data directory"); err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("credentials: directory %s is open to other users (mode %04o); make it private with chmod 700 %s", dir, st.Mode().Perm(), dir)
	}
	data, err := json.Marshal(credentialsFile{Version: credentialsVersion, Secrets: c.secrets})
	if err != nil {
		return err
	}
	if err := WritePrivateFile(path, data); err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	return nil
}

// WritePrivateFile replaces path with data atomically (a temporary file in
// the same directory, fsynced, renamed over it), readable by the owner
// only: a reader never sees half a file or a wider mode.
func WritePrivateFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".private-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// ErrNoCredentials: the credentials file does not exist.
var ErrNoCredentials = errors.New("no credentials file")

// ReadCredentials reads a file WriteCredentials wrote. It refuses a file
// another user could read or write, or one that is not exactly the format;
// its errors never contain a secret.
func ReadCredentials(path string) (*Credentials, error) {
	f, err := OpenOwnedFile(path, "credentials file", "data directory")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("credentials %s: %w", path, ErrNoCredentials)
	}
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("credentials %s: mode %v is open to other users; it must be a regular file of mode 0600 (the server that wrote it is compromised or the file was replaced)", path, st.Mode())
	}
	if st.Size() > MaxCredentialsBytes {
		return nil, fmt.Errorf("credentials %s: %d bytes, more than %d", path, st.Size(), MaxCredentialsBytes)
	}
	var cf credentialsFile
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cf); err != nil {
		return nil, fmt.Errorf("credentials %s: not a Switchyard credentials file", path)
	}
	if cf.Version != credentialsVersion {
		return nil, fmt.Errorf("credentials %s: version %d, want %d", path, cf.Version, credentialsVersion)
	}
	for _, r := range Roles {
		if len(cf.Secrets[r]) < 32 {
			return nil, fmt.Errorf("credentials %s: no valid secret for role %s", path, r)
		}
	}
	if len(cf.Secrets) != len(Roles) {
		return nil, fmt.Errorf("credentials %s: unknown role in file", path)
	}
	return &Credentials{secrets: cf.Secrets}, nil
}

// ClientOptions are the options of a connection as role r with c.
func (c *Credentials) ClientOptions(r Role) []nats.Option {
	return append([]nats.Option{nats.UserInfo(roleUser(r), c.secrets[r])}, connIdentity(r)...)
}

// connIdentity gives one connection its own identity: a fresh user nkey
// pair, whose signature of the server's nonce proves the connection holds
// it, and the inbox prefix its public key names (ConnInboxPrefix). The
// seed never leaves this process. Should the system's random source
// fail, the connection gets none and the server refuses it.
func connIdentity(r Role) []nats.Option {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return nil
	}
	return []nats.Option{nats.Nkey(pub, kp.Sign), nats.CustomInboxPrefix(ConnInboxPrefix(r, pub))}
}

// FileClientOptions connect as role r with the secret in the credentials
// file at path, read again at every (re)connect: a server restarted with
// fresh secrets is reached without restarting the client. A file that
// cannot be read gives an empty secret, which the server refuses.
//
// A refused reconnect is tried again like any other: nats.go would
// otherwise close the connection for good at the second identical
// authorization error, and a client that read the file just before a
// restarted serve replaced it is refused until its next read.
func FileClientOptions(path string, r Role) []nats.Option {
	return append([]nats.Option{
		nats.IgnoreAuthErrorAbort(),
		nats.UserInfoHandler(func() (string, string) {
			c, err := ReadCredentials(path)
			if err != nil {
				return roleUser(r), ""
			}
			return roleUser(r), c.secrets[r]
		}),
	}, connIdentity(r)...)
}

// authenticator is the embedded server's client authentication: a role's
// user and secret, compared in constant time, and the connection's own
// nkey (its signature of the nonce), whose public key names the only
// inbox prefix the connection may use; a refused connection is logged
// once per peer host.
type authenticator struct {
	creds   *Credentials
	refused func(peer string)
	// workers, when set, are the only worker identities accepted.
	workers *WorkerIdentities

	mu   sync.Mutex
	seen map[string]time.Time
}

func newAuthenticator(c *Credentials, refused func(peer string)) (*authenticator, error) {
	return &authenticator{creds: c, refused: refused, seen: map[string]time.Time{}}, nil
}

// serverPermissions converts p for the server.
func serverPermissions(p Permissions) *server.Permissions {
	sp := &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: p.PublishAllow, Deny: p.PublishDeny},
		Subscribe: &server.SubjectPermission{Allow: p.SubscribeAllow, Deny: p.SubscribeDeny},
	}
	if p.Responses {
		sp.Response = &server.ResponsePermission{MaxMsgs: 1, Expires: time.Minute}
	}
	return sp
}

// Check implements server.Authentication.
func (a *authenticator) Check(c server.ClientAuthentication) bool {
	o := c.GetOpts()
	for _, r := range Roles {
		if o.Username != roleUser(r) {
			continue
		}
		if subtle.ConstantTimeCompare([]byte(o.Password), []byte(a.creds.secrets[r])) != 1 {
			break
		}
		// A connection with its own nkey gets its own inbox prefix; one
		// without (a --nats client with the role's user and password)
		// shares the role's, with the other such connections only.
		inbox := InboxPrefix(r)
		if o.Nkey != "" || o.Sig != "" {
			if !provesNkey(o.Nkey, o.Sig, c.GetNonce()) {
				break
			}
			inbox = ConnInboxPrefix(r, o.Nkey)
		}
		var providers []policy.Provider // nil: every provider
		if r == RoleWorker && a.workers != nil {
			// Only a provisioned worker, proven by its own key.
			if o.Nkey == "" || !a.workers.Known(o.Nkey) {
				break
			}
			providers = a.workers.Providers(o.Nkey)
		}
		p, err := rolePermissionsFor(r, inbox, providers)
		if err != nil {
			break
		}
		c.RegisterUser(&server.User{Username: o.Username, Permissions: serverPermissions(p)})
		return true
	}
	a.refuse(c.RemoteAddress())
	return false
}

// provesNkey reports whether sig is pub's signature of nonce, pub a user
// public key.
func provesNkey(pub, sig string, nonce []byte) bool {
	if len(nonce) == 0 || !nkeys.IsValidPublicUserKey(pub) {
		return false
	}
	kp, err := nkeys.FromPublicKey(pub)
	if err != nil {
		return false
	}
	raw, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		if raw, err = base64.StdEncoding.DecodeString(sig); err != nil {
			return false
		}
	}
	return kp.Verify(nonce, raw) == nil
}

// refuse reports a refused peer host once an hour at most.
func (a *authenticator) refuse(addr net.Addr) {
	peer := "in-process"
	if addr != nil {
		peer = addr.String()
	}
	host := peer
	if h, _, err := net.SplitHostPort(peer); err == nil {
		host = h
	}
	a.mu.Lock()
	last, ok := a.seen[host]
	now := time.Now()
	report := !ok || now.Sub(last) > time.Hour
	if report {
		a.seen[host] = now
	}
	a.mu.Unlock()
	if report && a.refused != nil {
		a.refused(peer)
	}
}
