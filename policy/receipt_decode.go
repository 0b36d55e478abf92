package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxReceiptBytes caps the size of a receipt DecodeReceipt accepts (1 MiB).
// The runner caps every evidence block at 4000 characters, so a genuine
// receipt is a few kilobytes.
const MaxReceiptBytes = 1 << 20

// Decode failures that are not about a field: the bytes are not one JSON
// value, or there are too many of them. Normalize reports both as usage
// errors (exit 64), like the reference helper's "receipt is not valid JSON".
var (
	ErrReceiptNotJSON  = errors.New("receipt is not valid JSON")
	ErrReceiptTooLarge = errors.New("receipt exceeds 1 MiB (policy.MaxReceiptBytes)")
)

// receiptKeys are the top-level receipt keys in the runner's order.
var receiptKeys = []string{"schemaVersion", "status", "parent", "provider", "model", "effort",
	"mode", "cwd", "promptPath", "outputPath", "receiptPath", "executionId", "canonicalPaths",
	"startedAt", "completedAt", "elapsedMs", "executable", "preflight", "argv", "exitCode",
	"signal", "reportedModel", "modelVerified", "modelEvidence", "sessionId", "usage", "costUsd",
	"error", "failurePhase", "processStarted", "apiSpend", "contract", "timeoutMs", "toolDenial",
	"handoff", "handoffMalformed", "terminalSuccess", "containment"}

// schema2OnlyKeys may not appear on a schema 1 receipt.
var schema2OnlyKeys = []string{"receiptPath", "executionId", "canonicalPaths"}

// optionalKeys may be absent on any receipt: processStarted (then unknown),
// contract (then legacy) and timeoutMs (then none) included, as the
// reference accepts them missing on schema 2 too. schema1OptionalKeys may be
// absent only on schema 1 receipts written before the runner recorded them.
var (
	optionalKeys        = []string{"toolDenial", "handoff", "handoffMalformed", "terminalSuccess", "processStarted", "contract", "timeoutMs", "containment"}
	schema1OptionalKeys = []string{"apiSpend"}
)

// DecodeReceipt strictly decodes a runner receipt of schema 1 or 2.
//
// It rejects: more than MaxReceiptBytes (ErrReceiptTooLarge) or invalid JSON
// (ErrReceiptNotJSON); otherwise, with a *PolicyError naming the field, a
// non-object, a schemaVersion other than 1 or 2, unknown or duplicate keys,
// a schema-2-only field (receiptPath, executionId, canonicalPaths) or the
// needs-parent-operation status on schema 1, a missing required field, a
// value of the wrong type, and a value outside its closed vocabulary.
// Semantic checks (paths, identity, consistency) belong to Normalize.
//
// A receipt in the runner's own encoding (encoding/json without HTML
// escaping, any indentation), which is every receipt the runner writes, is
// decoded by encoding/json and checked field by field (checkDecodedReceipt);
// anything else takes the strict member-by-member walk. Both give the same
// receipt and the same errors.
func DecodeReceipt(b []byte) (*Receipt, error) {
	if len(b) > MaxReceiptBytes {
		return nil, ErrReceiptTooLarge
	}
	if r := decodeCanonicalReceipt(b); r != nil {
		if err := checkDecodedReceipt(r); err != nil {
			return nil, err
		}
		return r, nil
	}
	return decodeReceiptStrict(b)
}

// decodeCanonicalReceipt returns the receipt b holds when b is exactly the
// runner's encoding of that receipt (whitespace between tokens aside), else
// nil. Then every key is a known one spelled exactly, none repeats, every
// value is its Go type's JSON, numbers and strings are spelled as
// encoding/json spells them, and a missing member is one the encoding
// omits: the strict walk of b gives what it gives for json.Marshal(r), which
// checkDecodedReceipt computes (TestNormalizeReceiptMutations,
// TestDecodeReceiptNonCanonicalBytes, FuzzNormalizeReceipt).
func decodeCanonicalReceipt(b []byte) *Receipt {
	var r Receipt
	if json.Unmarshal(b, &r) != nil {
		return nil
	}
	var buf bytes.Buffer
	buf.Grow(len(b))
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(&r) != nil {
		return nil
	}
	if !sameCompactJSON(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))) {
		return nil
	}
	return &r
}

// sameCompactJSON reports whether b, valid JSON, equals compact once the
// whitespace between its tokens is dropped. compact has none.
func sameCompactJSON(b, compact []byte) bool {
	j := 0
	inString, escaped := false, false
	for _, c := range b {
		if !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			continue
		}
		if j >= len(compact) || compact[j] != c {
			return false
		}
		j++
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		}
	}
	return j == len(compact)
}

// decodeReceiptStrict is DecodeReceipt's member-by-member walk, for any
// bytes.
func decodeReceiptStrict(b []byte) (*Receipt, error) {
	if len(b) > MaxReceiptBytes {
		return nil, ErrReceiptTooLarge
	}
	if !json.Valid(b) {
		return nil, ErrReceiptNotJSON
	}
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		return nil, Policyf("receipt must be a JSON object")
	}
	m, err := strictObject(b, receiptKeys...)
	if err != nil {
		return nil, Policyf("receipt has %v", err)
	}
	d := &fieldDecoder{m: m, prefix: "receipt "}
	r := &Receipt{}
	v, ok := d.integer("schemaVersion")
	if !ok || (v != 1 && v != 2) {
		found := "undefined"
		if d.present("schemaVersion") {
			found = string(m["schemaVersion"])
			if len(found) > 64 {
				found = found[:64] + "…"
			}
		}
		return nil, Policyf("receipt schemaVersion must be 1 or 2, found %s", found)
	}
	r.SchemaVersion = int(v)
	for _, k := range receiptKeys {
		_, ok := m[k]
		switch {
		case ok && r.SchemaVersion == 1 && inList(schema2OnlyKeys, k):
			return nil, Policyf("receipt %s is a schema 2 field; a schema 1 receipt must not carry it", k)
		case !ok && !inList(optionalKeys, k) && !(r.SchemaVersion == 1 && (inList(schema2OnlyKeys, k) || inList(schema1OptionalKeys, k))):
			return nil, Policyf("receipt %s is required on a schema %d receipt", k, r.SchemaVersion)
		}
	}

	r.Status = ReceiptStatus(d.str("status"))
	d.check("status", r.Status.Valid(), "must be one of %s", quotedList(ReceiptStatuses))
	if d.err == nil && r.SchemaVersion == 1 && r.Status == StatusNeedsParentOperation {
		return nil, Policyf("receipt status needs-parent-operation requires schemaVersion 2")
	}
	r.Parent = Parent(d.str("parent"))
	d.check("parent", r.Parent == ParentClaude || r.Parent == ParentCodex, `must be "claude" or "codex"`)
	r.Provider = Provider(d.str("provider"))
	d.check("provider", validReceiptProvider(r.Provider), "must be one of %s", quotedList(append(Providers[:len(Providers):len(Providers)], Gemini)))
	r.Model = d.str("model")
	d.check("model", strings.TrimSpace(r.Model) != "", "must be a non-empty string")
	r.Effort = Effort(d.str("effort"))
	d.check("effort", r.Effort.Valid(), "must be one of %s", quotedList(Efforts))
	r.Mode = Access(d.str("mode"))
	d.check("mode", r.Mode == ReadOnly || r.Mode == IsolatedWrite, `must be "read-only" or "isolated-write"`)
	r.Cwd = d.str("cwd")
	r.PromptPath = d.str("promptPath")
	r.OutputPath = d.str("outputPath")
	if r.SchemaVersion == 2 {
		r.ReceiptPath = d.str("receiptPath")
		d.check("receiptPath", r.ReceiptPath != "", "must be a non-empty string")
		r.ExecutionID = d.str("executionId")
		d.check("executionId", r.ExecutionID != "", "must be a non-empty string")
		if c := d.object("canonicalPaths", []string{"cwd", "output", "receipt"}, nil); c != nil {
			r.CanonicalPaths = &CanonicalPaths{Cwd: c.str("cwd"), Output: c.str("output"), Receipt: c.str("receipt")}
			d.adopt(c)
		} else if d.err == nil {
			d.fail("canonicalPaths", "must be an object")
		}
	}
	r.StartedAt = d.str("startedAt")
	r.CompletedAt = d.str("completedAt")
	r.ElapsedMs = d.count("elapsedMs")
	r.Executable = d.nullStr("executable")
	if p := d.object("preflight", []string{"argv", "status", "evidence"}, nil); p != nil {
		r.Preflight.Argv = p.strs("argv")
		r.Preflight.Status = PreflightStatus(p.str("status"))
		p.check("status", r.Preflight.Status.Valid(), "must be one of %s", quotedList(PreflightStatuses))
		r.Preflight.Evidence = p.str("evidence")
		d.adopt(p)
	} else if d.err == nil {
		d.fail("preflight", "must be an object")
	}
	r.Argv = d.strs("argv")
	if v, ok := d.integer("exitCode"); ok {
		n := int(v)
		d.check("exitCode", int64(n) == v, "must be null or an integer")
		r.ExitCode = &n
	} else if d.err == nil && !d.isNull("exitCode") {
		d.fail("exitCode", "must be null or an integer")
	}
	r.Signal = d.nullStr("signal")
	d.check("signal", r.Signal == nil || strings.TrimSpace(*r.Signal) != "", "must be null or a non-empty string")
	r.ReportedModel = d.nullStr("reportedModel")
	r.ModelVerified = d.boolean("modelVerified")
	if s := d.nullStr("modelEvidence"); s != nil {
		e := ModelEvidence(*s)
		d.check("modelEvidence", e.Valid(), `must be "provider-report", "pinned-argv" or null`)
		r.ModelEvidence = &e
	}
	r.SessionID = d.nullStr("sessionId")
	r.Usage = d.usage()
	if d.present("costUsd") && !d.isNull("costUsd") {
		c, ok := d.number("costUsd")
		d.check("costUsd", ok && c >= 0, "must be null or a non-negative number")
		r.CostUSD = &c
	}
	if e := d.object("error", []string{"message", "evidence"}, nil); e != nil {
		r.Error = &ReceiptError{Message: e.str("message"), Evidence: e.str("evidence")}
		d.adopt(e)
	}
	if s := d.nullStr("failurePhase"); s != nil {
		p := FailurePhase(*s)
		d.check("failurePhase", p.Valid(), `must be "preflight", "invocation", "postprocess" or null`)
		r.FailurePhase = &p
	}
	r.ProcessStarted = d.optBool("processStarted")
	if d.present("apiSpend") {
		r.APISpend = APISpend(d.str("apiSpend"))
		d.check("apiSpend", r.APISpend == APISpendDeny || r.APISpend == APISpendApproved || r.APISpend == APISpendLegacy,
			`must be "deny", "approved" or "legacy"`)
	}
	if d.present("contract") {
		r.Contract = Contract(d.str("contract"))
		d.check("contract", r.Contract == ContractLegacy || r.Contract == ContractStrict, `must be "legacy" or "strict"`)
	}
	if d.present("timeoutMs") && !d.isNull("timeoutMs") {
		// As in the reference, any positive number: the runner writes whole
		// milliseconds, but 1500.5 is a valid deadline too. A fraction is
		// kept rounded up, so the value stays positive; only its presence
		// and sign decide an outcome.
		f, ok := d.number("timeoutMs")
		d.check("timeoutMs", ok && f > 0 && f <= 1<<53, "must be a positive number or null")
		v := int64(math.Ceil(f))
		r.TimeoutMs = &v
	}
	r.ToolDenial = d.toolDenial()
	r.Handoff = d.handoff()
	if b := d.optBool("handoffMalformed"); b != nil {
		r.HandoffMalformed = *b
	}
	r.TerminalSuccess = d.optBool("terminalSuccess")
	r.Containment = d.containment()
	if d.err != nil {
		return nil, d.err
	}
	return r, nil
}

func (d *fieldDecoder) usage() *Usage {
	keys := []string{"inputTokens", "cachedInputTokens", "cacheCreationInputTokens",
		"outputTokens", "reasoningTokens", "totalTokens"}
	u := d.object("usage", keys, keys)
	if u == nil {
		return nil
	}
	out := &Usage{}
	for i, p := range []**int64{&out.InputTokens, &out.CachedInputTokens,
		&out.CacheCreationInputTokens, &out.OutputTokens, &out.ReasoningTokens, &out.TotalTokens} {
		if u.present(keys[i]) {
			v := u.count(keys[i])
			*p = &v
		}
	}
	d.adopt(u)
	return out
}

func (d *fieldDecoder) toolDenial() *ToolDenial {
	if !d.present("toolDenial") {
		return nil
	}
	t := d.object("toolDenial", []string{"verified", "cause", "tool", "requestedAction", "evidence"}, []string{"cause"})
	if t == nil {
		d.fail("toolDenial", "must be an object")
		return nil
	}
	out := &ToolDenial{Verified: t.boolean("verified")}
	if t.present("cause") {
		out.Cause = DenialCause(t.str("cause"))
		t.check("cause", out.Cause == DenialPermission || out.Cause == DenialUnknown, `must be "permission" or "unknown"`)
	}
	out.Tool = t.nullStr("tool")
	t.check("tool", out.Tool == nil || strings.TrimSpace(*out.Tool) != "", "must be null or a non-empty string")
	out.RequestedAction = t.nullStr("requestedAction")
	t.check("requestedAction", out.RequestedAction == nil || strings.TrimSpace(*out.RequestedAction) != "",
		"must be null or a non-empty string")
	out.Evidence = t.str("evidence")
	d.adopt(t)
	return out
}

func (d *fieldDecoder) containment() *ReceiptContainment {
	if !d.present("containment") {
		return nil
	}
	c := d.object("containment", []string{"class", "by", "unrestricted", "denied"}, []string{"unrestricted", "denied"})
	if c == nil {
		d.fail("containment", "must be an object")
		return nil
	}
	out := &ReceiptContainment{Class: c.str("class"), By: c.str("by")}
	c.check("class", validContainmentClass(out.Class), `must be "READ_ONLY_NO_NETWORK", "WORKSPACE_WRITE_NO_NETWORK" or "UNVERIFIED"`)
	if b := c.optBool("unrestricted"); b != nil {
		out.Unrestricted = *b
	}
	if c.present("denied") {
		out.Denied = c.strs("denied")
	}
	d.adopt(c)
	return out
}

func validContainmentClass(c string) bool {
	return c == ContainmentReadOnly || c == ContainmentWorkspaceWrite || c == ContainmentUnverified
}

func (d *fieldDecoder) handoff() *ReceiptHandoff {
	if !d.present("handoff") {
		return nil
	}
	h := d.object("handoff", []string{"task", "checkpoint", "operation", "files", "checks", "summary"}, []string{"summary"})
	if h == nil {
		d.fail("handoff", "must be an object")
		return nil
	}
	out := &ReceiptHandoff{Task: h.str("task")}
	h.check("task", strings.TrimSpace(out.Task) != "", "must be a non-empty string")
	out.Checkpoint = h.str("checkpoint")
	h.check("checkpoint", strings.TrimSpace(out.Checkpoint) != "", "must be a non-empty string")
	out.Operation = OperationKind(h.str("operation"))
	h.check("operation", out.Operation == OpCommitCheckpoint || out.Operation == OpRunChecks,
		`must be "commit-checkpoint" or "run-checks"`)
	out.Files = h.strs("files")
	out.Checks = h.strs("checks")
	if h.present("summary") {
		out.Summary = h.str("summary")
	}
	d.adopt(h)
	return out
}

// fieldDecoder reads typed members of one strictly decoded JSON object and
// keeps the first error, which names the member by its dotted path.
type fieldDecoder struct {
	m      map[string]json.RawMessage
	prefix string // "receipt " or "receipt preflight."
	err    error
}

func (d *fieldDecoder) fail(key, format string, args ...any) {
	if d.err == nil {
		d.err = Policyf("%s%s %s", d.prefix, key, fmt.Sprintf(format, args...))
	}
}

// check records a failure for key unless ok. It is a no-op after an
// earlier failure, so a zero value read after an error is never reported.
func (d *fieldDecoder) check(key string, ok bool, format string, args ...any) {
	if !ok {
		d.fail(key, format, args...)
	}
}

// adopt takes over a child decoder's first error.
func (d *fieldDecoder) adopt(c *fieldDecoder) {
	if d.err == nil {
		d.err = c.err
	}
}

func (d *fieldDecoder) present(key string) bool { _, ok := d.m[key]; return ok }

func (d *fieldDecoder) isNull(key string) bool {
	return bytes.Equal(bytes.TrimSpace(d.m[key]), []byte("null"))
}

// str reads a required string member.
func (d *fieldDecoder) str(key string) string {
	if d.err != nil {
		return ""
	}
	raw, ok := d.m[key]
	raw = bytes.TrimSpace(raw)
	var s string
	if !ok {
		d.fail(key, "is required")
	} else if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		d.fail(key, "must be a string")
	}
	return s
}

// nullStr reads a required member that is a string or null.
func (d *fieldDecoder) nullStr(key string) *string {
	if d.err != nil || d.isNull(key) {
		return nil
	}
	s := d.str(key)
	if d.err != nil {
		d.err = nil
		d.fail(key, "must be a string or null")
		return nil
	}
	return &s
}

// strs reads a required array of strings.
func (d *fieldDecoder) strs(key string) []string {
	if d.err != nil {
		return nil
	}
	raw := bytes.TrimSpace(d.m[key])
	var out []string
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &out) != nil {
		d.fail(key, "must be an array of strings")
		return nil
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// boolean reads a required boolean.
func (d *fieldDecoder) boolean(key string) bool {
	if d.err != nil {
		return false
	}
	switch string(bytes.TrimSpace(d.m[key])) {
	case "true":
		return true
	case "false":
		return false
	}
	d.fail(key, "must be a boolean")
	return false
}

// optBool reads an optional boolean; nil when absent.
func (d *fieldDecoder) optBool(key string) *bool {
	if d.err != nil || !d.present(key) {
		return nil
	}
	b := d.boolean(key)
	if d.err != nil {
		d.err = nil
		d.fail(key, "must be a boolean when present")
		return nil
	}
	return &b
}

// number reads a JSON number member; ok is false for anything else.
func (d *fieldDecoder) number(key string) (float64, bool) {
	raw := bytes.TrimSpace(d.m[key])
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// integer reads an integral JSON number member; ok is false for anything
// else (including null and absent), without recording an error.
func (d *fieldDecoder) integer(key string) (int64, bool) {
	raw := bytes.TrimSpace(d.m[key])
	if v, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return v, true
	}
	f, ok := d.number(key)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// count reads a required non-negative integer.
func (d *fieldDecoder) count(key string) int64 {
	if d.err != nil {
		return 0
	}
	v, ok := d.integer(key)
	d.check(key, ok && v >= 0, "must be a non-negative integer")
	return v
}

// object reads a member that is a JSON object or null. It returns nil for
// null (the caller decides whether null is allowed) and on error. Members
// outside optional are required.
func (d *fieldDecoder) object(key string, allowed, optional []string) *fieldDecoder {
	if d.err != nil || !d.present(key) || d.isNull(key) {
		return nil
	}
	if raw := bytes.TrimSpace(d.m[key]); len(raw) == 0 || raw[0] != '{' {
		d.fail(key, "must be an object")
		return nil
	}
	m, err := strictObject(d.m[key], allowed...)
	if err != nil {
		d.fail(key, "has %v", err)
		return nil
	}
	c := &fieldDecoder{m: m, prefix: d.prefix + key + "."}
	for _, k := range allowed {
		if !c.present(k) && !inList(optional, k) {
			c.fail(k, "is required")
		}
	}
	return c
}
