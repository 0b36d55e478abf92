//go:build nogendecode

package events

// canonPayload declines every payload in a build without the generated
// decoders: go test -tags nogendecode ./events -run
// TestGeneratedDecodersAreCurrent -update-decoders writes them again when
// decode_generated.go no longer compiles after a payload type changed.
func canonPayload(Type, []byte) (Payload, bool) { return nil, false }

// canonStored declines every record, like canonPayload.
func canonStored(any, []byte) bool { return false }
