package engineconn

import (
	"errors"
	"net/url"
	"path/filepath"

	"github.com/nats-io/nats.go"

	"github.com/switchyard-dev/switchyard/events"
)

// AuthFileName is the credentials file a listening embedded server writes
// in its data directory (0600): this start's secret for every role.
const AuthFileName = "serve.auth"

// serveCredentials are the connection options for URLs that name the
// server of a switchyard serve of o's data directory (serve.json): its
// credentials file, as o's role. Anything else (a cluster, another
// server) gets none here: it takes its own credentials. The error is a
// worker identity seed that cannot be used.
func serveCredentials(o Options, urls []string) ([]nats.Option, error) {
	dir, err := LocateDataDir(o.DataDir)
	if err != nil {
		return nil, nil
	}
	info, err := ReadServeInfo(dir)
	if err != nil {
		return nil, nil
	}
	served, err := url.Parse(info.URL)
	if err != nil || served.Host == "" {
		return nil, nil
	}
	for _, u := range urls {
		if pu, err := url.Parse(u); err == nil && pu.Host == served.Host {
			authPath := filepath.Join(dir, AuthFileName)
			if o.WorkerSeed != "" {
				// A worker with its own identity: the role's secret
				// and the seed's key.
				return workerSeedOptions(authPath, o.WorkerSeed)
			}
			return events.FileClientOptions(authPath, o.Role), nil
		}
	}
	return nil, nil
}

// refused is the error of a connection whose login the server refused an
// operation the command needs (nc's last error a permissions violation),
// naming the role the command needs; nil otherwise.
func refused(nc *nats.Conn, o Options) error {
	le := nc.LastError()
	if le == nil || !errors.Is(le, nats.ErrPermissionViolation) {
		return nil
	}
	return deniedf("%s: permission denied: %v; this command needs the %s role's user (switchyard-%s in docs/DEPLOY.md), not the login given (%s)",
		o.Source, le, o.Role, o.Role, o.Auth.Method())
}
