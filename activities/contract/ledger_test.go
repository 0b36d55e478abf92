package contract

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

func rec(ledger, id, checkpoint, state string) RecordRequest {
	r := RecordRequest{Ledger: ledger, ID: id, Task: "T-1", Checkpoint: checkpoint, Kind: policy.OpCommitCheckpoint,
		State: state, Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	switch state {
	case StatePending:
		r.Expected = []byte(`{"digest":"abc","head":"def"}`)
	case StateComplete:
		r.Result = []byte(`{"commit":"123"}`)
	}
	return r
}

func TestLedgerLifecycle(t *testing.T) {
	t.Parallel()
	ledger := filepath.Join(t.TempDir(), "ops.json")
	_, err := Status(ledger)
	require.ErrorIs(t, err, os.ErrNotExist, "a missing ledger is an error, never an empty one")

	_, err = Record(rec(ledger, "op-1", "C-1", StateComplete))
	require.True(t, IsLedgerRefusal(err), "complete needs a pending record first: %v", err)

	r, err := Record(rec(ledger, "op-1", "C-1", StatePending))
	require.NoError(t, err)
	require.Equal(t, StatePending, r.State)
	lf, err := Status(ledger)
	require.NoError(t, err)
	require.Len(t, lf.Pending(), 1)
	require.Equal(t, `{"digest":"abc","head":"def"}`, string(lf.Pending()[0].Expected), "stored compact, read back compact")

	// The same identity cannot be reserved twice, under any id.
	_, err = Record(rec(ledger, "op-2", "C-1", StatePending))
	require.ErrorContains(t, err, "reconcile the pending operation")
	// Settling checks the id's identity and the expected preconditions.
	other := rec(ledger, "op-1", "C-9", StateComplete)
	_, err = Record(other)
	require.ErrorContains(t, err, "was reserved for task")
	changed := rec(ledger, "op-1", "C-1", StateComplete)
	changed.Expected = []byte(`{"digest":"zzz","head":"def"}`)
	_, err = Record(changed)
	require.ErrorContains(t, err, "different --expected")

	r, err = Record(rec(ledger, "op-1", "C-1", StateComplete))
	require.NoError(t, err)
	require.Equal(t, StateComplete, r.State)
	require.JSONEq(t, `{"commit":"123"}`, string(r.Result))
	_, err = Record(rec(ledger, "op-1", "C-1", StateRejected))
	require.ErrorContains(t, err, "already complete")

	// A rejected operation keeps its identity: a new operation on the same
	// task/checkpoint/kind is refused; a new checkpoint is accepted.
	_, err = Record(rec(ledger, "op-3", "C-2", StatePending))
	require.NoError(t, err)
	_, err = Record(rec(ledger, "op-3", "C-2", StateRejected))
	require.NoError(t, err)
	_, err = Record(rec(ledger, "op-4", "C-2", StatePending))
	require.True(t, IsLedgerRefusal(err))
	require.ErrorContains(t, err, "rejected operation keeps its identity")
	_, err = Record(rec(ledger, "op-4", "C-3", StatePending))
	require.NoError(t, err)

	lf, err = Status(ledger)
	require.NoError(t, err)
	states := map[string]string{}
	for _, o := range lf.Operations {
		states[o.ID] = o.State
	}
	require.Equal(t, map[string]string{"op-1": "complete", "op-3": "rejected", "op-4": "pending"}, states)
	entries, err := os.ReadDir(filepath.Dir(ledger))
	require.NoError(t, err)
	for _, e := range entries {
		require.False(t, strings.Contains(e.Name(), ".tmp-"), "no temporary file left: %s", e.Name())
	}
}

func TestLedgerFailsClosedOnBadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"not json":      "{",
		"unknown key":   `{"schema":1,"operations":[],"extra":1}`,
		"other schema":  `{"schema":2,"operations":[]}`,
		"unknown state": `{"schema":1,"operations":[{"id":"a","task":"t","checkpoint":"c","kind":"commit-checkpoint","state":"done","expected":{},"pendingAt":"x"}]}`,
		"duplicate id":  `{"schema":1,"operations":[{"id":"a","task":"t","checkpoint":"c","kind":"run-checks","state":"pending","expected":{},"pendingAt":"x"},{"id":"a","task":"t","checkpoint":"d","kind":"run-checks","state":"pending","expected":{},"pendingAt":"x"}]}`,
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		_, err := Status(p)
		require.ErrorContains(t, err, "is invalid", name)
		_, err = Record(rec(p, "z", "C", StatePending))
		require.ErrorContains(t, err, "is invalid", name)
		after, _ := os.ReadFile(p)
		require.Equal(t, content, string(after), "a bad ledger is never overwritten: %s", name)
	}
}

func ledgerProcess(t *testing.T, mode, ledger, id, task, checkpoint string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envLedgerProcess+"="+mode, "LEDGER="+ledger, "ID="+id, "TASK="+task, "CHECKPOINT="+checkpoint)
	return cmd
}

// TestLedgerConcurrentProcesses races real processes on one ledger: eight
// reserving distinct operations all land (no lost update), and eight
// parents racing for one task/checkpoint identity leave exactly one
// winner.
func TestLedgerConcurrentProcesses(t *testing.T) {
	t.Parallel()
	ledger := filepath.Join(t.TempDir(), "ops.json")
	const n = 8
	run := func(same bool) []string {
		var wg sync.WaitGroup
		outs := make([]string, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				task := "distinct-" + string(rune('a'+i))
				if same {
					task = "contended"
				}
				cmd := ledgerProcess(t, "reserve", ledger, task+"-op-"+string(rune('a'+i)), task, "C-1")
				out, _ := cmd.Output()
				outs[i] = strings.TrimSpace(string(out))
			}()
		}
		wg.Wait()
		return outs
	}
	for _, o := range run(false) {
		require.Equal(t, `{"ok":true}`, o)
	}
	lf, err := Status(ledger)
	require.NoError(t, err)
	require.Len(t, lf.Operations, n, "every concurrent writer's record survives")

	wins, refused := 0, 0
	for _, o := range run(true) {
		var v struct {
			OK      bool `json:"ok"`
			Refused bool `json:"refused"`
		}
		require.NoError(t, json.Unmarshal([]byte(o), &v), o)
		if v.OK {
			wins++
		} else if v.Refused {
			refused++
		}
	}
	require.Equal(t, 1, wins, "exactly one parent reserves the contended identity")
	require.Equal(t, n-1, refused)
	lf, err = Status(ledger)
	require.NoError(t, err)
	require.Len(t, lf.Operations, 2*n-(n-1))
}

// TestLedgerKilledBetweenPendingAndComplete kills a real parent process
// with SIGKILL after its pending record is durable: the record stays
// pending (visible in Status), the identity cannot be reserved again, the
// lock died with the process, and reconciliation settles the same id.
func TestLedgerKilledBetweenPendingAndComplete(t *testing.T) {
	t.Parallel()
	ledger := filepath.Join(t.TempDir(), "ops.json")
	cmd := ledgerProcess(t, "reserve-and-hang", ledger, "op-crash", "T-1", "C-1")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "{\"ok\":true}\n", line)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	lf, err := Status(ledger)
	require.NoError(t, err)
	require.Len(t, lf.Pending(), 1)
	require.Equal(t, "op-crash", lf.Pending()[0].ID)
	_, err = Record(rec(ledger, "op-retry", "C-1", StatePending))
	require.ErrorContains(t, err, "reconcile the pending operation", "a crashed pending record is never silently replayed")
	r := rec(ledger, "op-crash", "C-1", StateComplete)
	r.Result = []byte(`{"reconciled":"commit found in git log"}`)
	got, err := Record(r)
	require.NoError(t, err)
	require.Equal(t, StateComplete, got.State)
}

// TestLedgerKilledMidWrite SIGKILLs a process that is rewriting the ledger
// as fast as it can: whatever instant the kill lands, the ledger still
// decodes, holds every record the process reported durable, and the next
// writer is not blocked by the dead process's lock.
func TestLedgerKilledMidWrite(t *testing.T) {
	t.Parallel()
	ledger := filepath.Join(t.TempDir(), "ops.json")
	for round := range 3 {
		cmd := ledgerProcess(t, "churn", ledger, "", "", "C-"+string(rune('a'+round)))
		var out bytes.Buffer
		pr, pw, err := os.Pipe()
		require.NoError(t, err)
		cmd.Stdout = pw
		require.NoError(t, cmd.Start())
		pw.Close()
		sc := bufio.NewScanner(pr)
		reported := 0
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			reported++
			if reported == 5+round*7 {
				require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
				break
			}
		}
		_ = cmd.Wait()
		pr.Close()
		lf, err := Status(ledger)
		require.NoError(t, err, "round %d: the ledger survives a kill mid-write", round)
		ids := map[string]bool{}
		for _, o := range lf.Operations {
			ids[o.ID] = true
		}
		for _, id := range strings.Fields(out.String()) {
			require.True(t, ids[id], "round %d: reported-durable %s is in the ledger", round, id)
		}
		// The dead process's lock is gone: the next writer goes through.
		_, err = Record(rec(ledger, "after-kill", "after", StatePending))
		require.NoError(t, err, "round %d", round)
		// Each round starts from a fresh file (churn ids restart at 0).
		require.NoError(t, os.Remove(ledger))
	}
}
