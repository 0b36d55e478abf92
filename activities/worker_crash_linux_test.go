package activities

import (
	"encoding/json"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simconfig"
)

// The worker's child dies with it through Linux's parent-death signal
// (proc_linux.go); elsewhere the worker has no such guarantee, so this
// test exists on Linux only (by file name).

// TestWorkerCrash SIGKILLs a worker process while its child runs: the
// child dies with it (parent-death signal), and a second worker, once the
// job comes back after the ack wait and the lease has gone stale, reports
// the execution abandoned without running it again.
func TestWorkerCrash(t *testing.T) {
	t.Parallel()
	e := newWorkerEnv(t, simconfig.ScenarioLongRunning, true)
	job := e.newJob(0)
	e.publish(job)

	cfg, err := json.Marshal(workerProcessConfig{URL: e.srv.ClientURL(), WorkerID: "doomed-worker",
		LeaseTTL: testLeaseTTL, AckWait: testAckWait, Env: e.env, KillGrace: 500 * time.Millisecond})
	require.NoError(t, err)
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), envWorkerProcess+"="+string(cfg))
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	waited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(waited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-waited
		if t.Failed() {
			t.Logf("worker process output:\n%s", out.String())
		}
	})

	claimed := e.waitReport(events.ReportClaimed, job.ExecutionID)
	require.Equal(t, "doomed-worker", claimed.WorkerID)
	inv := e.waitWorkload(job)
	require.Equal(t, cmd.Process.Pid, inv.Ppid, "the worker process started the CLI itself")
	require.False(t, processGone(inv.Pid))

	killedAt := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	<-waited
	require.Eventually(t, func() bool { return processGone(inv.Pid) }, waitLong, 10*time.Millisecond,
		"the simulated CLI (pid %d) outlived its killed worker", inv.Pid)

	w := e.startWorker(e.workerConfig("worker-b"))
	ab := e.waitReport(events.ReportAbandoned, job.ExecutionID)
	w.waitEvent(t, evAbandonedStale, job.ExecutionID, 1)
	bound := testAckWait + testLeaseTTL + 10*time.Second // redelivery + staleness + scheduling slack on a loaded machine
	require.Less(t, time.Since(killedAt), bound, "abandoned within a time set by the ack wait and the lease")
	require.Equal(t, "worker-b", ab.WorkerID)
	require.Equal(t, []events.ReportKind{events.ReportClaimed, events.ReportAbandoned},
		kinds(reportsOf(e.reports.snapshot(), job.ExecutionID)))
	require.Len(t, e.workloads(job), 1, "an abandoned execution is never relaunched")
	require.Empty(t, e.signalsTo(inv.Pid), "the child was killed outright, not asked to stop")
	l := e.claimOf(job)
	require.Equal(t, events.LeaseAbandoned, l.State)
	require.Equal(t, "worker-b", l.AbandonedBy)
}
