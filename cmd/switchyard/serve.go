package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/activities/sandbox"
	"github.com/switchyard-dev/switchyard/internal/engineconn"
	"github.com/switchyard-dev/switchyard/policy"
)

// defaultListen is serve's client address: NATS's usual port, loopback
// only.
const defaultListen = "127.0.0.1:4222"

// newServeCmd builds `switchyard serve`: the data directory's embedded
// JetStream server, listening on loopback, plus the engine's run loop.
func newServeCmd(stdout, stderr io.Writer) *cobra.Command {
	var f engineFlags
	var listen string
	var lf logFlags
	var capList []string
	var hf httpFlags
	var workersPath string
	c := &cobra.Command{
		Use:   "serve [--listen HOST:PORT] [--fsync always|interval] [--cap P=N] [--http HOST:PORT] [--worker-identities FILE] [--data-dir D | --nats URLS]",
		Short: "Run the engine and the data directory's JetStream server until stopped",
		Long: `Start the data directory's embedded NATS JetStream server, listening on a
loopback address, and the engine that drives every run stored there (runs a
previous engine left unfinished resume). Workers (switchyard worker) and
every other command on this host find it through <data-dir>/serve.json.

With --nats the engine runs against that server or cluster instead and no
embedded server starts.

The address is recorded in <data-dir>/serve.addr: started again with
--listen HOST:0, serve comes back on the port it had when that port is
free, so nothing has to move. Clients that found it through the data
directory (workers, waiting runs, status --watch) re-read serve.json on
every reconnect, so they also find a serve that came back elsewhere.

Only this user's processes can connect: every start draws fresh per-role
secrets into <data-dir>/serve.auth (mode 0600) and the server refuses a
connection without them. Clients read them from that file, so the server
listens on loopback only; to spread workers over several hosts run a NATS
cluster with TLS and pass --nats everywhere (docs/DEPLOY.md).

--cap sets the deployment's concurrency caps at start: at most N attempts
of a provider run at once across all workers, wherever they run (default 2
per provider). The job queue enforces them, so starting more workers
never runs more sessions; a worker's --concurrency only bounds that one
process. The caps are the deployment's whole setting: a provider --cap
leaves out goes back to 2. "switchyard status" shows each provider's cap
and the sessions running.

--http HOST:PORT serves the web console (runs, lane timelines, the lane
machine, events, answer forms), its JSON API (/api/v1/runs, the objects of
status --json), /metrics (Prometheus), /healthz and /readyz. Every request
for run data or an answer must carry the console's token as
Authorization: Bearer (no cookie: a browser would send one to every port of
the host). The token is read from --http-token-file FILE or
SWITCHYARD_HTTP_TOKEN (never from the command line, where ps shows it);
without either, serve draws one at every start into <data-dir>/console.token
(mode 0600). --http listens on loopback only unless a token is given. serve
prints a sign-in address with a one-time code in its fragment: the page
trades the code for the token and keeps it in that tab's session storage.
The code works once, within 5 minutes; switchyard console-url prints a new
one. The listener serves at most 64 connections at once and closes idle or
half-sent ones (see docs/CONSOLE.md).

Worker identities: when the data directory holds ` + workersFileName + ` (or
--worker-identities FILE names one), each worker must connect with a
provisioned identity (switchyard worker identity; worker --identity-seed):
the server admits only worker connections that prove a listed key, and the
engine lets each take and acknowledge only its own providers' jobs and put
only their capacity reports. With --nats the engine applies the same list
(a worker whose key is not listed gets nothing but reads). The file is
read at start: restart serve after provisioning. A malformed file, one
with unknown keys, one another user could write or a symbolic link is
refused and serve does not start. Without it every worker holding the
role's secret serves every provider.

SIGINT or SIGTERM stops it cleanly: the engine stops, then the server
shuts down (stepping down any leadership) before the process exits.

Exit codes: 0 stopped cleanly by SIGINT or SIGTERM; 64 usage error (a bad
--listen, --cap, --http, --http-token-file or connection option,
--http-token, or a worker identities file that is missing, invalid or
unsafe); 1 anything else (the data directory is already served, the
server or engine could not start or stopped with an error).`,
		Example: `  # Serve the default data directory on 127.0.0.1:4222:
  switchyard serve

  # A throwaway data directory on a free port (the same one on a restart,
  # when it is still free), fsync once a second:
  switchyard serve --data-dir /tmp/sy --listen 127.0.0.1:0 --fsync interval

  # At most four codex sessions and one grok session at once, across all
  # workers (every other provider: 2):
  switchyard serve --cap codex=4 --cap grok=1

  # The web console and Prometheus metrics on http://127.0.0.1:8233/
  # (open the sign-in address it prints):
  switchyard serve --http 127.0.0.1:8233

  # On every interface, with a token from a file only you can read:
  switchyard serve --http 0.0.0.0:8233 --http-token-file ~/.config/switchyard/http-token

  # Admit only provisioned workers (see switchyard worker identity):
  switchyard serve --worker-identities /etc/switchyard/workers.json

  # Drive runs stored on a three-node cluster:
  switchyard serve --nats nats://n1:4222,nats://n2:4222,nats://n3:4222`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validate(cmd); err != nil {
				return err
			}
			if f.nats != "" && cmd.Flags().Changed("listen") {
				return usagef("--listen applies to the embedded server; with --nats the engine uses that server, so drop --listen")
			}
			if err := checkLoopback(listen); err != nil {
				return err
			}
			if err := lf.validate(); err != nil {
				return err
			}
			caps, err := parseCaps(capList)
			if err != nil {
				return err
			}
			if err := hf.validate(cmd); err != nil {
				return err
			}
			ids, err := loadServeWorkerIdentities(f, workersPath)
			if err != nil {
				return err
			}
			return runServe(cmd.Context(), stdout, stderr, f, listen, caps, hf, ids, lf.logger(stderr))
		},
	}
	c.Flags().StringVar(&listen, "listen", defaultListen, "loopback HOST:PORT the embedded server listens on (port 0: the port it had last time when free, else any free one)")
	addCapFlag(c, &capList)
	addWorkerIdentitiesFlag(c, &workersPath, "the worker identities `FILE` (default <data-dir>/"+workersFileName+" when present): only the workers listed there connect, each serving its listed providers")
	addHTTPFlags(c, &hf, "the web console, its JSON API (/api/v1), /metrics")
	addLogFlags(c, &lf, "info")
	addEngineFlags(c, &f, true)
	return wireCommand(c, stderr)
}

// checkLoopback accepts a HOST:PORT whose host is a loopback address (or
// localhost).
func checkLoopback(listen string) error {
	host, port, err := net.SplitHostPort(listen)
	if err != nil || port == "" {
		return usagef("--listen %q is not HOST:PORT; for example 127.0.0.1:4222", listen)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return usagef("--listen %q is not a loopback address; its credentials reach clients through a file in the data directory, on this host only, so use 127.0.0.1 or ::1 (for several hosts run a NATS cluster with TLS and per-role users, docs/DEPLOY.md, and pass --nats)", listen)
	}
	return nil
}

// runServe serves until ctx ends.
// The caps are set before the engine starts, so no job of this serve's
// runs is handed out under older caps.
func runServe(ctx context.Context, stdout, stderr io.Writer, f engineFlags, listen string, caps map[policy.Provider]int, hf httpFlags, ids serveWorkerIdentities, logger *slog.Logger) (retErr error) {
	refused := func(peer string) {
		logger.Warn("refused a connection without this start's credentials; only processes of the user that started serve can connect",
			"peer", peer, "credentials", authFileName)
	}
	// --http is bound first: a busy port fails before anything is
	// created or printed.
	if hf.addr != "" {
		ln, err := listenHTTP(hf.addr)
		if err != nil {
			return err
		}
		hf.ln = ln
		defer ln.Close() // closed by the server once it serves; this covers a failed start
	}
	// A serve that creates the data directory and then fails to start
	// removes it again: a failed start leaves nothing new behind.
	fresh := ""
	if f.nats == "" {
		if dir, err := resolveDataDirNoCreate(f.dataDir); err == nil {
			if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
				fresh = dir
			}
		}
	}
	started := false
	defer func() { // after conn.Close, deferred below
		if retErr != nil && !started && fresh != "" {
			os.RemoveAll(fresh)
		}
	}()
	conn, err := openEngineConn(ctx, f, connectOptions{serveKind: "serve", listen: listen, exclusive: true, refused: refused, workers: ids.workers})
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := applyCaps(ctx, conn, caps); err != nil {
		if ctx.Err() != nil { // stopped (SIGINT, SIGTERM) while starting: a clean stop
			fmt.Fprintln(stdout, "switchyard serve: stopped")
			return nil
		}
		return err
	}
	eng, err := conn.newEngine(f, logger)
	if err != nil {
		return err
	}
	// Parents submit runs through the engine, which alone writes events.
	stopSubmissions, err := conn.js.ServeSubmissions(ctx, eng.AcceptSubmission)
	if err != nil {
		return failf("%v", err)
	}
	defer stopSubmissions()
	switch conn.mode {
	case connEmbedded:
		fsync := f.fsync
		fmt.Fprintf(stdout, "switchyard serve: data directory %s on %s (fsync %s, pid %d); stop with Ctrl-C\n",
			conn.dataDir, conn.urls[0], fsync, os.Getpid())
	default:
		fmt.Fprintf(stdout, "switchyard serve: engine on %s (pid %d); stop with Ctrl-C\n", conn.describe(), os.Getpid())
	}
	fmt.Fprintf(stdout, "switchyard serve: provider caps (concurrent attempts across all workers): %s\n", describeCaps(caps))
	fmt.Fprintf(stdout, "switchyard serve: %s\n", ids.describe())
	web, err := serveHTTP(ctx, stdout, stderr, hf, f, conn, eng, logger)
	if err != nil {
		return err
	}
	defer web.stop()
	started = true
	// The commands this serve serves read its sandbox self-test in
	// serve.json (what its gate decides with) instead of each running one:
	// the self-test is a sandboxed child process, about half of what a
	// `run --detach` cost (docs/PERFORMANCE.md). It runs beside the engine
	// and is waited for on the way out.
	published := make(chan struct{})
	go func() {
		defer close(published)
		if err := conn.PublishContainment(sandbox.Verify("")); err != nil {
			logger.Warn("serve.json: the sandbox self-test is not published; runs and doctor test their own host", "err", err)
		}
	}()
	defer func() { <-published }()
	err = eng.Run(ctx)
	if err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
		return failf("engine stopped: %v", err)
	}
	fmt.Fprintln(stdout, "switchyard serve: stopped")
	return nil
}

// resolveDataDirNoCreate is the absolute data directory --data-dir (or
// its default) names, without creating it.
func resolveDataDirNoCreate(flag string) (string, error) {
	return engineconn.LocateDataDir(flag)
}
