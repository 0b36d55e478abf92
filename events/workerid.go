package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/switchyard-dev/switchyard/policy"
)

// Worker identities (issue 25, class 4).
//
// A worker's own identity is a user nkey: its seed stays with that worker,
// its public key names the worker's inbox prefix (ConnInboxPrefix), which
// the server lets only a connection proving the seed use (the embedded
// server checks the signature of its nonce; a deployment's nats-server
// gives the worker a user of its own, `nkey: <public key>`, allowed only
// that prefix). The deployment lists its workers' public keys and the
// providers each serves in a WorkerIdentities file the engine reads; with
// one, the engine's API proxy lets a worker connection pull and create
// only its own providers' job consumers and put only its own providers'
// capacity reports, and takes nothing but reads from a worker connection
// whose key is not listed. The engine binds claims and reports to the
// inbox prefix, and so to the key (engine/reports.go).
//
// Without a WorkerIdentities file every worker connection serves every
// provider, as the worker role's secret alone grants.

// WorkerIdentity is one provisioned worker: its nkey's public key and the
// providers it serves.
type WorkerIdentity struct {
	Key       string            `json:"key"`
	Providers []policy.Provider `json:"providers"`
}

// WorkerIdentities is a deployment's provisioned workers.
type WorkerIdentities struct {
	byKey map[string][]policy.Provider
}

// workerIdentitiesVersion is the file format's version.
const workerIdentitiesVersion = 1

type workerIdentitiesFile struct {
	Version int              `json:"version"`
	Workers []WorkerIdentity `json:"workers"`
}

// MaxWorkerIdentitiesBytes bounds a worker identities file.
const MaxWorkerIdentitiesBytes = 1 << 20

// NewWorkerIdentities validates ids: each key a user nkey's public key,
// listed once, with at least one known provider.
func NewWorkerIdentities(ids []WorkerIdentity) (*WorkerIdentities, error) {
	w := &WorkerIdentities{byKey: map[string][]policy.Provider{}}
	for _, id := range ids {
		if !nkeys.IsValidPublicUserKey(id.Key) {
			return nil, invalidf("worker identity %q: not a user nkey's public key", id.Key)
		}
		if _, dup := w.byKey[id.Key]; dup {
			return nil, invalidf("worker identity %s: listed twice", id.Key)
		}
		if len(id.Providers) == 0 {
			return nil, invalidf("worker identity %s: no providers", id.Key)
		}
		for _, p := range id.Providers {
			if !slices.Contains(CapacityProviders, p) {
				return nil, invalidf("worker identity %s: provider %q is not a known provider", id.Key, p)
			}
		}
		w.byKey[id.Key] = slices.Clone(id.Providers)
	}
	return w, nil
}

// Identities lists w, in no particular order.
func (w *WorkerIdentities) Identities() []WorkerIdentity {
	out := make([]WorkerIdentity, 0, len(w.byKey))
	for k, ps := range w.byKey {
		out = append(out, WorkerIdentity{Key: k, Providers: slices.Clone(ps)})
	}
	slices.SortFunc(out, func(a, b WorkerIdentity) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// Known reports whether key is a provisioned worker's.
func (w *WorkerIdentities) Known(key string) bool {
	_, ok := w.byKey[key]
	return ok
}

// Serves reports whether the worker whose key is key serves provider p.
func (w *WorkerIdentities) Serves(key string, p policy.Provider) bool {
	return slices.Contains(w.byKey[key], p)
}

// Providers is what the worker whose key is key serves (nil: not known).
func (w *WorkerIdentities) Providers(key string) []policy.Provider {
	return slices.Clone(w.byKey[key])
}

// workerKey is the nkey public key in a worker connection's inbox prefix
// (ConnInboxPrefix), or "" for another role's or a shared one.
func workerKey(inbox string) string {
	key, ok := strings.CutPrefix(inbox, InboxPrefix(RoleWorker)+"_")
	if !ok {
		return ""
	}
	return key
}

// WriteWorkerIdentities writes w to path, readable by the owner only.
func WriteWorkerIdentities(path string, w *WorkerIdentities) error {
	data, err := json.MarshalIndent(workerIdentitiesFile{Version: workerIdentitiesVersion, Workers: w.Identities()}, "", "  ")
	if err != nil {
		return err
	}
	if err := WritePrivateFile(path, append(data, '\n')); err != nil {
		return fmt.Errorf("worker identities: %w", err)
	}
	return nil
}

// ErrNoWorkerIdentities: the worker identities file does not exist.
var ErrNoWorkerIdentities = errors.New("no worker identities file")

// ReadWorkerIdentities reads a file WriteWorkerIdentities (or an
// operator) wrote. It refuses a file another user could write, and one
// that is not exactly the format: the file must be this user's own and
// writable by no one else, in a directory of this user or root that no
// one else may write, and not a symbolic link.
func ReadWorkerIdentities(path string) (*WorkerIdentities, error) {
	// Its directory: this user's or root's, writable by no one else (so
	// no other user could have put the file there or swap it).
	if err := CheckFileDir(filepath.Dir(path), "worker identities directory"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("worker identities: %w", err)
	}
	// O_NOFOLLOW: a symbolic link planted at path is refused, not read;
	// O_NONBLOCK: a FIFO there does not hang the open.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("worker identities %s: %w", path, ErrNoWorkerIdentities)
	}
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("worker identities: %w", &UnsafePathError{What: "worker identities file", Path: path, Problem: "is a symbolic link", Fix: "replace it with the file itself"})
	}
	if err != nil {
		return nil, fmt.Errorf("worker identities: %w", err)
	}
	defer f.Close()
	// This user's own regular file, writable by no one else.
	if err := CheckOwnedFile(f, path, "worker identities file"); err != nil {
		return nil, fmt.Errorf("worker identities: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("worker identities: %w", err)
	}
	if st.Size() > MaxWorkerIdentitiesBytes {
		return nil, fmt.Errorf("worker identities %s: %d bytes, more than %d", path, st.Size(), MaxWorkerIdentitiesBytes)
	}
	var wf workerIdentitiesFile
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&wf); err != nil {
		// The decoder's reason names the bad field or byte; the file
		// holds public keys and provider names only.
		return nil, fmt.Errorf("worker identities %s: not a Switchyard worker identities file (%v)", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("worker identities %s: not a Switchyard worker identities file (data after the JSON object)", path)
	}
	if wf.Version != workerIdentitiesVersion {
		return nil, fmt.Errorf("worker identities %s: version %d, want %d", path, wf.Version, workerIdentitiesVersion)
	}
	w, err := NewWorkerIdentities(wf.Workers)
	if err != nil {
		return nil, fmt.Errorf("worker identities %s: %w", path, err)
	}
	return w, nil
}

// IssueWorkerIdentity draws a new worker identity serving providers:
// writes its seed to seedPath (mode 0600; the worker's alone), adds its
// public key to the identities file at registryPath (created if absent)
// and returns the key.
//
// It never replaces a file at seedPath: that would orphan the identity
// whose seed it held, still listed in the identities file.
func IssueWorkerIdentity(registryPath, seedPath string, providers []policy.Provider) (string, error) {
	if _, err := os.Lstat(seedPath); err == nil {
		return "", fmt.Errorf("worker identity seed %s: %w", seedPath, fs.ErrExist)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("worker identity seed: %w", err)
	}
	w, err := ReadWorkerIdentities(registryPath)
	if errors.Is(err, ErrNoWorkerIdentities) {
		w, err = NewWorkerIdentities(nil)
	}
	if err != nil {
		return "", err
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return "", fmt.Errorf("worker identity: %w", err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return "", fmt.Errorf("worker identity: %w", err)
	}
	seed, err := kp.Seed()
	if err != nil {
		return "", fmt.Errorf("worker identity: %w", err)
	}
	next, err := NewWorkerIdentities(append(w.Identities(), WorkerIdentity{Key: pub, Providers: providers}))
	if err != nil {
		return "", err
	}
	if err := WritePrivateFile(seedPath, append(seed, '\n')); err != nil {
		return "", fmt.Errorf("worker identity seed: %w", err)
	}
	if err := WriteWorkerIdentities(registryPath, next); err != nil {
		// Unlisted, the seed is no one's: take it back.
		os.Remove(seedPath)
		return "", err
	}
	return pub, nil
}

// WorkerIdentityOptions connect as the worker whose nkey seed is in the
// file at seedPath, with the worker role's secret from the credentials
// file at credsPath (as FileClientOptions, read again at every
// reconnect): the connection's inbox prefix names the worker's key, which
// the server lets only a holder of the seed use.
func WorkerIdentityOptions(credsPath, seedPath string) ([]nats.Option, error) {
	kp, pub, err := readUserSeed(seedPath)
	if err != nil {
		return nil, err
	}
	opts := FileClientOptions(credsPath, RoleWorker)
	// FileClientOptions ends with a fresh connection identity; the
	// worker's own replaces it (later options win).
	return append(opts, nats.Nkey(pub, kp.Sign), nats.CustomInboxPrefix(ConnInboxPrefix(RoleWorker, pub))), nil
}

// WorkerSeedKey is the public key of the worker identity seed at path,
// after the checks WorkerIdentityOptions makes (a user nkey seed in a
// regular file only its owner can read). The seed never leaves it.
func WorkerSeedKey(path string) (string, error) {
	_, pub, err := readUserSeed(path)
	return pub, err
}

// readUserSeed reads a user nkey seed file the owner alone can read.
func readUserSeed(path string) (nkeys.KeyPair, string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, "", fmt.Errorf("worker identity seed: %w", err)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o077 != 0 {
		return nil, "", fmt.Errorf("worker identity seed %s: mode %v is open to other users; it must be a regular file of mode 0600", path, st.Mode())
	}
	if st.Size() > 4096 {
		return nil, "", fmt.Errorf("worker identity seed %s: too large", path)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("worker identity seed: %w", err)
	}
	kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(raw))))
	if err != nil {
		return nil, "", fmt.Errorf("worker identity seed %s: not an nkey seed", path)
	}
	pub, err := kp.PublicKey()
	if err != nil || !nkeys.IsValidPublicUserKey(pub) {
		return nil, "", fmt.Errorf("worker identity seed %s: not a user nkey seed", path)
	}
	return kp, pub, nil
}
