package eventstest

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
)

// RunQueueReportsConformance checks the reports half of the Queue contract
// (PublishReport, SubscribeReports, WatchReports and LastReportSeq) on
// fresh queues from newQueue. Queues may share a backend: every subtest
// uses its own run ids. RunQueueJobsConformance checks the other half; a
// Queue passes both.
func RunQueueReportsConformance(t *testing.T, newQueue func(t *testing.T) events.Queue) {
	t.Run("reports stream in order per run, once each", func(t *testing.T) {
		t.Parallel()
		q, run, other := newQueue(t), NewRunID(), NewRunID()
		x := NewExecutionID()
		claimed := SampleReport(events.ReportClaimed, run, 0, x, "w1")
		s1, err := q.PublishReport(testCtx(t), claimed)
		require.NoError(t, err)
		dup, err := q.PublishReport(testCtx(t), claimed)
		require.NoError(t, err)
		require.Equal(t, s1, dup, "a retried report returns the original sequence")
		_, err = q.PublishReport(testCtx(t), SampleReport(events.ReportClaimed, other, 0, NewExecutionID(), "w1"))
		require.NoError(t, err)

		ctx, cancel := context.WithCancel(testCtx(t))
		ch, err := q.SubscribeReports(ctx, run, 0)
		require.NoError(t, err)
		got := receive(t, ch)
		require.NoError(t, got.Err)
		require.Equal(t, s1, got.Seq)
		claimed.Schema = events.JobSchemaVersion
		require.Equal(t, claimed, got.Report)

		finished := SampleReport(events.ReportFinished, run, 0, x, "w1")
		s2, err := q.PublishReport(testCtx(t), finished)
		require.NoError(t, err)
		got = receive(t, ch)
		require.Equal(t, s2, got.Seq, "only this run's reports, then new ones")
		require.Equal(t, events.ReportFinished, got.Report.Kind)

		after, err := q.SubscribeReports(ctx, run, s1)
		require.NoError(t, err)
		require.Equal(t, s2, receive(t, after).Seq)
		cancel()
		requireClosed(t, ch)
		requireClosed(t, after)

		_, err = q.PublishReport(testCtx(t), events.Report{Run: run})
		require.ErrorIs(t, err, events.ErrInvalid)
	})

	t.Run("every run's reports are watched in order; the last sequence is known per run and in all", func(t *testing.T) {
		t.Parallel()
		q, run, other, quiet := newQueue(t), NewRunID(), NewRunID(), NewRunID()
		n, err := q.LastReportSeq(testCtx(t), quiet)
		require.NoError(t, err)
		require.Zero(t, n, "a run with no report")
		base, err := q.LastReportSeq(testCtx(t), "")
		require.NoError(t, err)

		x := NewExecutionID()
		s1, err := q.PublishReport(testCtx(t), SampleReport(events.ReportClaimed, run, 0, x, "w1"))
		require.NoError(t, err)
		s2, err := q.PublishReport(testCtx(t), SampleReport(events.ReportClaimed, other, 1, NewExecutionID(), "w1"))
		require.NoError(t, err)
		// A redelivered report is stored once per delivery count.
		redo := SampleReport(events.ReportRedelivered, run, 0, x, "w2")
		s3, err := q.PublishReport(testCtx(t), redo)
		require.NoError(t, err)
		again, err := q.PublishReport(testCtx(t), redo)
		require.NoError(t, err)
		require.Equal(t, s3, again, "the same delivery reported again is stored once")
		redo.Delivery++
		s4, err := q.PublishReport(testCtx(t), redo)
		require.NoError(t, err)
		require.Greater(t, s4, s3, "a later delivery is a report of its own")

		for _, c := range []struct {
			run  string
			want uint64
		}{{run, s4}, {other, s2}, {quiet, 0}} {
			got, err := q.LastReportSeq(testCtx(t), c.run)
			require.NoError(t, err)
			require.Equal(t, c.want, got, "last report of %q", c.run)
		}
		all, err := q.LastReportSeq(testCtx(t), "")
		require.NoError(t, err)
		require.GreaterOrEqual(t, all, s4, "the newest of any run (other subtests may share the backend)")
		_, err = q.LastReportSeq(testCtx(t), "no spaces")
		require.ErrorIs(t, err, events.ErrInvalid)

		ctx, cancel := context.WithCancel(testCtx(t))
		defer cancel()
		ch, err := q.WatchReports(ctx, base)
		require.NoError(t, err)
		for _, want := range []struct {
			seq uint64
			run string
		}{{s1, run}, {s2, other}, {s3, run}, {s4, run}} {
			got := receiveOf(t, ch, run, other, quiet)
			require.NoError(t, got.Err)
			require.Equal(t, want.seq, got.Seq)
			require.Equal(t, want.run, got.Run)
			require.Equal(t, want.run, got.Report.Run)
		}
		late, err := q.WatchReports(ctx, s3)
		require.NoError(t, err)
		require.Equal(t, s4, receiveOf(t, late, run, other, quiet).Seq, "after a sequence")
		s5, err := q.PublishReport(testCtx(t), SampleReport(events.ReportClaimed, quiet, 0, NewExecutionID(), "w1"))
		require.NoError(t, err)
		got := receiveOf(t, ch, run, other, quiet)
		require.Equal(t, s5, got.Seq, "then new ones")
		require.Equal(t, quiet, got.Run)
		cancel()
		requireClosed(t, ch)
		requireClosed(t, late)
	})
}

// receiveOf is receive, skipping deliveries of runs other than runs (from
// subtests sharing the backend).
func receiveOf(t *testing.T, ch <-chan events.ReportDelivery, runs ...string) events.ReportDelivery {
	t.Helper()
	for {
		got := receive(t, ch)
		if slices.Contains(runs, got.Run) {
			return got
		}
	}
}
