package events

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// DigestPrefix starts every digest this package writes or accepts.
const DigestPrefix = "sha256:"

// Digest is "sha256:" followed by the lowercase hex SHA-256 of b. Sheet,
// prompt, receipt and policy-input digests all use this form.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return DigestPrefix + hex.EncodeToString(sum[:])
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

// LaneInputJSON is lane's part of the canonical policy input, encoded once
// for InputDigestOf: a lane's policy is frozen at run-created, so a caller
// deciding the same lane many times (the engine, replay) need not encode
// it again for each decision.
func LaneInputJSON(lane policy.LanePolicy) ([]byte, error) {
	return json.Marshal(lane)
}

// InputDigestOf is InputDigest for a lane whose policy LaneInputJSON has
// already encoded: the same bytes hashed ({"lane":…,"state":…}, as
// encoding/json writes policyInput; TestInputDigestOfMatches).
func InputDigestOf(laneJSON []byte, state policy.LaneState) (string, error) {
	st, err := json.Marshal(state)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(`{"lane":`))
	h.Write(laneJSON)
	h.Write([]byte(`,"state":`))
	h.Write(st)
	h.Write([]byte(`}`))
	return DigestPrefix + hex.EncodeToString(h.Sum(nil)), nil
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
