package events

import (
	"context"
	"errors"
	"regexp"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// wrongLastSeq reports whether err is JetStream's wrong-last-sequence
// rejection: code 10071 ("wrong last sequence: N", N the actual last
// sequence) or, on replicated streams with a write in flight, 10164 (no
// number).
func wrongLastSeq(err error) (code jetstream.ErrorCode, actual uint64, ok bool) {
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) {
		return 0, 0, false
	}
	switch apiErr.ErrorCode {
	case jetstream.JSErrCodeStreamWrongLastSequence:
		if m := lastSeqRE.FindStringSubmatch(apiErr.Description); m != nil {
			actual, _ = strconv.ParseUint(m[1], 10, 64)
		}
		return apiErr.ErrorCode, actual, true
	case jetstream.JSErrCodeStreamWrongLastSequenceConstant:
		return apiErr.ErrorCode, 0, true
	}
	return 0, 0, false
}

var lastSeqRE = regexp.MustCompile(`wrong last sequence: (\d+)`)

// transient reports whether a publish error may succeed if retried with the
// same message id: no answer, a timeout, or a 503 while a leader is elected.
func transient(err error) bool {
	if errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, nats.ErrConnectionReconnecting) {
		return true
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.Code == 503
}

// tooLarge translates a server-side size rejection, which the client-side
// limits should make unreachable, into ErrTooLarge.
func tooLarge(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, nats.ErrMaxPayload) ||
		(errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamMessageExceedsMaximum)
}

// translate maps a JetStream error at the seam: size rejections become
// ErrTooLarge, the engine's API proxy's refusals ErrPermissionDenied;
// everything else is wrapped with what was being done.
func translate(what string, err error) error {
	if proxyRefused(err) {
		// The engine's API proxy refused the role this request.
		return &wrapped{what: what, err: err, sentinel: ErrPermissionDenied}
	}
	if tooLarge(err) {
		return &wrapped{what: what, err: err, sentinel: ErrTooLarge}
	}
	return &wrapped{what: what, err: err}
}

type wrapped struct {
	what     string
	err      error
	sentinel error
}

func (e *wrapped) Error() string { return e.what + ": " + e.err.Error() }

func (e *wrapped) Unwrap() []error {
	if e.sentinel != nil {
		return []error{e.sentinel, e.err}
	}
	return []error{e.err}
}
