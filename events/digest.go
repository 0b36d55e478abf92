package events

import (
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"hash"
	"strings"
	"sync"

	"github.com/switchyard-dev/switchyard/policy"
)

// DigestPrefix starts every digest this package writes or accepts.
const DigestPrefix = "sha256:"

// Digest is "sha256:" followed by the lowercase hex SHA-256 of b. Sheet,
// prompt, receipt and policy-input digests all use this form.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return digestText(&sum)
}

// digestText is DigestPrefix and sum in lowercase hex, built in one
// allocation.
func digestText(sum *[sha256.Size]byte) string {
	var t [len(DigestPrefix) + 2*sha256.Size]byte
	copy(t[:], DigestPrefix)
	hex.Encode(t[len(DigestPrefix):], sum[:])
	return string(t[:])
}

// policyInput is the canonical form hashed by InputDigest. Its key order and
// names are part of the wire format: changing them changes every recorded
// digest.
type policyInput struct {
	Lane  policy.LanePolicy `json:"lane"`
	State policy.LaneState  `json:"state"`
}

// InputDigest is the digest of a decision's policy input: Digest over the
// canonical JSON {"lane":<lane policy>,"state":<lane state>}, where canonical
// means encoding/json's output for the policy types (struct field order, no
// insignificant whitespace, HTML-escaped). Replay recomputes it from the
// recorded inputs and compares it with the decision event's InputDigest.
func InputDigest(lane policy.LanePolicy, state policy.LaneState) (string, error) {
	b, err := json.Marshal(policyInput{Lane: lane, State: state})
	if err != nil {
		return "", err
	}
	return Digest(b), nil
}

// LaneInput is one lane's part of the canonical policy input, hashed
// once: a lane's policy is frozen at run-created, so a caller deciding the
// same lane many times (the engine, replay) keeps the SHA-256 state after
// {"lane":<lane policy>,"state": (as the hash's marshaled state) and, at
// each decision, restores it into a pooled hash and hashes only the
// state's encoding. Digest gives InputDigest's value
// (TestInputDigestOfMatches). A LaneInput is immutable; Digest may be
// called from several goroutines.
type LaneInput struct {
	prefix []byte // the SHA-256 state after the lane's part, marshaled
}

// sha256s are the hashes Digest restores a LaneInput's prefix into.
var sha256s = sync.Pool{New: func() any { return sha256.New() }}

// NewLaneInput encodes lane as InputDigest does and hashes it.
func NewLaneInput(lane policy.LanePolicy) (*LaneInput, error) {
	bp := digestBufs.Get().(*[]byte)
	defer putDigestBuf(bp)
	b := append((*bp)[:0], `{"lane":`...)
	b, err := appendJSON(b, &lane)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"state":`...)
	*bp = b
	h := sha256.New()
	h.Write(b)
	prefix, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return nil, err
	}
	return &LaneInput{prefix: prefix}, nil
}

// Digest is InputDigest(lane, state) for the lane l was made from. The
// state is encoded by the generated encoder (json.Marshal's bytes;
// json.Marshal itself for a value it declines) into a pooled buffer.
func (l *LaneInput) Digest(state policy.LaneState) (string, error) {
	c := sha256s.Get().(hash.Hash)
	defer sha256s.Put(c)
	if err := c.(encoding.BinaryUnmarshaler).UnmarshalBinary(l.prefix); err != nil {
		return "", err
	}
	bp := digestBufs.Get().(*[]byte)
	defer putDigestBuf(bp)
	b := canonAppendLaneState((*bp)[:0], &state)
	if b == nil {
		st := state // json.Marshal's argument is moved to the heap; state is not
		var err error
		if b, err = appendJSON((*bp)[:0], &st); err != nil {
			return "", err
		}
	}
	b = append(b, '}')
	c.Write(b)
	// The sum goes into the pooled buffer: a local array passed through
	// hash.Hash would be moved to the heap.
	b = c.Sum(b[:0])
	*bp = b
	return digestText((*[sha256.Size]byte)(b)), nil
}

// digestBufs are the buffers NewLaneInput and Digest encode into; one
// grown past 64 KiB is not kept.
var digestBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func putDigestBuf(bp *[]byte) {
	if cap(*bp) > 64<<10 {
		*bp = make([]byte, 0, 4096)
	}
	digestBufs.Put(bp)
}

// validDigest reports whether s is "sha256:" + 64 lowercase hex digits.
func validDigest(s string) bool {
	h, ok := strings.CutPrefix(s, DigestPrefix)
	if !ok || len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func requireDigest(field, v string) error {
	if !validDigest(v) {
		return invalidf("%s %q: want sha256:<64 lowercase hex digits>", field, v)
	}
	return nil
}
