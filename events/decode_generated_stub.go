//go:build nogendecode

package events

import (
	"reflect"

	"github.com/switchyard-dev/switchyard/policy"
)

// canonPayloadFrom declines every payload in a build without the generated
// decoders: go test -tags nogendecode ./events -run
// TestGeneratedDecodersAreCurrent -update-decoders writes them again when
// decode_generated.go no longer compiles after a payload type changed.
func canonPayloadFrom(Type, canonDec) (Payload, bool) { return nil, false }

// canonStored declines every record, like canonPayload.
func canonStored(any, []byte) bool { return false }

// canonAppend declines every value: json.Marshal encodes it.
func canonAppend([]byte, any) []byte { return nil }

// canonAppendLaneState declines, like canonAppend.
func canonAppendLaneState([]byte, *policy.LaneState) []byte { return nil }

// canonAppendLanePolicy declines, like canonAppend.
func canonAppendLanePolicy([]byte, *policy.LanePolicy) []byte { return nil }

// SameDecision is reflect.DeepEqual in a build without the generated code.
func SameDecision(a, b *policy.Decision) bool { return reflect.DeepEqual(a, b) }

// SameEvent is reflect.DeepEqual in a build without the generated code.
func SameEvent(a, b *policy.Event) bool { return reflect.DeepEqual(a, b) }

// SameLanePolicy is reflect.DeepEqual in a build without the generated code.
func SameLanePolicy(a, b *policy.LanePolicy) bool { return reflect.DeepEqual(a, b) }
