package contract

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// MaxResponse bounds a final response file read by interpret and
// op-validate; a larger file is refused, never truncated.
const MaxResponse = 16 << 20

// Verdicts of a final response.
const (
	VerdictComplete  = string(policy.StatusComplete)             // ordinary completion.
	VerdictHandoff   = string(policy.StatusNeedsParentOperation) // one well-formed handoff.
	VerdictMalformed = string(policy.StatusMalformedOutput)      // fails closed.
)

// Verdict is what a final response delivers.
type Verdict struct {
	Verdict string                 `json:"verdict"`
	Handoff *policy.ReceiptHandoff `json:"handoff,omitempty"`
	// Error says why a malformed response fails closed.
	Error string `json:"error,omitempty"`
}

// Interpret reads a final response with the runner's own handoff parser
// (providers.ParseHandoff): no reserved marker is an ordinary completion;
// exactly one well-formed block ending the response is a handoff; a
// truncated, repeated, trailing or malformed block, or an empty or
// whitespace-only response, is malformed-output.
func Interpret(final []byte) Verdict {
	if len(final) == 0 {
		return Verdict{Verdict: VerdictMalformed, Error: "the final response is empty"}
	}
	if len(bytes.TrimSpace(final)) == 0 {
		// A response of blanks says nothing: not a completion.
		return Verdict{Verdict: VerdictMalformed, Error: "the final response holds only whitespace"}
	}
	h, present, err := providers.ParseHandoff(string(final))
	switch {
	case err != nil:
		return Verdict{Verdict: VerdictMalformed, Error: err.Error()}
	case present:
		return Verdict{Verdict: VerdictHandoff, Handoff: h}
	}
	return Verdict{Verdict: VerdictComplete}
}

// ReadResponse reads a final response file of at most MaxResponse bytes.
func ReadResponse(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read the final response: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read the final response: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("the final response %s is not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxResponse+1))
	if err != nil {
		return nil, fmt.Errorf("read the final response: %w", err)
	}
	if len(b) > MaxResponse {
		return nil, fmt.Errorf("the final response %s exceeds %d bytes", path, MaxResponse)
	}
	return b, nil
}
