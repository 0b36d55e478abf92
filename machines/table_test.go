package machines_test

import (
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/machines"
)

// legal is the lane table written out edge by edge, independently of the
// package's own table, so a changed edge fails here. It is DESIGN.md's table
// except that launch and continue do not leave inspecting or
// awaiting-operation (see table.go).
var legal = []struct {
	name string
	from machines.State
	ev   machines.Event
	to   machines.State
}{
	{"first launch", machines.StateCreated, machines.EventLaunch, machines.StateLaunching},
	{"launch after an outcome", machines.StateTerminal, machines.EventLaunch, machines.StateLaunching},
	{"continue from created", machines.StateCreated, machines.EventContinue, machines.StateLaunching},
	{"continue after permission or operation", machines.StateTerminal, machines.EventContinue, machines.StateLaunching},
	{"worker claims", machines.StateLaunching, machines.EventClaim, machines.StateRunning},
	{"finish before claim (preflight or abandoned)", machines.StateLaunching, machines.EventFinish, machines.StateTerminal},
	{"finish a running attempt", machines.StateRunning, machines.EventFinish, machines.StateTerminal},
	{"inspect a started writer", machines.StateTerminal, machines.EventInspect, machines.StateInspecting},
	{"verdict returns to terminal", machines.StateInspecting, machines.EventVerdict, machines.StateTerminal},
	{"hand off an operation", machines.StateTerminal, machines.EventRequestOperation, machines.StateAwaitingOperation},
	{"operation done returns to terminal", machines.StateAwaitingOperation, machines.EventOperationDone, machines.StateTerminal},
	{"complete from created", machines.StateCreated, machines.EventComplete, machines.StateComplete},
	{"complete after an outcome", machines.StateTerminal, machines.EventComplete, machines.StateComplete},
	{"stop before any attempt", machines.StateCreated, machines.EventStop, machines.StateStopped},
	{"stop after an outcome", machines.StateTerminal, machines.EventStop, machines.StateStopped},
	{"cancel created", machines.StateCreated, machines.EventCancel, machines.StateCancelled},
	{"cancel launching", machines.StateLaunching, machines.EventCancel, machines.StateCancelled},
	{"cancel running", machines.StateRunning, machines.EventCancel, machines.StateCancelled},
	{"cancel terminal", machines.StateTerminal, machines.EventCancel, machines.StateCancelled},
	{"cancel inspecting", machines.StateInspecting, machines.EventCancel, machines.StateCancelled},
	{"cancel awaiting-operation", machines.StateAwaitingOperation, machines.EventCancel, machines.StateCancelled},
}

type pair struct {
	from machines.State
	ev   machines.Event
}

func legalSet() map[pair]machines.State {
	m := map[pair]machines.State{}
	for _, l := range legal {
		m[pair{l.from, l.ev}] = l.to
	}
	return m
}

// illegal is every State×Event pair the table must refuse.
func illegal() []pair {
	ok := legalSet()
	var out []pair
	for _, s := range machines.States {
		for _, ev := range machines.Events {
			if _, found := ok[pair{s, ev}]; !found {
				out = append(out, pair{s, ev})
			}
		}
	}
	return out
}

func TestVocabularies(t *testing.T) {
	t.Parallel()
	assert.Len(t, machines.States, 9)
	assert.Len(t, machines.Events, 11)
	for _, s := range machines.States {
		assert.True(t, s.Valid(), s)
		assert.Equal(t, s == machines.StateComplete || s == machines.StateStopped || s == machines.StateCancelled, s.Final(), s)
	}
	for _, ev := range machines.Events {
		assert.True(t, ev.Valid(), ev)
	}
	assert.False(t, machines.State("done").Valid())
	assert.False(t, machines.State("").Final())
	assert.False(t, machines.Event("audit").Valid(), "audit is a run-level no-op, not a lane event")
}

// TestTransitionsTable checks the exported table: one row per event in the
// order of Events, no self-loops (looplab/fsm reports those as
// NoTransitionError), and a copy the caller cannot use to change the
// machine.
func TestTransitionsTable(t *testing.T) {
	t.Parallel()
	rows := machines.Transitions()
	require.Len(t, rows, len(machines.Events))
	n := 0
	for i, row := range rows {
		assert.Equal(t, machines.Events[i], row.Event)
		for _, from := range row.From {
			assert.NotEqual(t, from, row.To, "%s is a self-loop", row.Event)
			n++
		}
	}
	assert.Equal(t, len(legal), n, "edges in Transitions")

	rows[0].From[0] = machines.StateRunning
	rows[0].To = machines.StateComplete
	to, err := machines.Step(machines.StateCreated, machines.EventLaunch)
	require.NoError(t, err)
	assert.Equal(t, machines.StateLaunching, to, "Transitions must return a copy")
}

func TestStepLegal(t *testing.T) {
	t.Parallel()
	for _, tc := range legal {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			to, err := machines.Step(tc.from, tc.ev)
			require.NoError(t, err)
			assert.Equal(t, tc.to, to)
		})
	}
}

// TestStepIllegal generates every State×Event pair outside the table: each
// fails with a *TransitionError naming the current state, the event and
// the state it would lead to, ErrFinal from a final state and
// ErrImpossible otherwise.
func TestStepIllegal(t *testing.T) {
	t.Parallel()
	pairs := illegal()
	require.Len(t, pairs, len(machines.States)*len(machines.Events)-len(legal))
	for _, p := range pairs {
		t.Run(fmt.Sprintf("%s from %s", p.ev, p.from), func(t *testing.T) {
			t.Parallel()
			to, err := machines.Step(p.from, p.ev)
			assert.Equal(t, p.from, to, "a refused event leaves the state")
			assertRefused(t, err, p.from, p.ev)
		})
	}
}

// assertRefused checks the error contract for a refused pair.
func assertRefused(t *testing.T, err error, from machines.State, ev machines.Event) {
	t.Helper()
	var te *machines.TransitionError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, from, te.From)
	assert.Equal(t, ev, te.Event)
	dst := destination(ev)
	assert.Equal(t, dst, te.To)
	msg := err.Error()
	assert.Contains(t, msg, string(from)+" → "+string(dst), "names both states")
	assert.Contains(t, msg, string(ev))
	if from.Final() {
		assert.ErrorIs(t, err, machines.ErrFinal)
		assert.NotErrorIs(t, err, machines.ErrImpossible)
		assert.Contains(t, msg, "final")
	} else {
		assert.ErrorIs(t, err, machines.ErrImpossible)
		assert.NotEmpty(t, te.Allowed)
		for _, s := range te.Allowed {
			assert.Contains(t, msg, string(s), "names the allowed source states")
		}
	}
}

func destination(ev machines.Event) machines.State {
	for _, l := range legal {
		if l.ev == ev {
			return l.to
		}
	}
	return ""
}

// TestWaitingStatesNeedTheParentsAnswer pins the one narrowing of
// DESIGN.md: a lane waiting on the parent leaves only with the answer
// recorded (or by cancel).
func TestWaitingStatesNeedTheParentsAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		from   machines.State
		answer machines.Event
	}{
		{"inspecting needs a verdict", machines.StateInspecting, machines.EventVerdict},
		{"awaiting-operation needs operation-done", machines.StateAwaitingOperation, machines.EventOperationDone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, ev := range machines.Events {
				_, err := machines.Step(tc.from, ev)
				if ev == tc.answer || ev == machines.EventCancel {
					assert.NoError(t, err, ev)
					continue
				}
				assert.ErrorIs(t, err, machines.ErrImpossible, ev)
			}
			_, err := machines.Step(tc.from, machines.EventContinue)
			assert.EqualError(t, err, fmt.Sprintf("impossible transition %s → launching on continue: continue leaves only created, terminal", tc.from))
		})
	}
}

func TestStepUnknownNames(t *testing.T) {
	t.Parallel()
	_, err := machines.Step(machines.StateRunning, "audit")
	assert.ErrorIs(t, err, machines.ErrUnknownEvent)
	assert.EqualError(t, err, `unknown lane event "audit" in state running`)

	_, err = machines.Step("done", machines.EventLaunch)
	assert.ErrorIs(t, err, machines.ErrUnknownState)
	assert.EqualError(t, err, `unknown lane state "done" for event launch (done → launching)`)
}

func TestTransitionErrorMessages(t *testing.T) {
	t.Parallel()
	_, err := machines.Step(machines.StateRunning, machines.EventLaunch)
	assert.EqualError(t, err, "impossible transition running → launching on launch: launch leaves only created, terminal")
	_, err = machines.Step(machines.StateComplete, machines.EventCancel)
	assert.EqualError(t, err, "impossible transition complete → cancelled on cancel: the lane is final")
	assert.True(t, errors.Is(err, machines.ErrFinal))
}

// TestFSMStringsStayInMachines proves looplab/fsm is imported only here:
// the rest of the module speaks State and Event.
func TestFSMStringsStayInMachines(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "machines") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, perr := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if perr != nil {
			return nil // a file mid-edit elsewhere is not this test's business
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(p, "github.com/looplab/fsm") {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s imports %s: only package machines may use looplab/fsm", rel, p)
			}
		}
		return nil
	})
	require.NoError(t, err)
}
