package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/engine"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/events/eventstest"
)

// BenchmarkRunsAtScale measures what issue 15 wants flat in the number of
// final runs: listing the newest 20 runs (ListRuns, what `status` prints)
// and an engine start up to "engine running" (what a `serve` restart
// waits for), over a store of 10 and of SY_BENCH_RUNS (default 10,000)
// final one-lane runs, with the run index (index=on) and without it
// (index=off: the store seen without its RunIndex, the code path before
// the index). The runs are copies of one real run (driven by the engine
// with the fake worker), published raw under new run ids of the same
// length, index entry included, on a fresh server (fsync interval).
//
//	go test -run '^$' -bench BenchmarkRunsAtScale -benchtime 5x -count 3 ./engine
func BenchmarkRunsAtScale(b *testing.B) {
	big := 10000
	if s := os.Getenv("SY_BENCH_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(b, err, "SY_BENCH_RUNS")
		big = n
	}
	d := newBenchDeployment(b, events.FsyncInterval)
	tmpl := d.driveRun(1)
	msgs := templateMessages(b, d, tmpl)
	for _, n := range []int{10, big} {
		srv := eventstest.StartServer(b, eventstest.WithFsync(events.FsyncInterval))
		js := eventstest.Open(b, srv, events.JetStreamConfig{})
		seedRuns(b, srv, tmpl, msgs, n)
		st := js.Store()
		b.Run(fmt.Sprintf("runs=%d/store-runs", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := st.Runs(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("runs=%d/index-read", n), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := st.FinalRuns(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
		newest := fmt.Sprintf("%0*d", len(tmpl), n-1)
		b.Run(fmt.Sprintf("runs=%d/load-newest-run", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := st.LoadRun(context.Background(), newest); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, ix := range []string{"off", "on"} {
			var store events.Store = js.Store()
			if ix == "off" {
				store = struct{ events.Store }{js.Store()} // hides the RunIndex
			}
			running := make(chan struct{}, 1)
			cfg := engine.Config{
				Store: store, Queue: js.Queue(), Claims: js.Claims(), DataDir: b.TempDir(),
				Logger: slog.New(signalHandler{msg: "engine running", ch: running}), Capacity: seeded(b, js.Capacity()),
			}
			eng, err := engine.New(cfg)
			require.NoError(b, err)
			ctx := context.Background()
			l, err := eng.ListRuns(ctx, nil, 20)
			require.NoError(b, err)
			require.Equal(b, n, l.Total, "every copied run folds")
			b.Run(fmt.Sprintf("runs=%d/index=%s/list20", n, ix), func(b *testing.B) {
				for b.Loop() {
					if _, err := eng.ListRuns(ctx, nil, 20); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("runs=%d/index=%s/start", n, ix), func(b *testing.B) {
				var heap0, heap1 runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&heap0)
				for b.Loop() {
					e, err := engine.New(cfg)
					if err != nil {
						b.Fatal(err)
					}
					rctx, cancel := context.WithCancel(ctx)
					done := make(chan error, 1)
					go func() { done <- e.Run(rctx) }()
					select {
					case <-running:
					case err := <-done:
						b.Fatalf("engine stopped before running: %v", err)
					case <-time.After(2 * time.Minute):
						b.Fatal("no engine running within 2m")
					}
					b.StopTimer()
					runtime.GC()
					runtime.ReadMemStats(&heap1)
					cancel()
					if err := <-done; err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				// The process's live heap with the engine running, over the
				// heap before it started (server included in both).
				b.ReportMetric(float64(int64(heap1.HeapAlloc)-int64(heap0.HeapAlloc))/(1<<20), "engine-heap-MB")
			})
		}
	}
}

// rawMsg is one stored message of the template run.
type rawMsg struct {
	subject string
	data    []byte
}

// templateMessages is run's stored events and its run index entry, raw.
func templateMessages(b *testing.B, d *benchDeployment, run string) []rawMsg {
	b.Helper()
	ctx := context.Background()
	var out []rawMsg
	ev, err := d.js.Stream(ctx, events.EventsStream)
	require.NoError(b, err)
	for _, env := range d.load(run) {
		m, err := ev.GetMsg(ctx, env.Seq)
		require.NoError(b, err)
		out = append(out, rawMsg{m.Subject, m.Data})
	}
	ixs, err := d.js.Stream(ctx, "KV_"+events.RunsBucket)
	require.NoError(b, err)
	var m *natsjs.RawStreamMsg
	require.Eventually(b, func() bool {
		m, err = ixs.GetLastMsgForSubject(ctx, "$KV."+events.RunsBucket+"."+run)
		return err == nil
	}, waitTimeout, 20*time.Millisecond, "the template run's index entry")
	// The entry (its header) and the status snapshot (the body).
	out = append(out, rawMsg{m.Subject, []byte(m.Header.Get("Sy-Final-Run"))})
	return append(out, rawMsg{m.Subject, m.Data})
}

// seedRuns publishes n copies of the template on srv, the run id replaced
// by one of the same length; each copy's index entry (the template's last
// message) gets the copy's own run-level sequence.
func seedRuns(b *testing.B, srv *events.Embedded, tmpl string, msgs []rawMsg, n int) {
	b.Helper()
	js, err := natsjs.New(srv.Conn(), natsjs.WithPublishAsyncMaxPending(4096))
	require.NoError(b, err)
	var entry events.FinalRun
	require.NoError(b, json.Unmarshal(msgs[len(msgs)-2].data, &entry))
	var snap struct {
		Seq    uint64          `json:"seq"`
		Status json.RawMessage `json:"status"`
	}
	require.NoError(b, json.Unmarshal(msgs[len(msgs)-1].data, &snap))
	evs := msgs[:len(msgs)-2]
	lastRunLevel := -1
	for i, m := range evs {
		if strings.HasSuffix(m.subject, ".run") {
			lastRunLevel = i
		}
	}
	require.GreaterOrEqual(b, lastRunLevel, 0)
	old := []byte(tmpl)
	finals := make([]natsjs.PubAckFuture, n)
	for i := range n {
		id := fmt.Sprintf("%0*d", len(tmpl), i)
		for j, m := range evs {
			subj := bytes.ReplaceAll([]byte(m.subject), old, []byte(id))
			data := bytes.ReplaceAll(m.data, old, []byte(id))
			f, err := js.PublishAsync(string(subj), data)
			if err != nil {
				b.Fatal(err)
			}
			if j == lastRunLevel {
				finals[i] = f
			}
		}
	}
	for i, f := range finals {
		select {
		case ack := <-f.Ok():
			e := entry
			e.Run, e.Seq = fmt.Sprintf("%0*d", len(tmpl), i), ack.Sequence
			sn := snap
			sn.Seq, sn.Status = ack.Sequence, bytes.ReplaceAll(snap.Status, old, []byte(e.Run))
			sdata, err := json.Marshal(sn)
			require.NoError(b, err)
			data, err := json.Marshal(e)
			require.NoError(b, err)
			m := nats.NewMsg("$KV." + events.RunsBucket + "." + e.Run)
			m.Header.Set("Sy-Final-Run", string(data))
			m.Data = sdata
			if _, err := js.PublishMsgAsync(m); err != nil {
				b.Fatal(err)
			}
		case err := <-f.Err():
			b.Fatal(err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(5 * time.Minute):
		b.Fatal("seeding did not complete")
	}
}

// signalHandler is a slog.Handler that signals ch when a record with msg
// is logged, and discards everything.
type signalHandler struct {
	msg string
	ch  chan struct{}
}

func (h signalHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h signalHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		select {
		case h.ch <- struct{}{}:
		default:
		}
	}
	return nil
}
func (h signalHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h signalHandler) WithGroup(string) slog.Handler      { return h }
