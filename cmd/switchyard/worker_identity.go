package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/internal/engineconn"
	"github.com/switchyard-dev/switchyard/policy"
)

// Worker identities (issue 25) on the command line: `switchyard worker
// identity` provisions one (a user nkey: its seed for the worker, its
// public key and providers in the worker identities file), `serve` reads
// that file and `worker --identity-seed` connects as the identity. The
// mechanism is events/workerid.go; the connection side is
// internal/engineconn/workers.go.

// workersFileName is the data directory's worker identities file.
const workersFileName = engineconn.WorkersFileName

// workerIdentitiesFlag is serve's and `worker identity`'s
// --worker-identities.
const workerIdentitiesFlag = "worker-identities"

// addWorkerIdentitiesFlag declares --worker-identities FILE on c.
func addWorkerIdentitiesFlag(c *cobra.Command, path *string, usage string) {
	c.Flags().StringVar(path, workerIdentitiesFlag, "", usage)
}

// serveWorkerIdentities is what serve found of the deployment's worker
// identities.
type serveWorkerIdentities struct {
	// path is the file read or looked for.
	path string
	// workers are its identities; nil when there is no file.
	workers *events.WorkerIdentities
	// external: serve --nats, where only the engine's proxy applies them.
	external bool
}

// loadServeWorkerIdentities reads --worker-identities FILE (which must
// exist), else the data directory's workers.json when there is one.
func loadServeWorkerIdentities(f engineFlags, flagPath string) (serveWorkerIdentities, error) {
	required := flagPath != ""
	path := flagPath
	if !required {
		dir, err := locateDataDir(f.dataDir)
		if err != nil {
			return serveWorkerIdentities{}, usagef("%v", err)
		}
		path = engineconn.WorkersFile(dir)
	} else if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	w, err := engineconn.LoadWorkerIdentities(path, required)
	if err != nil {
		return serveWorkerIdentities{}, connError(err)
	}
	return serveWorkerIdentities{path: path, workers: w, external: f.nats != ""}, nil
}

// describe is serve's start-up line about worker identities.
func (s serveWorkerIdentities) describe() string {
	if s.workers == nil {
		return fmt.Sprintf("no worker identities (%s): every worker with the role's secret serves every provider", s.path)
	}
	others := "other worker connections are refused"
	if s.external {
		others = "other worker connections get nothing but reads"
	}
	return fmt.Sprintf("%s from %s: each worker serves only its listed providers; %s",
		countIdentities(len(s.workers.Identities())), s.path, others)
}

// workerIdentity is a worker's --identity-seed, checked.
type workerIdentity struct {
	seed string // "": none, the role's secret alone
	key  string
}

// addIdentitySeedFlag declares worker's --identity-seed FILE.
func addIdentitySeedFlag(c *cobra.Command, seed *string) {
	c.Flags().StringVar(seed, "identity-seed", "", "this worker's identity: the nkey seed `FILE` `switchyard worker identity` wrote (mode 0600); without it the worker connects with the role's secret alone")
}

// checkWorkerIdentity checks --identity-seed: a seed only this user can
// read and, when the data directory's worker identities file says so
// (no --nats), an identity listed there for every --provider.
func checkWorkerIdentity(f engineFlags, seed string, provs []policy.Provider) (workerIdentity, error) {
	if seed == "" {
		return workerIdentity{}, nil
	}
	if abs, err := filepath.Abs(seed); err == nil {
		seed = abs
	}
	key, err := engineconn.WorkerKey(seed)
	if err != nil {
		return workerIdentity{}, connError(err)
	}
	id := workerIdentity{seed: seed, key: key}
	if f.nats != "" {
		return id, nil // the deployment's engine holds the list
	}
	dir, err := locateDataDir(f.dataDir)
	if err != nil {
		return id, nil // the connection reports it
	}
	path := engineconn.WorkersFile(dir)
	w, err := events.ReadWorkerIdentities(path)
	if err != nil {
		// No file: a serve without identities takes the key as this
		// connection's own. A bad one: the serve refuses to start.
		return id, nil
	}
	if !w.Known(key) {
		return id, usagef("--identity-seed %s: its identity %s is not listed in %s, so the serve refuses it; provision this worker with `switchyard worker identity --provider %s%s` and pass the seed it writes",
			seed, key, path, joinProviders(provs), dataDirFlag(dir))
	}
	var not []string
	for _, p := range provs {
		if !w.Serves(key, p) {
			not = append(not, string(p))
		}
	}
	if len(not) > 0 {
		return id, usagef("--provider %s: the identity of --identity-seed %s (%s) serves only %s (%s), so the serve would refuse this worker %s's jobs; drop them from --provider, or provision an identity for them with `switchyard worker identity --provider %s%s`",
			strings.Join(not, ","), seed, key, joinProviders(w.Providers(key)), path, strings.Join(not, ","), strings.Join(not, ","), dataDirFlag(dir))
	}
	return id, nil
}

// describe is the worker's start-up line about its identity.
func (id workerIdentity) describe() string {
	if id.seed == "" {
		return "no worker identity (--identity-seed): connected with the worker role's secret alone"
	}
	return fmt.Sprintf("worker identity %s (seed %s): its reply subjects are its own, and a serve with worker identities lets it serve only the providers listed for it", id.key, id.seed)
}

// workerIdentityResult is `worker identity --json`.
type workerIdentityResult struct {
	Key              string            `json:"key"`
	Providers        []policy.Provider `json:"providers"`
	SeedFile         string            `json:"seedFile"`
	WorkerIdentities string            `json:"workerIdentities"`
	Workers          int               `json:"workers"`
}

// newWorkerIdentityCmd builds `switchyard worker identity`.
func newWorkerIdentityCmd(stdout, stderr io.Writer) *cobra.Command {
	var providerList, seedFile, registry, dataDir string
	var asJSON bool
	c := &cobra.Command{
		Use:   "identity --provider P[,P...] [--seed-file FILE] [--worker-identities FILE] [--data-dir D] [--json]",
		Short: "Provision a worker identity: its own key, serving only the given providers",
		Long: `Draw a new worker identity (a NATS user nkey) that serves only the given
providers: write its seed to --seed-file (mode 0600; the worker's alone,
default <data-dir>/worker-<providers>.seed) and add its public key and
providers to the worker identities file (--worker-identities, default
<data-dir>/` + workersFileName + `, created if missing, mode 0600). An existing seed
file is never replaced.

switchyard serve reads the worker identities file at start. With one, its
server admits only worker connections that prove a listed key, and the
engine lets each worker take and acknowledge only its own providers' jobs
and put only their capacity reports; with --nats (a deployment's
servers) a worker connection whose key is not listed gets nothing but
reads. Without the file every worker holding the role's secret serves
every provider. So after provisioning: restart serve (it reads the file
at start), then start each worker with its seed:
switchyard worker --provider P --identity-seed FILE.

The file is JSON: {"version": 1, "workers": [{"key": "U...", "providers":
["codex"]}]}; serve refuses a file with anything else in it, one another
user could write, or a symbolic link. To revoke a worker, remove its entry
and restart serve.

--json prints the new identity: key, providers, seedFile,
workerIdentities (the file) and workers (how many it lists now). The seed
itself is never printed.

Exit codes: 0 provisioned; 64 usage error (an unknown --provider, a seed
file that exists, a worker identities file that is not valid); 1 anything
else (a file could not be written).`,
		Example: `  # A worker for codex and grok beside the default data directory's serve:
  switchyard worker identity --provider codex,grok
  # then restart switchyard serve and start the worker with the seed:
  switchyard worker --provider codex,grok --identity-seed ~/.local/state/switchyard/worker-codex-grok.seed

  # A second claude worker, its seed where that worker's user keeps it:
  switchyard worker identity --provider claude --seed-file ~/.config/switchyard/claude-2.seed

  # For a deployment (serve --nats ... --worker-identities FILE), as JSON:
  switchyard worker identity --provider codex --worker-identities /etc/switchyard/workers.json \
    --seed-file ./codex-1.seed --json`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlags(cmd, "provider"); err != nil {
				return err
			}
			provs, err := parseProviders(providerList)
			if err != nil {
				return err
			}
			for _, p := range provs {
				if !slices.Contains(events.CapacityProviders, p) {
					return usagef("--provider %s: not a provider a worker identity can serve", p)
				}
			}
			res, err := issueWorkerIdentity(dataDir, registry, seedFile, provs)
			if err != nil {
				return err
			}
			if asJSON {
				return writeDoc(stdout, res)
			}
			printWorkerIdentity(stdout, res, dataDir)
			return nil
		},
	}
	c.Flags().StringVar(&providerList, "provider", "", "comma-separated providers the worker serves: "+strings.Join(providerNames(), ", "))
	c.Flags().StringVar(&seedFile, "seed-file", "", "where to write the new identity's nkey seed (mode 0600; default <data-dir>/worker-<providers>.seed); never replaced")
	addWorkerIdentitiesFlag(c, &registry, "the worker identities `FILE` to add the identity to (default <data-dir>/"+workersFileName+"; created if missing)")
	c.Flags().StringVar(&dataDir, "data-dir", "", dataDirHelp)
	c.Flags().BoolVar(&asJSON, "json", false, "print the new identity as JSON (never the seed)")
	return wireCommand(c, stderr)
}

// issueWorkerIdentity provisions an identity for provs (defaults: the data
// directory's workers.json and worker-<providers>.seed).
func issueWorkerIdentity(dataDir, registry, seedFile string, provs []policy.Provider) (workerIdentityResult, error) {
	var dir string
	if registry == "" || seedFile == "" {
		var err error
		if dir, err = resolveDataDir(dataDir); err != nil {
			return workerIdentityResult{}, usagef("%v", err)
		}
	}
	if registry == "" {
		registry = engineconn.WorkersFile(dir)
	}
	if seedFile == "" {
		seedFile = filepath.Join(dir, "worker-"+strings.ReplaceAll(joinProviders(provs), ",", "-")+".seed")
	}
	registry, _ = filepath.Abs(registry)
	seedFile, _ = filepath.Abs(seedFile)
	// The file as serve will read it: a bad one is refused here too.
	if _, err := engineconn.LoadWorkerIdentities(registry, false); err != nil {
		return workerIdentityResult{}, connError(err)
	}
	key, err := events.IssueWorkerIdentity(registry, seedFile, provs)
	switch {
	case errors.Is(err, fs.ErrExist):
		return workerIdentityResult{}, usagef("--seed-file %s exists: it may be another worker's seed, so it is not replaced; pass another --seed-file (or remove it, and its identity from %s, if it is no longer used)", seedFile, registry)
	case errors.Is(err, fs.ErrNotExist):
		return workerIdentityResult{}, usagef("%v; create the directory first or pass a path in an existing one", err)
	case err != nil:
		return workerIdentityResult{}, failf("%v", err)
	}
	w, err := events.ReadWorkerIdentities(registry)
	if err != nil {
		return workerIdentityResult{}, failf("%v", err)
	}
	return workerIdentityResult{Key: key, Providers: provs, SeedFile: seedFile, WorkerIdentities: registry, Workers: len(w.Identities())}, nil
}

// printWorkerIdentity prints a new identity and what to do next.
func printWorkerIdentity(w io.Writer, r workerIdentityResult, dataDir string) {
	flags, serveFlags := "", ""
	if dir, err := locateDataDir(dataDir); err == nil {
		flags = dataDirFlag(dir)
		if r.WorkerIdentities != engineconn.WorkersFile(dir) {
			serveFlags = " --" + workerIdentitiesFlag + " " + shellQuote(r.WorkerIdentities)
		}
	}
	fmt.Fprintf(w, "switchyard worker identity: %s serves %s\n", r.Key, joinProviders(r.Providers))
	fmt.Fprintf(w, "  seed: %s (mode 0600: keep it readable only by the worker's user; copy it to the worker's host if it runs elsewhere)\n", r.SeedFile)
	fmt.Fprintf(w, "  listed in %s (%s)\n", r.WorkerIdentities, countIdentities(r.Workers))
	fmt.Fprintln(w, "next:")
	fmt.Fprintf(w, "  1. restart the serve (`switchyard serve%s%s`): it reads %s at start, and from then on admits only the workers listed there\n", flags, serveFlags, r.WorkerIdentities)
	fmt.Fprintf(w, "  2. start the worker with its seed: switchyard worker --provider %s --identity-seed %s%s\n", joinProviders(r.Providers), shellQuote(r.SeedFile), flags)
}

// countIdentities is "1 worker identity", "2 worker identities".
func countIdentities(n int) string {
	if n == 1 {
		return "1 worker identity"
	}
	return fmt.Sprintf("%d worker identities", n)
}
