package engine

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
)

// TestDiffJSONTypes guards diffJSON's shortcut: every type reachable from
// the values it compares holds only kinds whose deeply equal values encode
// alike. A float (0 == -0, yet they encode apart), an interface, a map or a
// type with its own encoder added to policy.Decision, policy.Event or
// policy.LanePolicy fails here, and then diffJSON must lose its shortcut for that type.
func TestDiffJSONTypes(t *testing.T) {
	marshaler := reflect.TypeFor[json.Marshaler]()
	textMarshaler := reflect.TypeFor[interface{ MarshalText() ([]byte, error) }]()
	seen := map[reflect.Type]bool{}
	var walk func(path string, tp reflect.Type)
	walk = func(path string, tp reflect.Type) {
		if seen[tp] {
			return
		}
		seen[tp] = true
		require.False(t, tp.Implements(marshaler) || reflect.PointerTo(tp).Implements(marshaler), "%s (%s) has its own JSON encoder", path, tp)
		require.False(t, tp.Implements(textMarshaler) || reflect.PointerTo(tp).Implements(textMarshaler), "%s (%s) has its own text encoder", path, tp)
		switch tp.Kind() {
		case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(path+"[]", tp.Elem())
		case reflect.Struct:
			for i := range tp.NumField() {
				f := tp.Field(i)
				walk(path+"."+f.Name, f.Type)
			}
		default:
			t.Fatalf("%s is a %s (%s): deeply equal values may encode apart", path, tp.Kind(), tp)
		}
	}
	walk("Decision", reflect.TypeFor[policy.Decision]())
	walk("Event", reflect.TypeFor[policy.Event]())
	walk("Lanes", reflect.TypeFor[[]policy.LanePolicy]())
}

// TestDiffJSON: deeply equal values are equal (the generated comparison
// says so, and diffJSON encodes neither); values that differ only
// where the encoding cannot tell (nil and empty under omitempty, two
// invalid UTF-8 strings) are equal too, as with jsonText; values whose
// encodings differ are reported with both texts.
func TestDiffJSON(t *testing.T) {
	idx := 1
	launch := policy.Decision{Kind: policy.DecideLaunch, AttemptIndex: &idx, Execution: 1,
		Attempt: &policy.AttemptPolicy{Descriptor: "codex:gpt@high"}}
	same := launch
	other := 1
	same.AttemptIndex = &other // another pointer to an equal value
	require.True(t, events.SameDecision(&launch, &same))
	_, _, differ := diffJSON(launch, same, events.SameDecision(&launch, &same))
	require.False(t, differ)

	stop := policy.Stop(policy.StopChainExhausted)
	require.False(t, events.SameDecision(&launch, &stop))
	e, a, differ := diffJSON(launch, stop, events.SameDecision(&launch, &stop))
	require.True(t, differ)
	require.Equal(t, jsonText(launch), e)
	require.Equal(t, jsonText(stop), a)

	// Not deeply equal, but one text: compared as jsonText compares.
	ev := policy.Event{Status: policy.OutcomeFailed, Execution: &policy.ExecutionIdentity{ID: "x\xff"}}
	ev2 := policy.Event{Status: policy.OutcomeFailed, Execution: &policy.ExecutionIdentity{ID: "x\xfe"}}
	require.False(t, reflect.DeepEqual(ev, ev2))
	require.False(t, events.SameEvent(&ev, &ev2))
	_, _, differ = diffJSON(ev, ev2, events.SameEvent(&ev, &ev2))
	require.Equal(t, jsonText(ev) != jsonText(ev2), differ)
	require.False(t, differ)

	started := true
	ev3 := policy.Event{Status: policy.OutcomeFailed, ProcessStarted: &started}
	failed := policy.Event{Status: policy.OutcomeFailed}
	require.False(t, events.SameEvent(&failed, &ev3))
	e, a, differ = diffJSON(failed, ev3, events.SameEvent(&failed, &ev3))
	require.True(t, differ)
	require.Equal(t, `{"attemptIndex":0,"status":"failed"}`, e)
	require.Equal(t, `{"attemptIndex":0,"status":"failed","processStarted":true}`, a)
}
