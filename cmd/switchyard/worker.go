package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/activities"
	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/events/metrics"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// defaultConcurrency is a worker's default bound on its concurrent
// executions per provider (the deployment's cap, serve --cap, bounds them
// across all workers).
const defaultConcurrency = activities.DefaultConcurrency

// newWorkerCmd builds `switchyard worker`.
func newWorkerCmd(stdout, stderr io.Writer) *cobra.Command {
	var f engineFlags
	var providerList string
	var concurrency int
	var quotaRefresh time.Duration
	var lf logFlags
	var bins []string
	var hf httpFlags
	var seed string
	c := &cobra.Command{
		Use:   "worker --provider P[,P...] [--identity-seed FILE] [--concurrency N] [--bin P=/path ...] [--quota-refresh D] [--http HOST:PORT] [--data-dir D | --nats URLS]",
		Short: "Execute attempts for some providers until stopped",
		Long: `Run provider CLI attempts from the job queues of the given providers, on this
host, until SIGINT or SIGTERM. All workers of one provider share one durable
consumer, so start as many as you like, anywhere the CLIs are installed and
signed in. Each execution is claimed with a lease before the CLI starts, so
an attempt whose process may have started never runs twice.

The worker needs a server that outlives it: the data directory's
"switchyard serve" (found through <data-dir>/serve.json), or --nats. It
does not create a data directory or store: with none there, or no serve
for it, it exits with an error saying what to start. Once connected it
rides out a serve restart: every reconnect re-reads serve.json, so a serve
that comes back on another port is found again; the loss and the
recovery are logged once each.

The worker also measures its providers' quota where their CLIs and logins
live: at start, every --quota-refresh (default 5m), whenever an engine or
"switchyard usage --refresh" asks, and right after an attempt ends
usage-exhausted. Each report goes to the deployment's capacity store,
which the engine's eligibility gate reads before every launch and
"switchyard usage" shows (see docs/CONCEPTS.md, "Knowing before launch").

--concurrency bounds how many attempts of each provider this worker runs
at once. How many run across the whole deployment is the provider's cap
(default 2, set with "switchyard serve --cap P=N"), enforced by the job
queue: a third worker adds no sessions beyond the cap, and the worker
never changes the cap. "switchyard status" shows the caps and the
sessions running.

Each provider's CLI is found as SWITCHYARD_<PROVIDER>_BIN says (an absolute
path to an executable, for pinned installs), else on PATH. --bin P=/path
(repeatable) sets that for this worker's attempts and quota measurements;
the path is checked at start.

At start the worker looks for each provider's CLI the same way and prints
a line for each one it cannot find (its attempts would end
unavailable-cli), and says so when none is found; it runs anyway, and its
announcement carries the list, so "switchyard status" shows the worker
"has no CLI for" those providers.

--identity-seed FILE connects as a provisioned worker identity (its nkey
seed, written by "switchyard worker identity"): the connection proves the
key, its reply subjects are its own, and a serve with worker identities
lets it take only the jobs and put only the capacity reports of the
providers listed for it. Against such a serve a worker without a listed
seed is refused. Without --identity-seed the worker connects with the
worker role's secret alone; its start-up output says which. With --nats,
the seed's nkey is the worker's login to the deployment's servers (its
own nkey user, docs/DEPLOY.md; a user and password or token may go beside
it, --creds and --nkey may not).

--http HOST:PORT serves the worker's /metrics (Prometheus: claim and lease
failures per provider, live workers, JetStream reachability), /healthz and
/readyz; loopback only unless a token is set (--http-token-file FILE or
SWITCHYARD_HTTP_TOKEN; never on the command line, where ps shows it), and
then /metrics needs it as Authorization: Bearer.

The first SIGINT or SIGTERM drains the worker: it takes no new job, lets
every attempt it is running finish and be reported, says how many it waits
for, and exits once they are done. A second signal stops them now (each
CLI is sent SIGTERM; its attempt is recorded cancelled and its lane stops
without falling back). See docs/OPERATIONS.md, "Stopping a worker".

Exit codes: 0 stopped cleanly by SIGINT or SIGTERM (drained, or stopped
by a second signal); 64 usage error (an unknown --provider, a bad --bin,
--concurrency or --quota-refresh, an --identity-seed that is not a
private seed file or whose identity the data directory's worker
identities file does not list for every --provider); 1 anything else
(nothing serves the data directory, the connection was refused, the
worker stopped with an error).`,
		Example: `  # Beside a "switchyard serve" on the default data directory:
  switchyard worker --provider codex,grok

  # Against a cluster, up to four concurrent claude attempts in this
  # worker (as many as the deployment's claude cap allows):
  switchyard worker --provider claude --concurrency 4 --nats nats://n1:4222,nats://n2:4222,nats://n3:4222

  # As a provisioned identity (switchyard worker identity --provider codex):
  switchyard worker --provider codex --identity-seed ~/.local/state/switchyard/worker-codex.seed

  # A pinned Codex install instead of the one on PATH:
  switchyard worker --provider codex --bin codex=/opt/codex-0.155.1/bin/codex`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlags(cmd, "provider"); err != nil {
				return err
			}
			if err := f.validate(cmd); err != nil {
				return err
			}
			provs, err := parseProviders(providerList)
			if err != nil {
				return err
			}
			if concurrency < 1 || concurrency > activities.MaxConcurrency {
				return usagef("--concurrency %d: want 1 to %d (default %d)", concurrency, activities.MaxConcurrency, defaultConcurrency)
			}
			if err := lf.validate(); err != nil {
				return err
			}
			if err := checkQuotaRefresh(quotaRefresh); err != nil {
				return err
			}
			binaries, err := parseBinOverrides(bins, provs)
			if err != nil {
				return err
			}
			if err := hf.validate(cmd); err != nil {
				return err
			}
			id, err := checkWorkerIdentity(f, seed, provs)
			if err != nil {
				return err
			}
			return runWorker(cmd.Context(), stdout, stderr, f, provs,
				workerOptions{concurrency: concurrency, quotaRefresh: quotaRefresh, binaries: binaries, http: hf, identity: id}, lf.logger(stderr))
		},
	}
	c.Flags().StringVar(&providerList, "provider", "", "comma-separated providers to execute: "+strings.Join(providerNames(), ", "))
	c.Flags().IntVar(&concurrency, "concurrency", defaultConcurrency, "most concurrent executions per provider in this worker (the deployment's cap, serve --cap, bounds all workers together)")
	c.Flags().StringArrayVar(&bins, "bin", nil, "P=/path: run provider P's CLI from this absolute path (sets SWITCHYARD_<P>_BIN for this worker; repeatable)")
	addQuotaRefreshFlag(c, &quotaRefresh)
	addIdentitySeedFlag(c, &seed)
	addHTTPFlags(c, &hf, "/metrics")
	addLogFlags(c, &lf, "info")
	addEngineFlags(c, &f, false)
	return wireCommand(c, stderr)
}

// providerNames lists the providers a worker can execute.
func providerNames() []string {
	var out []string
	for _, p := range providers.Names() {
		out = append(out, string(p))
	}
	return out
}

// parseProviders parses --provider, refusing unknown and repeated names.
func parseProviders(s string) ([]policy.Provider, error) {
	known := providerNames()
	var out []policy.Provider
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.Contains(known, name) {
			return nil, usagef("--provider %q: unknown provider; want one or more of %s", name, strings.Join(known, ", "))
		}
		if slices.Contains(out, policy.Provider(name)) {
			return nil, usagef("--provider lists %q twice", name)
		}
		out = append(out, policy.Provider(name))
	}
	if len(out) == 0 {
		return nil, usagef("--provider %q names no provider; for example --provider codex,grok", s)
	}
	return out, nil
}

// workerOptions are a worker's own settings.
type workerOptions struct {
	concurrency  int
	quotaRefresh time.Duration // 0: activities.DefaultQuotaRefresh
	// binaries are --bin's checked overrides: provider → absolute path.
	binaries map[policy.Provider]string
	// dataDir, when set, is where jobs' files must lie
	// (activities.WorkerConfig.DataDir).
	dataDir string
	// http is --http and --http-token-file: the worker's /metrics.
	http httpFlags
	// observer receives claim and lease failures (the metrics; nil without
	// --http).
	observer activities.Observer
	// noCLI are the providers whose CLI was not found at start.
	noCLI []policy.Provider
	// identity is --identity-seed, checked (worker_identity.go).
	identity workerIdentity
}

// parseBinOverrides parses --bin P=/path values: P one of the worker's
// providers, each at most once, the path an absolute path to an executable
// regular file (checked the way discovery checks SWITCHYARD_<P>_BIN).
func parseBinOverrides(vals []string, provs []policy.Provider) (map[policy.Provider]string, error) {
	out := map[policy.Provider]string{}
	for _, v := range vals {
		name, path, ok := strings.Cut(v, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" || path == "" {
			return nil, usagef("--bin %q: want provider=/absolute/path, for example --bin codex=/opt/codex/bin/codex", v)
		}
		p := policy.Provider(name)
		if !slices.Contains(provs, p) {
			return nil, usagef("--bin %q: %s is not one of this worker's providers (--provider); add it there or drop this --bin", v, name)
		}
		if _, dup := out[p]; dup {
			return nil, usagef("--bin names %s twice; give one path per provider", name)
		}
		spec, err := providers.Lookup(p)
		if err != nil {
			return nil, usagef("--bin %q: %v", v, err)
		}
		if _, err := providers.Discover(spec, map[string]string{providers.BinEnvVar(p): path}); err != nil {
			var nf *providers.BinaryNotFoundError
			if errors.As(err, &nf) {
				return nil, usagef("--bin %s=%s: %s; pass the absolute path of an executable %s CLI", name, path, nf.Reason, name)
			}
			return nil, usagef("--bin %q: %v", v, err)
		}
		out[p] = path
	}
	return out, nil
}

// workerEnv is the parent environment the worker hands its runner and
// quota acquisition: this process's, with --bin's overrides set as
// SWITCHYARD_<P>_BIN (so both resolve the binary the same way).
func workerEnv(binaries map[policy.Provider]string) map[string]string {
	env := runner.EnvMap(os.Environ())
	for p, path := range binaries {
		env[providers.BinEnvVar(p)] = path
	}
	return env
}

// addQuotaRefreshFlag declares --quota-refresh.
func addQuotaRefreshFlag(c *cobra.Command, d *time.Duration) {
	c.Flags().DurationVar(d, "quota-refresh", activities.DefaultQuotaRefresh,
		"how often the worker re-measures its providers' quota (also at start, on request and after a usage-exhausted attempt)")
}

// minQuotaRefresh keeps --quota-refresh from hammering a provider's usage
// endpoint.
const minQuotaRefresh = 10 * time.Second

// checkQuotaRefresh checks --quota-refresh.
func checkQuotaRefresh(d time.Duration) error {
	if d < minQuotaRefresh {
		return usagef("--quota-refresh %s: want at least %s (default %s)", d, minQuotaRefresh, activities.DefaultQuotaRefresh)
	}
	return nil
}

// newWorker builds the worker loop for provs on conn. It puts its
// providers' capacity reports into the connection's capacity store.
func newWorker(conn *engineConn, provs []policy.Provider, o workerOptions, logger *slog.Logger) (*activities.Worker, error) {
	w, err := activities.NewWorker(activities.WorkerConfig{
		Queue: conn.queue(), Claims: conn.claims(), Store: conn.store(), Presence: conn.js.Presence(),
		Providers: provs, Concurrency: o.concurrency, Now: time.Now, Logger: logger,
		Offline:  conn.Offline,
		Capacity: conn.capacity(), QuotaRefresh: o.quotaRefresh,
		Commands: conn.js.Conn(),
		Env:      workerEnv(o.binaries),
		DataDir:  o.dataDir,
		Observer: o.observer,
		NoCLI:    o.noCLI,
	})
	if err != nil {
		return nil, failf("start the worker: %v", err)
	}
	return w, nil
}

// runWorker runs until ctx ends.
func runWorker(ctx context.Context, stdout, stderr io.Writer, f engineFlags, provs []policy.Provider, o workerOptions, logger *slog.Logger) error {
	// The connection's loss and recovery are logged once each; while it
	// is down the worker's own retries stay quiet (WorkerConfig.Offline).
	var connected atomic.Pointer[engineConn]
	link := linkEvents{
		Lost: func(err error) {
			logger.Warn("lost the connection to the server; running attempts go on, reconnecting", "err", err)
		},
		Back: func() {
			if c := connected.Load(); c != nil {
				logger.Info("connection to the server is back", "server", c.describe())
			}
		},
	}
	conn, err := openEngineConn(ctx, f, connectOptions{noEmbed: true, lockWait: 5 * time.Second, link: link, workerSeed: o.identity.seed})
	if err != nil {
		return err
	}
	defer conn.Close()
	connected.Store(conn)
	// A job's files must lie where the engine prepares them: in the data
	// directory served, or with --nats the one --data-dir names (the
	// deployment's shared directory; without it the recorded launch is
	// still checked).
	o.dataDir = conn.dataDir
	if f.nats != "" && f.dataDir != "" {
		if o.dataDir, err = resolveDataDir(f.dataDir); err != nil {
			return usagef("%v", err)
		}
	}
	m := metrics.New()
	if o.http.addr != "" {
		m.WatchProviders(provs)
		o.observer = m
	}
	var why map[policy.Provider]string
	o.noCLI, why = missingCLIs(provs, workerEnv(o.binaries))
	w, err := newWorker(conn, provs, o, logger)
	if err != nil {
		return err
	}
	web, err := workerHTTP(ctx, stdout, stderr, o.http, conn, m, logger)
	if err != nil {
		return err
	}
	defer web.stop()
	for _, p := range provs {
		if path, ok := o.binaries[p]; ok {
			logger.Info("provider CLI pinned by --bin", "provider", string(p), "bin", path)
		}
	}
	names := make([]string, len(provs))
	for i, p := range provs {
		names[i] = string(p)
	}
	fmt.Fprintf(stdout, "switchyard worker: %s (concurrency %d) on %s; stop with Ctrl-C\n",
		strings.Join(names, ","), o.concurrency, conn.describe())
	fmt.Fprintf(stdout, "switchyard worker: %s\n", o.identity.describe())
	reportMissingCLIs(stdout, logger, provs, o.noCLI, why)
	// The first SIGINT or SIGTERM drains: no new job, the running attempts
	// finish and are reported. A second one stops them now (each CLI is
	// sent SIGTERM and its attempt recorded cancelled). A context
	// cancelled otherwise (an embedding caller) stops at once.
	hard, stopNow := context.WithCancel(context.WithoutCancel(ctx))
	defer stopNow()
	ran := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		drainOnSignal(ctx, hard, ran, stdout, w, stopNow)
	}()
	err = w.Run(hard)
	close(ran)
	<-watched
	if err != nil && !errors.Is(err, context.Canceled) && hard.Err() == nil {
		return failf("worker stopped: %v", err)
	}
	fmt.Fprintln(stdout, "switchyard worker: stopped")
	return nil
}

// drainOnSignal waits for ctx's end while the worker runs (until ran is
// closed). Ended by a signal, it drains the worker and prints what it
// waits for, then a later signal calls stopNow; ended otherwise, it calls
// stopNow at once.
func drainOnSignal(ctx, hard context.Context, ran <-chan struct{}, stdout io.Writer, w *activities.Worker, stopNow func()) {
	select {
	case <-ctx.Done():
	case <-ran:
		return
	}
	sig, ok := stoppedBySignal(ctx)
	if !ok {
		stopNow()
		return
	}
	n := w.Drain()
	if n == 0 {
		fmt.Fprintf(stdout, "switchyard worker: %s: draining: taking no new jobs; no attempt is running\n", signalName(sig))
	} else {
		fmt.Fprintf(stdout, "switchyard worker: %s: draining: taking no new jobs, waiting for %s to finish; send SIGINT or SIGTERM again (Ctrl-C) to stop %s now\n",
			signalName(sig), plural(n, "running attempt"), itThem(n))
	}
	select {
	case sig := <-laterSignals(ctx):
		fmt.Fprintf(stdout, "switchyard worker: %s again: stopping %s now (each CLI is sent SIGTERM; its attempt is recorded cancelled)\n",
			signalName(sig), plural(w.Running(), "running attempt"))
		stopNow()
	case <-ran:
	case <-hard.Done():
	}
}

// signalName is SIGINT or SIGTERM as a user reads it.
func signalName(sig os.Signal) string {
	if sig == os.Interrupt {
		return "SIGINT"
	}
	if s, ok := sig.(syscall.Signal); ok && s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return sig.String()
}

func itThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
