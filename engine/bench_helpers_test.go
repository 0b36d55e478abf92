package engine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
)

// The benchmark deployment is the harness's JetStream deployment without
// the *testing.T: one embedded server (the fsync policy under test), the
// store, queue and claims on it, an Engine whose Run is active, and a fake
// worker (respond) that answers every codex job with a claimed and
// a finished report carrying a valid receipt, as harness.report does. The
// logger discards: logging is not what is measured.

// benchRole is the role of benchSheet: one panel row of n identical
// single-attempt seats, so every lane is launch, claim, finish, complete.
const benchRole = "arena runners"

// benchDescriptor is every bench lane's only attempt.
const benchDescriptor = "codex:gpt-5.6-sol@high"

// benchSheet is a sheet whose benchRole row has lanes seats.
func benchSheet(lanes int) []byte {
	seats := make([]string, lanes)
	for i := range seats {
		seats[i] = benchDescriptor
	}
	return sheet("", benchRole+": "+strings.Join(seats, ", "))
}

// benchLaneTypes is the lane events of a completed single-attempt
// lane: launch, claim, finish, complete.
var benchLaneTypes = []events.Type{events.TypeLaunch, events.TypeClaim, events.TypeFinish, events.TypeComplete}

type benchDeployment struct {
	b     testing.TB
	srv   *events.Embedded
	js    natsjs.JetStream // plain client on the same connection
	store events.Store
	queue events.Queue
	eng   *engine.Engine
	cwd   string
	jobs  events.JobConsumer
	ctx   context.Context // ends when the benchmark ends
	done  chan struct{}   // closed when the responder has stopped
	errs  chan error      // the responder's first failure
	tmpl  *benchReceipt
}

// newBenchDeployment starts the server and the engine, drives one 1-lane
// run by hand to build the receipt template (the real runner around the
// simulated codex, as harness.execute does), then starts the responder.
// Everything stops when b ends.
func newBenchDeployment(b testing.TB, fsync events.FsyncPolicy) *benchDeployment {
	b.Helper()
	srv := eventstest.StartServer(b, eventstest.WithFsync(fsync))
	js := eventstest.Open(b, srv, events.JetStreamConfig{})
	d := &benchDeployment{b: b, srv: srv, store: js.Store(), queue: js.Queue(), cwd: b.TempDir(),
		done: make(chan struct{}), errs: make(chan error, 1)}
	require.NoError(b, os.WriteFile(filepath.Join(d.cwd, "README.md"), []byte("# fixture\n"), 0o644))
	var err error
	d.js, err = natsjs.New(srv.Conn())
	require.NoError(b, err)
	eng, err := engine.New(engine.Config{
		Store: d.store, Queue: d.queue, Claims: js.Claims(), DataDir: b.TempDir(),
		Logger: slog.New(slog.DiscardHandler), Capacity: seeded(b, js.Capacity()),
	})
	require.NoError(b, err)
	d.eng = eng

	ctx, cancel := context.WithCancel(context.Background())
	d.ctx = ctx
	ran := make(chan error, 1)
	go func() { ran <- eng.Run(ctx) }()
	b.Cleanup(func() {
		cancel()
		require.NoError(b, <-ran)
	})
	d.jobs, err = d.queue.Jobs(ctx, events.JobSubject("codex"), events.JobOptions{})
	require.NoError(b, err)

	// The template run: one lane, answered by the real runner.
	run := d.submit(1)
	wctx, wcancel := context.WithTimeout(ctx, waitTimeout)
	defer wcancel()
	del, err := d.jobs.Next(wctx)
	require.NoError(b, err)
	require.NoError(b, del.Ack(wctx))
	d.tmpl = buildReceipt(b, del.Job)
	require.NoError(b, d.answer(ctx, del.Job, d.tmpl.bytes))
	require.NoError(b, d.waitFinal(wctx, run))
	require.NoError(b, checkBenchRun(d.load(run), 1))

	go d.respond()
	b.Cleanup(func() {
		cancel()
		<-d.done
	})
	return d
}

// submit starts a bench run of lanes lanes.
func (d *benchDeployment) submit(lanes int) string {
	d.b.Helper()
	id, err := d.eng.Submit(d.ctx, engine.RunRequest{
		Sheet: benchSheet(lanes), Role: benchRole, Parent: policy.ParentClaude, Mode: policy.ReadOnly,
		Prompt: []byte("Summarize README.md in one sentence.\n"), Cwd: d.cwd, Timeout: time.Minute,
	})
	require.NoError(d.b, err)
	return id
}

// respond is the fake worker: it acknowledges each codex job, writes its
// receipt and publishes claimed then finished, until the deployment stops.
func (d *benchDeployment) respond() {
	defer close(d.done)
	for {
		del, err := d.jobs.Next(d.ctx)
		if err == nil {
			err = del.Ack(d.ctx)
		}
		if err == nil {
			err = d.answer(d.ctx, del.Job, d.tmpl.forJob(del.Job))
		}
		if d.ctx.Err() != nil {
			return
		}
		if err != nil {
			select {
			case d.errs <- err:
			default:
			}
			return
		}
	}
}

// answer writes receipt at job's receipt path and publishes the reports
// harness.report would: claimed with a lease, then finished with the
// receipt's path and digest. It writes the output the receipt claims too.
func (d *benchDeployment) answer(ctx context.Context, job events.Job, receipt []byte) error {
	// The response the complete receipt claims: the engine re-checks
	// that the output file is not empty before it records a finish.
	if err := os.WriteFile(job.Paths.Output, []byte("answer\n"), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(job.Paths.Receipt, receipt, 0o600); err != nil {
		return err
	}
	r := events.Report{ExecutionID: job.ExecutionID, Run: job.Run, Lane: job.Lane, Kind: events.ReportClaimed,
		WorkerID: "bench-worker", Time: time.Now(), Lease: &events.LeaseInfo{TTLMs: 30_000, Revision: 1}}
	if _, err := d.queue.PublishReport(ctx, r); err != nil {
		return fmt.Errorf("claimed report: %w", err)
	}
	r.Kind, r.Lease, r.Time = events.ReportFinished, nil, time.Now()
	r.ReceiptPath, r.ReceiptDigest = job.Paths.Receipt, events.Digest(receipt)
	if _, err := d.queue.PublishReport(ctx, r); err != nil {
		return fmt.Errorf("finished report: %w", err)
	}
	return nil
}

// waitFinal waits for run's run-final. It reads only the run-level subject
// (run-created, run-final) with a plain ordered consumer, so that watching
// costs the measurement next to nothing.
func (d *benchDeployment) waitFinal(ctx context.Context, run string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cons, err := d.js.OrderedConsumer(ctx, events.EventsStream, natsjs.OrderedConsumerConfig{
		FilterSubjects: []string{events.EventSubject(run, events.RunLane)},
	})
	if err != nil {
		return err
	}
	final := make(chan error, 1)
	cc, err := cons.Consume(func(m natsjs.Msg) {
		env, err := events.Decode(m.Data())
		if err != nil || env.Type == events.TypeRunFinal {
			select {
			case final <- err:
			default:
			}
		}
	})
	if err != nil {
		return err
	}
	defer cc.Stop()
	select {
	case err := <-final:
		return err
	case err := <-d.errs:
		return fmt.Errorf("responder: %w", err)
	case <-ctx.Done():
		return fmt.Errorf("run %s: no run-final: %w", run, ctx.Err())
	}
}

// driveRun submits a run of lanes lanes and waits for its run-final; the
// responder answers its jobs meanwhile.
func (d *benchDeployment) driveRun(lanes int) string {
	d.b.Helper()
	run := d.submit(lanes)
	ctx, cancel := context.WithTimeout(d.ctx, waitTimeout)
	defer cancel()
	if err := d.waitFinal(ctx, run); err != nil {
		envs, _ := d.store.LoadRun(context.Background(), run)
		d.b.Fatalf("run %s: %v; log:\n%s", run, err, dump(envs))
	}
	return run
}

// load is run's whole log.
func (d *benchDeployment) load(run string) []events.Envelope {
	d.b.Helper()
	envs, err := d.store.LoadRun(d.ctx, run)
	require.NoError(d.b, err)
	return envs
}

// checkBenchRun checks that envs is a whole bench run of lanes lanes in
// which every lane went exactly launch, claim, finish, complete: no audit,
// no fallback, nothing the benchmark did not mean to measure.
func checkBenchRun(envs []events.Envelope, lanes int) error {
	perLane := make([][]events.Type, lanes)
	for _, e := range envs {
		if e.Lane == events.RunLane {
			continue
		}
		if e.Lane < 0 || e.Lane >= lanes {
			return fmt.Errorf("event %s on lane %d of a %d-lane run", e.Type, e.Lane, lanes)
		}
		perLane[e.Lane] = append(perLane[e.Lane], e.Type)
	}
	for i, ts := range perLane {
		if fmt.Sprint(ts) != fmt.Sprint(benchLaneTypes) {
			return fmt.Errorf("lane %d: events %v, want %v\n%s", i, ts, benchLaneTypes, dump(envs))
		}
	}
	if envs[len(envs)-1].Type != events.TypeRunFinal {
		return errors.New("run did not end with run-final")
	}
	return nil
}

// laneEvents is envs without the run-level events.
func laneEvents(envs []events.Envelope) []events.Envelope {
	var out []events.Envelope
	for _, e := range envs {
		if e.Lane != events.RunLane {
			out = append(out, e)
		}
	}
	return out
}

// benchReceipt is a receipt the real runner wrote for one job; forJob
// makes the same receipt for another job of the same descriptor by
// substituting the execution directory and id, which is everything in it
// that names the execution.
type benchReceipt struct {
	bytes []byte
	dir   string // the template job's execution directory
	id    string // the template job's execution id
}

// buildReceipt runs job with the real runner around the simulated codex
// replaying "success" (harness.execute, for a testing.TB) and returns its
// receipt as a template.
func buildReceipt(b testing.TB, job events.Job) *benchReceipt {
	b.Helper()
	bin := simenv.Install(b, "", simenv.Scenarios(map[string]string{string(job.Provider): "success"}))
	home := filepath.Join(b.TempDir(), "home")
	require.NoError(b, os.Mkdir(home, 0o755))
	r, err := runner.New(runner.Config{
		Env:    map[string]string{"PATH": bin + ":/usr/bin:/bin", simenv.SandboxWritable: bin, "HOME": home, "LANG": "C.UTF-8"},
		Stdout: discard{}, Stderr: discard{},
	})
	require.NoError(b, err)
	r.Main(context.Background(), runnerArgs(job))
	data, err := os.ReadFile(job.Paths.Receipt)
	require.NoError(b, err, "the runner wrote a receipt")
	// The file must not exist when answer writes it again.
	require.NoError(b, os.Remove(job.Paths.Receipt))
	dir := filepath.Dir(job.Paths.Receipt)
	require.Contains(b, string(data), dir)
	return &benchReceipt{bytes: data, dir: dir, id: job.ExecutionID}
}

func (t *benchReceipt) forJob(job events.Job) []byte {
	out := bytes.ReplaceAll(t.bytes, []byte(t.dir), []byte(filepath.Dir(job.Paths.Receipt)))
	return bytes.ReplaceAll(out, []byte(t.id), []byte(job.ExecutionID))
}

// benchRawStream is the stream the raw side publishes to: the events
// stream's configuration read back from the server (storage, limits,
// duplicate window) under another name, on subjects of the same length
// (sy.rw.<run>.<lane> for sy.ev.<run>.<lane>). Publishing on the events
// stream itself would feed every raw message to the engine's own watch of
// all runs, which decodes it: work of the engine's, not of the publish.
const (
	benchRawStream = "SY_BENCH_RAW"
	benchRawPrefix = "sy.rw."
)

// openRawStream creates benchRawStream on d's server.
func (d *benchDeployment) openRawStream() {
	d.b.Helper()
	s, err := d.js.Stream(d.ctx, events.EventsStream)
	require.NoError(d.b, err)
	info, err := s.Info(d.ctx)
	require.NoError(d.b, err)
	cfg := info.Config
	cfg.Name, cfg.Subjects = benchRawStream, []string{benchRawPrefix + ">"}
	require.Len(d.b, benchRawPrefix, len(events.EventSubjectPrefix))
	_, err = d.js.CreateStream(d.ctx, cfg)
	require.NoError(d.b, err)
}

// rawBatch is the raw-publish side of the ratio: the bytes of a run's lane
// events re-encoded for a fresh run id of the same length (so each message
// is exactly as large as the engine's), each published plainly and
// synchronously on its lane's raw subject with the expected last subject
// sequence header, and nothing else (no message id, no validation, no
// fold, no decision, no job or report, no watcher).
type rawBatch struct {
	subjects []string
	lanes    []int
	data     [][]byte
	bytes    int
}

func newRawBatch(b testing.TB, envs []events.Envelope) rawBatch {
	b.Helper()
	run := uuid.NewString()
	var rb rawBatch
	for _, e := range laneEvents(envs) {
		require.Len(b, run, len(e.Run), "raw run ids are as long as the engine's")
		e.Run, e.Seq = run, 0
		data, err := events.Encode(e)
		require.NoError(b, err)
		subj := benchRawPrefix + strings.TrimPrefix(events.EventSubject(run, e.Lane), events.EventSubjectPrefix)
		rb.subjects = append(rb.subjects, subj)
		rb.lanes = append(rb.lanes, e.Lane)
		rb.data = append(rb.data, data)
		rb.bytes += len(data)
	}
	return rb
}

// publish publishes the batch, each message after the previous one's ack.
func (rb rawBatch) publish(ctx context.Context, js natsjs.JetStream) error {
	last := map[int]uint64{}
	for i, data := range rb.data {
		ack, err := js.Publish(ctx, rb.subjects[i], data, natsjs.WithExpectLastSequencePerSubject(last[rb.lanes[i]]))
		if err != nil {
			return err
		}
		last[rb.lanes[i]] = ack.Sequence
	}
	return nil
}
