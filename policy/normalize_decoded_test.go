package policy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// reference is the strict walk's answer for a receipt's encoding,
// computed once per receipt: the strict decoder is the slow part of these
// tests, and DecodeReceipt's own fast path shares checkDecodedReceipt, so
// it cannot be the reference.
type reference struct {
	data   []byte   // json.Marshal(r)
	r      *Receipt // decodeReceiptStrict(data)
	err    error
	encErr *ReceiptEncodeError // r cannot be encoded at all
}

func referenceOf(r *Receipt) reference {
	data, err := json.Marshal(r)
	if err != nil {
		return reference{encErr: &ReceiptEncodeError{Err: err}}
	}
	ref := reference{data: data}
	ref.r, ref.err = decodeReceiptStrict(data)
	return ref
}

// normalize is Normalize over the reference's bytes with the strict walk.
func (ref reference) normalize(in NormalizeInput) (Event, error) {
	if ref.encErr != nil {
		return Event{}, ref.encErr
	}
	in.Receipt = ref.data
	return normalizeWith(in, func([]byte) (*Receipt, error) { return ref.r, ref.err })
}

// requireSameNormalize checks that NormalizeReceipt(in, r) is exactly
// Normalize over r's bytes with the strict walk: the same Event, or the
// same error text and class. It returns the error, for callers that count
// outcomes.
func requireSameNormalize(t testing.TB, in NormalizeInput, r *Receipt) error {
	t.Helper()
	return requireSameNormalizeRef(t, in, r, referenceOf(r))
}

func requireSameNormalizeRef(t testing.TB, in NormalizeInput, r *Receipt, ref reference) error {
	t.Helper()
	want, wantErr := ref.normalize(in)
	in.Receipt = []byte("not read: NormalizeReceipt takes the decoded receipt")
	got, err := NormalizeReceipt(in, r)
	requireSameResult(t, want, wantErr, got, err)
	return err
}

func requireSameResult(t testing.TB, want Event, wantErr error, got Event, err error) {
	t.Helper()
	require.Equal(t, want, got)
	if wantErr == nil {
		require.NoError(t, err)
		return
	}
	require.Error(t, err, "the strict path says %v", wantErr)
	require.Equal(t, wantErr.Error(), err.Error())
	require.Equal(t, IsUsage(wantErr), IsUsage(err), "usage class of %v", err)
	require.Equal(t, IsPolicy(wantErr), IsPolicy(err), "policy class of %v", err)
	var ee *ReceiptEncodeError
	require.Equal(t, errors.As(wantErr, &ee), errors.As(err, &ee))
}

// requireSameOnBytes checks DecodeReceipt and Normalize, whichever path
// they take, on r's encodings (encoding/json's, and the runner's indented
// and on one line) against the strict walk's answer for them. The
// encodings differ only in layout and HTML escapes, which decode alike, and
// stay far below MaxReceiptBytes here, so one strict walk answers for all.
func requireSameOnBytes(t testing.TB, in NormalizeInput, r *Receipt, ref reference) {
	t.Helper()
	if ref.encErr != nil {
		return // no bytes: NaN or infinite costUsd
	}
	require.Less(t, len(ref.data), MaxReceiptBytes/2)
	for _, b := range [][]byte{ref.data, runnerEncoding(t, r, "")} {
		got, err := DecodeReceipt(b)
		require.Equal(t, ref.r, got, "%s", b)
		require.Equal(t, fmt.Sprint(ref.err), fmt.Sprint(err))
	}
	want, wantErr := ref.normalize(in)
	in.Receipt = runnerEncoding(t, r, "  ")
	ev, err := Normalize(in)
	requireSameResult(t, want, wantErr, ev, err)
}

// runnerEncoding is a receipt as the runner writes it (activities/runner's
// encodeReceipt): no HTML escaping, indented or on one line, newline-ended.
func runnerEncoding(t testing.TB, r *Receipt, indent string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	require.NoError(t, enc.Encode(r))
	return b.Bytes()
}

// requireSameDecode checks that DecodeReceipt(b), whichever path it takes,
// is exactly the strict walk's result: the same receipt, or the same error
// (text, class and sentinel).
func requireSameDecode(t testing.TB, b []byte) {
	t.Helper()
	want, wantErr := decodeReceiptStrict(b)
	got, err := DecodeReceipt(b)
	require.Equal(t, want, got, "%s", b)
	if wantErr == nil {
		require.NoError(t, err)
		return
	}
	require.EqualError(t, err, wantErr.Error())
	require.Equal(t, IsPolicy(wantErr), IsPolicy(err))
	require.Equal(t, errors.Is(wantErr, ErrReceiptNotJSON), errors.Is(err, ErrReceiptNotJSON))
	require.Equal(t, errors.Is(wantErr, ErrReceiptTooLarge), errors.Is(err, ErrReceiptTooLarge))
}

// matchingInput is the NormalizeInput whose attempt, parent, mode and
// contract are the receipt's own, so the identity checks pass and the
// later rules are reached.
func matchingInput(r *Receipt) NormalizeInput {
	in := solInput(nil)
	in.Parent, in.Mode, in.Contract = r.Parent, r.Mode, receiptContract(r)
	in.Attempt.Attempt = Attempt{Kind: KindDescriptor, Provider: r.Provider, Model: r.Model, Effort: r.Effort}
	in.Attempt.APISpend = receiptAPISpend(r)
	if r.ReceiptPath != "" {
		in.ReceiptPath = r.ReceiptPath
	}
	return in
}

// inputsFor are the inputs each receipt is normalized under: the fixture
// attempt (mostly identity mismatches), the receipt's own identity, and
// that identity under the other contract and mode.
func inputsFor(r *Receipt) []NormalizeInput {
	own := matchingInput(r)
	other := own
	other.Contract = ContractStrict
	if own.Contract == ContractStrict {
		other.Contract = ""
	}
	other.Mode = ReadOnly
	if own.Mode == ReadOnly {
		other.Mode = IsolatedWrite
	}
	return []NormalizeInput{solInput(nil), own, other}
}

// repoReceipts collects every receipt fixture in the repository: the
// policy fixtures, the receipts in the runner's CLI goldens (placeholders
// filled in), and the receipts recorded in finish events (the events
// goldens and the recorded replay log).
func repoReceipts(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, name := range receiptFixtures {
		out["policy/"+name] = fixtureBytes(t, name)
	}
	goldens, err := filepath.Glob("../cmd/switchyard/testdata/runner/*/*.golden")
	require.NoError(t, err)
	fill := strings.NewReplacer("$WORK", "/work/x", "$BIN", "/usr/local/bin", `"<elapsedMs>"`, "1234")
	for _, g := range goldens {
		b, err := os.ReadFile(g)
		require.NoError(t, err)
		_, rest, ok := strings.Cut(string(b), "--- receipt file\n")
		if !ok {
			continue
		}
		if i := strings.Index(rest, "\n--- "); i >= 0 {
			rest = rest[:i]
		}
		if strings.TrimSpace(rest) == "(absent)" {
			continue
		}
		out[g] = []byte(fill.Replace(rest))
	}
	finishReceipt := func(name string, env []byte) {
		var e struct {
			Type    string `json:"type"`
			Payload struct {
				Receipt json.RawMessage `json:"receipt"`
			} `json:"payload"`
		}
		require.NoError(t, json.Unmarshal(env, &e), name)
		if e.Type == "finish" && len(e.Payload.Receipt) > 0 {
			out[name] = e.Payload.Receipt
		}
	}
	events, err := filepath.Glob("../events/testdata/golden/finish*.golden")
	require.NoError(t, err)
	for _, g := range events {
		b, err := os.ReadFile(g)
		require.NoError(t, err)
		finishReceipt(g, b)
	}
	f, err := os.Open("../engine/testdata/replay/panel.jsonl")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for n := 1; sc.Scan(); n++ {
		finishReceipt(fmt.Sprintf("engine/testdata/replay/panel.jsonl:%d", n), sc.Bytes())
	}
	require.NoError(t, sc.Err())
	return out
}

// TestNormalizeReceiptRepoFixtures: for every receipt in the repository,
// decoding it strictly and normalizing the decoded receipt gives what
// Normalize gives for its bytes, under matching and mismatching inputs.
func TestNormalizeReceiptRepoFixtures(t *testing.T) {
	t.Parallel()
	receipts := repoReceipts(t)
	require.GreaterOrEqual(t, len(receipts), 5+48+2+1, "fixtures found: %d", len(receipts))
	accepted := 0
	for name, b := range receipts {
		r, err := decodeReceiptStrict(b)
		require.NoError(t, err, "%s: %s", name, b)
		for _, in := range inputsFor(r) {
			in.Receipt = b
			want, wantErr := normalizeWith(in, decodeReceiptStrict)
			in.Receipt = nil
			got, err := NormalizeReceipt(in, r)
			require.Equal(t, want, got, name)
			if wantErr != nil {
				require.EqualError(t, err, wantErr.Error(), name)
				require.Equal(t, IsPolicy(wantErr), IsPolicy(err))
				continue
			}
			require.NoError(t, err, name)
			accepted++
			requireSameNormalize(t, in, r)
		}
	}
	require.Greater(t, accepted, len(receipts)/2, "most fixtures normalize under their own identity")
}

func ptr[T any](v T) *T { return &v }

// receiptMutations change one member of a decoded receipt toward every
// rule DecodeReceipt and Normalize apply to it: each vocabulary, range,
// presence rule (empty = omitted by encoding/json), nil slices (null),
// and values encoding/json rewrites or refuses.
var receiptMutations = map[string]func(*Receipt){
	"schema 0":                 func(r *Receipt) { r.SchemaVersion = 0 },
	"schema 1":                 func(r *Receipt) { r.SchemaVersion = 1 },
	"schema 2":                 func(r *Receipt) { r.SchemaVersion = 2 },
	"schema 3":                 func(r *Receipt) { r.SchemaVersion = 3 },
	"schema -1":                func(r *Receipt) { r.SchemaVersion = -1 },
	"status empty":             func(r *Receipt) { r.Status = "" },
	"status unknown":           func(r *Receipt) { r.Status = "succeeded" },
	"parent empty":             func(r *Receipt) { r.Parent = "" },
	"parent gemini":            func(r *Receipt) { r.Parent = "gemini" },
	"parent codex":             func(r *Receipt) { r.Parent = ParentCodex },
	"provider unknown":         func(r *Receipt) { r.Provider = "openai" },
	"provider gemini":          func(r *Receipt) { r.Provider = Gemini },
	"provider claude":          func(r *Receipt) { r.Provider = Claude },
	"model blank":              func(r *Receipt) { r.Model = " \t" },
	"model other":              func(r *Receipt) { r.Model = "gpt-x" },
	"model invalid UTF-8":      func(r *Receipt) { r.Model = "gpt-\xff" },
	"effort empty":             func(r *Receipt) { r.Effort = "" },
	"effort unknown":           func(r *Receipt) { r.Effort = "ultra" },
	"effort low":               func(r *Receipt) { r.Effort = EffortLow },
	"mode empty":               func(r *Receipt) { r.Mode = "" },
	"mode read-only":           func(r *Receipt) { r.Mode = ReadOnly },
	"mode unknown":             func(r *Receipt) { r.Mode = "write" },
	"cwd relative":             func(r *Receipt) { r.Cwd = "rel/dir" },
	"cwd unclean":              func(r *Receipt) { r.Cwd = "/a/../b" },
	"outputPath empty":         func(r *Receipt) { r.OutputPath = "" },
	"receiptPath empty":        func(r *Receipt) { r.ReceiptPath = "" },
	"receiptPath other":        func(r *Receipt) { r.ReceiptPath = "/other/receipt.json" },
	"receiptPath relative":     func(r *Receipt) { r.ReceiptPath = "receipt.json" },
	"receiptPath NUL":          func(r *Receipt) { r.ReceiptPath = "/a\x00b" },
	"executionId empty":        func(r *Receipt) { r.ExecutionID = "" },
	"executionId blank":        func(r *Receipt) { r.ExecutionID = " " },
	"executionId set":          func(r *Receipt) { r.ExecutionID = "x-1" },
	"canonicalPaths nil":       func(r *Receipt) { r.CanonicalPaths = nil },
	"canonicalPaths empty":     func(r *Receipt) { r.CanonicalPaths = &CanonicalPaths{} },
	"canonicalPaths relative":  func(r *Receipt) { r.CanonicalPaths = &CanonicalPaths{Cwd: "/c", Output: "o", Receipt: "/r"} },
	"canonicalPaths set":       func(r *Receipt) { r.CanonicalPaths = &CanonicalPaths{Cwd: "/c", Output: "/o", Receipt: "/r"} },
	"elapsedMs negative":       func(r *Receipt) { r.ElapsedMs = -1 },
	"elapsedMs huge":           func(r *Receipt) { r.ElapsedMs = math.MaxInt64 },
	"executable nil":           func(r *Receipt) { r.Executable = nil },
	"preflight argv nil":       func(r *Receipt) { r.Preflight.Argv = nil },
	"preflight status empty":   func(r *Receipt) { r.Preflight.Status = "" },
	"preflight status unknown": func(r *Receipt) { r.Preflight.Status = "ok" },
	"preflight failed":         func(r *Receipt) { r.Preflight.Status = PreflightFailed },
	"argv nil":                 func(r *Receipt) { r.Argv = nil },
	"argv empty":               func(r *Receipt) { r.Argv = []string{} },
	"exitCode nil":             func(r *Receipt) { r.ExitCode = nil },
	"exitCode 0":               func(r *Receipt) { r.ExitCode = ptr(0) },
	"exitCode 1":               func(r *Receipt) { r.ExitCode = ptr(1) },
	"exitCode 124":             func(r *Receipt) { r.ExitCode = ptr(124) },
	"exitCode min":             func(r *Receipt) { r.ExitCode = ptr(math.MinInt) },
	"signal empty":             func(r *Receipt) { r.Signal = ptr("") },
	"signal blank":             func(r *Receipt) { r.Signal = ptr(" ") },
	"signal SIGTERM":           func(r *Receipt) { r.Signal = ptr("SIGTERM") },
	"signal nil":               func(r *Receipt) { r.Signal = nil },
	"modelEvidence unknown":    func(r *Receipt) { r.ModelEvidence = ptr(ModelEvidence("guess")) },
	"modelEvidence nil":        func(r *Receipt) { r.ModelEvidence = nil },
	"usage nil":                func(r *Receipt) { r.Usage = nil },
	"usage empty":              func(r *Receipt) { r.Usage = &Usage{} },
	"usage input negative":     func(r *Receipt) { r.Usage = &Usage{InputTokens: ptr(int64(-1))} },
	"usage total negative":     func(r *Receipt) { r.Usage = &Usage{OutputTokens: ptr(int64(5)), TotalTokens: ptr(int64(-5))} },
	"usage two negative":       func(r *Receipt) { r.Usage = &Usage{ReasoningTokens: ptr(int64(-1)), CachedInputTokens: ptr(int64(-2))} },
	"costUsd negative":         func(r *Receipt) { r.CostUSD = ptr(-1.0) },
	"costUsd negative zero":    func(r *Receipt) { r.CostUSD = ptr(math.Copysign(0, -1)) },
	"costUsd tiny":             func(r *Receipt) { r.CostUSD = ptr(5e-324) },
	"costUsd huge":             func(r *Receipt) { r.CostUSD = ptr(1e300) },
	"costUsd NaN":              func(r *Receipt) { r.CostUSD = ptr(math.NaN()) },
	"costUsd +Inf":             func(r *Receipt) { r.CostUSD = ptr(math.Inf(1)) },
	"error nil":                func(r *Receipt) { r.Error = nil },
	"error set":                func(r *Receipt) { r.Error = &ReceiptError{Message: "m", Evidence: "e"} },
	"error blank evidence":     func(r *Receipt) { r.Error = &ReceiptError{Message: "m", Evidence: " "} },
	"failurePhase unknown":     func(r *Receipt) { r.FailurePhase = ptr(FailurePhase("setup")) },
	"failurePhase preflight":   func(r *Receipt) { r.FailurePhase = ptr(PhasePreflight) },
	"failurePhase invocation":  func(r *Receipt) { r.FailurePhase = ptr(PhaseInvocation) },
	"failurePhase postprocess": func(r *Receipt) { r.FailurePhase = ptr(PhasePostprocess) },
	"failurePhase nil":         func(r *Receipt) { r.FailurePhase = nil },
	"processStarted nil":       func(r *Receipt) { r.ProcessStarted = nil },
	"processStarted true":      func(r *Receipt) { r.ProcessStarted = ptr(true) },
	"processStarted false":     func(r *Receipt) { r.ProcessStarted = ptr(false) },
	"apiSpend empty":           func(r *Receipt) { r.APISpend = "" },
	"apiSpend unset":           func(r *Receipt) { r.APISpend = APISpendUnset },
	"apiSpend approved":        func(r *Receipt) { r.APISpend = APISpendApproved },
	"apiSpend legacy":          func(r *Receipt) { r.APISpend = APISpendLegacy },
	"contract empty":           func(r *Receipt) { r.Contract = "" },
	"contract unknown":         func(r *Receipt) { r.Contract = "loose" },
	"contract strict":          func(r *Receipt) { r.Contract = ContractStrict },
	"contract legacy":          func(r *Receipt) { r.Contract = ContractLegacy },
	"timeoutMs nil":            func(r *Receipt) { r.TimeoutMs = nil },
	"timeoutMs 0":              func(r *Receipt) { r.TimeoutMs = ptr(int64(0)) },
	"timeoutMs negative":       func(r *Receipt) { r.TimeoutMs = ptr(int64(-1)) },
	"timeoutMs set":            func(r *Receipt) { r.TimeoutMs = ptr(int64(60000)) },
	"toolDenial permission": func(r *Receipt) {
		r.ToolDenial = &ToolDenial{Verified: true, Cause: DenialPermission, Tool: ptr("Bash")}
	},
	"toolDenial unverified":     func(r *Receipt) { r.ToolDenial = &ToolDenial{Cause: DenialUnknown} },
	"toolDenial no cause":       func(r *Receipt) { r.ToolDenial = &ToolDenial{Verified: true} },
	"toolDenial bad cause":      func(r *Receipt) { r.ToolDenial = &ToolDenial{Verified: true, Cause: "guard"} },
	"toolDenial blank tool":     func(r *Receipt) { r.ToolDenial = &ToolDenial{Verified: true, Tool: ptr(" ")} },
	"toolDenial blank action":   func(r *Receipt) { r.ToolDenial = &ToolDenial{Verified: true, RequestedAction: ptr("")} },
	"toolDenial nil":            func(r *Receipt) { r.ToolDenial = nil },
	"handoff valid":             func(r *Receipt) { r.Handoff = validHandoff() },
	"handoff no summary":        func(r *Receipt) { r.Handoff = validHandoff(); r.Handoff.Summary = " " },
	"handoff blank task":        func(r *Receipt) { r.Handoff = validHandoff(); r.Handoff.Task = "" },
	"handoff blank checkpoint":  func(r *Receipt) { r.Handoff = validHandoff(); r.Handoff.Checkpoint = "\n" },
	"handoff unknown operation": func(r *Receipt) { r.Handoff = validHandoff(); r.Handoff.Operation = "push" },
	"handoff files nil":         func(r *Receipt) { r.Handoff = validHandoff(); r.Handoff.Files = nil },
	"handoff checks nil":        func(r *Receipt) { r.Handoff = validHandoff(); r.Handoff.Checks = nil },
	"handoff task invalid UTF-8": func(r *Receipt) {
		r.Handoff = validHandoff()
		r.Handoff.Task = "t\xc3("
	},
	"handoff nil":           func(r *Receipt) { r.Handoff = nil },
	"handoffMalformed":      func(r *Receipt) { r.HandoffMalformed = true },
	"terminalSuccess nil":   func(r *Receipt) { r.TerminalSuccess = nil },
	"terminalSuccess true":  func(r *Receipt) { r.TerminalSuccess = ptr(true) },
	"terminalSuccess false": func(r *Receipt) { r.TerminalSuccess = ptr(false) },
	"sessionId escapes":     func(r *Receipt) { s := "<&>\u2028\x01\"\\"; r.SessionID = &s },
}

func validHandoff() *ReceiptHandoff {
	return &ReceiptHandoff{Task: "task-42", Checkpoint: "cp-3", Operation: OpRunChecks,
		Files: []string{"a.go"}, Checks: []string{}, Summary: "ready"}
}

// mutationBases are decoded receipts the mutations start from: every
// fixture, an eligible schema 2 receipt of every status, and schema 1
// failures started and not (the fixtures hold a schema 1 complete one).
func mutationBases(t *testing.T) []*Receipt {
	t.Helper()
	var seeds [][]byte
	for _, name := range receiptFixtures {
		seeds = append(seeds, fixtureBytes(t, name))
	}
	for _, s := range ReceiptStatuses {
		seeds = append(seeds, v2(t, eligible(s)))
	}
	seeds = append(seeds, v1(t, eligible(StatusChildFailed)), v1(t, eligible(StatusUnauthenticated)))
	var out []*Receipt
	for _, b := range seeds {
		r, err := decodeReceiptStrict(b)
		require.NoError(t, err, "%s", b)
		out = append(out, r)
	}
	return out
}

// copyReceipt is a deep copy, so a mutation never reaches the base.
func copyReceipt(_ testing.TB, r *Receipt) *Receipt {
	c := *r
	cp := func(p *string) *string {
		if p == nil {
			return nil
		}
		v := *p
		return &v
	}
	if r.CanonicalPaths != nil {
		v := *r.CanonicalPaths
		c.CanonicalPaths = &v
	}
	c.Executable, c.Signal, c.ReportedModel, c.SessionID = cp(r.Executable), cp(r.Signal), cp(r.ReportedModel), cp(r.SessionID)
	c.Preflight.Argv = slices.Clone(r.Preflight.Argv)
	c.Argv = slices.Clone(r.Argv)
	if r.ExitCode != nil {
		c.ExitCode = ptr(*r.ExitCode)
	}
	if r.ModelEvidence != nil {
		c.ModelEvidence = ptr(*r.ModelEvidence)
	}
	if r.Usage != nil {
		u := *r.Usage
		c.Usage = &u // its counts are replaced, never written through
	}
	if r.CostUSD != nil {
		c.CostUSD = ptr(*r.CostUSD)
	}
	if r.Error != nil {
		c.Error = ptr(*r.Error)
	}
	if r.FailurePhase != nil {
		c.FailurePhase = ptr(*r.FailurePhase)
	}
	if r.ProcessStarted != nil {
		c.ProcessStarted = ptr(*r.ProcessStarted)
	}
	if r.TimeoutMs != nil {
		c.TimeoutMs = ptr(*r.TimeoutMs)
	}
	if r.ToolDenial != nil {
		d := *r.ToolDenial
		d.Tool, d.RequestedAction = cp(d.Tool), cp(d.RequestedAction)
		c.ToolDenial = &d
	}
	if r.Handoff != nil {
		h := *r.Handoff
		h.Files, h.Checks = slices.Clone(h.Files), slices.Clone(h.Checks)
		c.Handoff = &h
	}
	if r.TerminalSuccess != nil {
		c.TerminalSuccess = ptr(*r.TerminalSuccess)
	}
	return &c
}

// TestNormalizeReceiptMutations: every mutation of every base receipt
// normalizes with NormalizeReceipt exactly as its bytes do with the strict
// walk, and decodes and normalizes from its encodings (encoding/json's and
// the runner's) as the strict walk does too. Every pair of mutations that
// each fail DecodeReceipt's rules on a base does too, so the first of two
// faults is the one the strict walk reports first. (Faults found after
// decoding are the same code on both paths.)
func TestNormalizeReceiptMutations(t *testing.T) {
	t.Parallel()
	bases := mutationBases(t)
	outcomes := map[string]int{}
	for _, base := range bases {
		in := matchingInput(base) // the receipt's own identity: every later rule is reached
		for name, m := range receiptMutations {
			r := copyReceipt(t, base)
			m(r)
			ref := referenceOf(r)
			err := requireSameNormalizeRef(t, in, r, ref)
			requireSameOnBytes(t, in, r, ref)
			switch {
			case err == nil:
				outcomes["accepted"]++
			case IsUsage(err):
				outcomes["usage"]++
			case IsPolicy(err):
				outcomes["policy"]++
			default:
				outcomes["other"]++
				require.ErrorAs(t, err, new(*ReceiptEncodeError), name)
			}
		}
	}
	// Each class of result is reached, so the comparison is not vacuous.
	for _, k := range []string{"accepted", "policy", "other"} {
		require.Positive(t, outcomes[k], "%v", outcomes)
	}

	names := make([]string, 0, len(receiptMutations))
	for n := range receiptMutations {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, base := range []*Receipt{bases[0], bases[1]} { // complete, schema 2 and 1
		in := matchingInput(base)
		var faults []string
		for _, n := range names {
			r := copyReceipt(t, base)
			receiptMutations[n](r)
			if encodesExactly(r) && checkDecodedReceipt(r) != nil {
				faults = append(faults, n)
			}
		}
		require.Greater(t, len(faults), 30)
		for i, a := range faults {
			for _, b := range faults[i+1:] {
				r := copyReceipt(t, base)
				receiptMutations[a](r)
				receiptMutations[b](r)
				requireSameNormalize(t, in, r)
			}
		}
	}
}

// TestNormalizeReceiptFallbacks: receipts whose bytes would differ from
// the struct take the bytes path and get Normalize's answer: invalid UTF-8
// is rewritten (so the handoff carries U+FFFD, as a decoded event would),
// an oversize receipt is the same usage error, an unencodable cost is a
// ReceiptEncodeError.
func TestNormalizeReceiptFallbacks(t *testing.T) {
	t.Parallel()
	base, err := DecodeReceipt(v2(t, eligible(StatusNeedsParentOperation)))
	require.NoError(t, err)
	in := matchingInput(base)

	r := copyReceipt(t, base)
	r.Handoff.Task = "task-\xff"
	ev, err := NormalizeReceipt(in, r)
	require.NoError(t, err)
	require.Equal(t, "task-\uFFFD", ev.Handoff.TaskID)
	requireSameNormalize(t, in, r)

	for _, evidence := range []string{
		strings.Repeat("e", MaxReceiptBytes),             // over by size alone
		strings.Repeat("\x01", MaxReceiptBytes/6+1),      // over only once escaped
		strings.Repeat("\x01", (MaxReceiptBytes-8192)/6), // under: near the bound, still exact
	} {
		r = copyReceipt(t, base)
		r.Preflight.Evidence = evidence
		err := requireSameNormalize(t, in, r)
		data, merr := json.Marshal(r)
		require.NoError(t, merr)
		if len(data) > MaxReceiptBytes {
			require.True(t, IsUsage(err), "%v", err)
			require.Contains(t, err.Error(), "exceeds 1048576 bytes")
		} else {
			require.NoError(t, err)
		}
	}

	r = copyReceipt(t, base)
	r.CostUSD = ptr(math.Inf(-1))
	_, err = NormalizeReceipt(in, r)
	var ee *ReceiptEncodeError
	require.ErrorAs(t, err, &ee)
	require.Contains(t, err.Error(), "encode receipt: json: unsupported value: -Inf")

	_, err = NormalizeReceipt(in, nil)
	require.True(t, IsPolicy(err))
	require.EqualError(t, err, mustErr(referenceOf(nil).normalize(in)).Error())

	// Usage errors on the input come first, as in Normalize.
	bad := in
	bad.ReceiptPath = ""
	_, err = NormalizeReceipt(bad, base)
	require.True(t, IsUsage(err))
	require.Contains(t, err.Error(), "--receipt is required")
}

func mustErr(_ Event, err error) error { return err }

// TestReceiptFixedBytesBound: with every string empty, the encoding of a
// receipt with every optional member present and every number at its
// widest fits receiptFixedBytes, the part of encodesExactly's size bound
// that is not strings.
func TestReceiptFixedBytesBound(t *testing.T) {
	t.Parallel()
	wide := ptr(int64(math.MinInt64))
	widest := -math.MaxFloat64 / 3 // 17 significant digits and an exponent
	r := &Receipt{
		SchemaVersion: math.MinInt, CanonicalPaths: &CanonicalPaths{}, ElapsedMs: math.MinInt64,
		Executable: ptr(""), Preflight: Preflight{Argv: []string{}}, Argv: []string{}, ExitCode: ptr(math.MinInt),
		Signal: ptr(""), ReportedModel: ptr(""), ModelVerified: false, ModelEvidence: ptr(ModelEvidence("")),
		SessionID: ptr(""), Usage: &Usage{wide, wide, wide, wide, wide, wide}, CostUSD: &widest,
		Error: &ReceiptError{}, FailurePhase: ptr(FailurePhase("")), ProcessStarted: ptr(false),
		TimeoutMs: wide, ToolDenial: &ToolDenial{Verified: false, Tool: ptr(""), RequestedAction: ptr("")},
		Handoff: &ReceiptHandoff{Files: []string{}, Checks: []string{}}, HandoffMalformed: true, TerminalSuccess: ptr(false),
	}
	data, err := json.Marshal(r)
	require.NoError(t, err)
	require.Less(t, len(data), receiptFixedBytes/2, "%s", data)
	// Every string byte costs at most six bytes once encoded.
	s, err := json.Marshal("\x01\xff\u2028")
	require.NoError(t, err)
	require.LessOrEqual(t, len(s), 6*len("\x01\xff\u2028")+2, "%s", s)
}

// FuzzNormalizeReceipt: for any bytes, DecodeReceipt gives the strict
// walk's answer; a receipt decoded leniently from them normalizes with
// NormalizeReceipt as its own encoding does with the strict walk, and its
// encodings decode and normalize as the strict walk does; and one the
// strict walk accepts normalizes as the bytes themselves do.
func FuzzNormalizeReceipt(f *testing.F) {
	for _, s := range receiptSeeds(f) {
		f.Add(s, uint8(0), true, false)
		f.Add(s, uint8(1), false, true)
	}
	f.Fuzz(func(t *testing.T, b []byte, pick uint8, writer, strict bool) {
		requireSameDecode(t, b)
		var r Receipt
		if json.Unmarshal(b, &r) != nil {
			return
		}
		ins := inputsFor(&r)
		in := ins[int(pick)%len(ins)]
		if writer {
			in.Mode = IsolatedWrite
		}
		if strict {
			in.Contract = ContractStrict
		}
		ref := referenceOf(&r)
		requireSameNormalizeRef(t, in, &r, ref)
		requireSameOnBytes(t, in, &r, ref)
		if dr, err := decodeReceiptStrict(b); err == nil {
			in.Receipt = b
			want, wantErr := normalizeWith(in, decodeReceiptStrict)
			got, err := NormalizeReceipt(in, dr)
			require.Equal(t, want, got)
			if wantErr == nil {
				require.NoError(t, err)
			} else {
				require.EqualError(t, err, wantErr.Error())
			}
		}
	})
}

// TestDecodeReceiptNonCanonicalBytes: bytes that differ from the runner's
// encoding of their receipt in one place encoding/json would let through
// (a key in another letter case, a repeated or unknown key, another
// spelling of a number or a string, null for a string, a key order, HTML
// escapes) decode exactly as the strict walk decodes them; the runner's
// own encoding, indented or not, escapes and spaces inside strings
// included, takes the fast path.
func TestDecodeReceiptNonCanonicalBytes(t *testing.T) {
	t.Parallel()
	r, err := decodeReceiptStrict(v2(t, eligible(StatusUsageExhausted)))
	require.NoError(t, err)
	r.Error.Evidence = "quota <hit> & he said \"stop here\tat  12:00 \\ done\u2028é"
	r.Error.Message = `C:\` // ends in a backslash: the closing quote is not escaped
	pretty, line := runnerEncoding(t, r, "  "), runnerEncoding(t, r, "")
	for _, b := range [][]byte{pretty, line, bytes.TrimSpace(pretty), append([]byte(" \r\n"), line...)} {
		require.NotNil(t, decodeCanonicalReceipt(b), "the runner's encoding takes the fast path: %s", b)
		requireSameDecode(t, b)
	}
	marshalled, err := json.Marshal(r) // HTML-escaped: not the runner's, still exact
	require.NoError(t, err)
	require.Nil(t, decodeCanonicalReceipt(marshalled))
	requireSameDecode(t, marshalled)

	edits := []struct{ name, old, new string }{
		{"key case", `"argv": [`, `"Argv": [`},
		{"nested key case", `"evidence": "diagnostic`, `"Evidence": "diagnostic`},
		{"status key case", `"status": "usage-exhausted"`, `"STATUS": "usage-exhausted"`},
		{"repeated key", `"model": "gpt-5.6-sol",`, `"model": "gpt-5.6-sol", "model": "gpt-5.6-sol",`},
		{"repeated key last wins", `"model": "gpt-5.6-sol",`, `"model": "x", "model": "gpt-5.6-sol",`},
		{"unknown key", `"model": "gpt-5.6-sol",`, `"model": "gpt-5.6-sol", "extra": 1,`},
		{"unknown nested key", `"status": "passed",`, `"status": "passed", "code": 0,`},
		{"number spelling", `"exitCode": 1,`, `"exitCode": 1.0,`},
		{"number exponent", `"exitCode": 1,`, `"exitCode": 1e0,`},
		{"negative zero", `"exitCode": 1,`, `"exitCode": -0,`},
		{"schemaVersion float", `"schemaVersion": 2,`, `"schemaVersion": 2.0,`},
		{"schemaVersion string", `"schemaVersion": 2,`, `"schemaVersion": "2",`},
		{"string escape", `"model": "gpt-5.6-sol"`, `"model": "gpt-5.6-so\u006c"`},
		{"HTML escape", `quota <hit>`, `quota \u003chit>`},
		{"null string", `"cwd": "/srv/switchyard/worktrees/run-7-lane-1",`, `"cwd": null,`},
		{"null required bool", `"modelVerified": false,`, `"modelVerified": null,`},
		{"explicit false handoffMalformed", `"terminalSuccess": false`, `"terminalSuccess": false, "handoffMalformed": false`},
		{"missing exitCode", `"exitCode": 1,`, ``},
		{"missing apiSpend (the encoding of an empty one)", `"apiSpend": "deny",`, ``},
		{"empty apiSpend", `"apiSpend": "deny",`, `"apiSpend": "",`},
		{"null apiSpend", `"apiSpend": "deny",`, `"apiSpend": null,`},
		{"empty receiptPath", `"receiptPath": "/srv`, `"receiptPath": "", "x": "/srv`},
		{"null usage member", `"usage": {`, `"usage": {"totalTokens": null,`},
		{"invalid UTF-8", `"gpt-5.6-sol"`, "\"gpt-5.6-sol\xff\""},
		{"lone surrogate", `"gpt-5.6-sol"`, `"gpt-5.6-sol\ud800"`},
		{"trailing data", "\n}\n", "\n} {}\n"},
		{"array for object", `"usage": {`, `"usage": [`},
		{"moved key", `  "model": "gpt-5.6-sol",` + "\n", ``},
	}
	for _, e := range edits {
		for _, base := range [][]byte{pretty, line} {
			old, repl := e.old, e.new
			if bytes.Equal(base, line) {
				old, repl = compactEdit(old), compactEdit(repl)
			}
			if !bytes.Contains(base, []byte(old)) {
				continue
			}
			b := bytes.Replace(base, []byte(old), []byte(repl), 1)
			if e.name == "moved key" {
				b = append([]byte(`{"model":"gpt-5.6-sol",`), bytes.TrimPrefix(bytes.TrimSpace(b), []byte("{"))...)
			}
			require.NotEqual(t, base, b, e.name)
			if strings.HasPrefix(e.name, "missing apiSpend") {
				require.NotNil(t, decodeCanonicalReceipt(b), e.name)
				_, err := DecodeReceipt(b)
				require.ErrorContains(t, err, "receipt apiSpend is required on a schema 2 receipt")
			} else {
				require.Nil(t, decodeCanonicalReceipt(b), "%s: not the runner's encoding", e.name)
			}
			requireSameDecode(t, b)
		}
	}
}

// compactEdit is an edit of the indented encoding for the one-line one.
func compactEdit(s string) string {
	return strings.NewReplacer(`": `, `":`, `, "`, `,"`, "\n", "").Replace(s)
}
