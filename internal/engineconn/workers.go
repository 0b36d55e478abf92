package engineconn

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/nats-io/nats.go"

	"github.com/switchyard-dev/switchyard/events"
)

// Worker identities (events/workerid.go) on the command line's side: the
// engine reads the deployment's worker identities file and hands it to
// the embedded server it starts (which then admits only listed worker
// keys) and to its own JetStream connection (whose API proxy lets each
// worker serve only its providers); a worker given a seed connects as
// that identity.

// WorkersFileName is the data directory's worker identities file, which
// the data directory's embedded server honours when present.
const WorkersFileName = "workers.json"

// WorkersFile is dir's worker identities file.
func WorkersFile(dir string) string { return filepath.Join(dir, WorkersFileName) }

// LoadWorkerIdentities reads the worker identities file at path. A
// missing file is no identities (nil, nil) unless required; any other
// problem is a usage error naming the file and the fix.
func LoadWorkerIdentities(path string, required bool) (*events.WorkerIdentities, error) {
	w, err := events.ReadWorkerIdentities(path)
	switch {
	case err == nil:
		return w, nil
	case errors.Is(err, events.ErrNoWorkerIdentities) && !required:
		return nil, nil
	case errors.Is(err, events.ErrNoWorkerIdentities):
		return nil, usagef("worker identities file %s does not exist; provision a worker with `switchyard worker identity --provider P --worker-identities %s`, or drop --worker-identities", path, ShellQuote(path))
	}
	return nil, usagef("%v; fix or re-create the file (`switchyard worker identity --help` shows its format and how to provision workers), or move it away to serve without worker identities (then every worker with the role's secret serves every provider)", err)
}

// WorkerKey is the public key of the worker identity seed at path, which
// must be a user nkey seed only this user can read.
func WorkerKey(path string) (string, error) {
	key, err := events.WorkerSeedKey(path)
	if err != nil {
		return "", usagef("--identity-seed: %v", err)
	}
	return key, nil
}

// workerSeedOptions are the options of a worker connection as the
// identity whose seed is at seed, to a server that takes the role's
// secret from the credentials file at authPath (a serve's own server).
func workerSeedOptions(authPath, seed string) ([]nats.Option, error) {
	opts, err := events.WorkerIdentityOptions(authPath, seed)
	if err != nil {
		return nil, usagef("--identity-seed: %v", err)
	}
	return opts, nil
}

// externalSeedOptions are the options of a worker connection to a
// deployment's servers as the identity whose seed is at seed: the
// connection proves the seed's nkey (the deployment gives the worker a
// user of its own, `nkey: <its public key>`, docs/DEPLOY.md), and the
// key names the connection's reply subjects.
func externalSeedOptions(seed string) ([]nats.Option, error) {
	key, err := WorkerKey(seed)
	if err != nil {
		return nil, err
	}
	login, err := nats.NkeyOptionFromSeed(seed)
	if err != nil {
		return nil, usagef("--identity-seed %s: %v", seed, err)
	}
	return []nats.Option{login, nats.CustomInboxPrefix(events.ConnInboxPrefix(events.RoleWorker, key))}, nil
}

// seedLoginConflict is the error of a worker given both an identity seed
// and a login that carries an nkey of its own.
func seedLoginConflict(o Options) error {
	return usagef("--identity-seed carries this worker's nkey, and so does the %s login given for %s; pass only one: --identity-seed for a worker with its own nkey user (docs/DEPLOY.md), with a user and password or token beside it if the servers want one", o.Auth.Method(), o.Source)
}

// workerRefusal says why the serve of dir likely refused a worker
// connection with the identity seed at seed ("" for none), when its
// worker identities file explains it; "" when it does not.
func workerRefusal(dir, seed string) string {
	path := WorkersFile(dir)
	w, err := events.ReadWorkerIdentities(path)
	if err != nil {
		return ""
	}
	if seed == "" {
		return fmt.Sprintf("it admits only the worker identities listed in %s; pass this worker's seed with --identity-seed FILE (provision one with `switchyard worker identity --provider P%s`)", path, DataDirFlag(dir))
	}
	key, err := events.WorkerSeedKey(seed)
	if err != nil {
		return ""
	}
	if !w.Known(key) {
		return fmt.Sprintf("the identity of --identity-seed %s (%s) is not listed in %s; provision this worker with `switchyard worker identity --provider P%s` and use the seed it writes", seed, key, path, DataDirFlag(dir))
	}
	return fmt.Sprintf("the identity of --identity-seed %s (%s) is listed in %s, but the serve started before it was (restart the serve to admit it), or it was just restarted (try again)", seed, key, path)
}
