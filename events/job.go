package events

import (
	"cmp"
	"encoding/json"
	"fmt"

	"github.com/switchyard-dev/switchyard/policy"
)

// JobSchemaVersion is the schema of jobs and reports this build writes and
// reads.
const JobSchemaVersion = 1

// MaxMessageBytes is the largest encoded job or report (64 KiB).
const MaxMessageBytes = 64 << 10

// Job is one execution for a worker to run: everything the runner needs,
// frozen when the launch or continue event was recorded. It travels on
// JobSubject(provider) or NativeJobSubject(parent) with message id
// ExecutionID.
//
// JSON keys: schema, executionId, run, lane, attemptIndex, descriptor,
// provider, model, effort, mode, apiSpend, contract, parent, route, paths,
// timeoutMs.
type Job struct {
	// Schema is JobSchemaVersion; 0 means current when encoding.
	Schema       int    `json:"schema"`
	ExecutionID  string `json:"executionId"`
	Run          string `json:"run"`
	Lane         int    `json:"lane"`
	AttemptIndex int    `json:"attemptIndex"`
	// Descriptor is <provider>:<model>@<effort>, or a native alias.
	Descriptor string `json:"descriptor"`
	// Provider, Model and Effort are the descriptor's parts; Model and
	// Effort are empty for native aliases.
	Provider policy.Provider `json:"provider"`
	Model    string          `json:"model,omitempty"`
	Effort   policy.Effort   `json:"effort,omitempty"`
	// Mode is the lane's access mode (--mode).
	Mode     policy.Access   `json:"mode"`
	APISpend policy.APISpend `json:"apiSpend"`
	Contract policy.Contract `json:"contract"`
	Parent   policy.Parent   `json:"parent"`
	Route    policy.Route    `json:"route"`
	Paths    Paths           `json:"paths"`
	// TimeoutMs is the runner's --timeout in milliseconds; 0 means none.
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
	// StallTimeoutMs is the attempt's effective response-stall timeout in
	// milliseconds; 0 on the wire means DefaultStallTimeoutMs.
	StallTimeoutMs int64 `json:"stallTimeoutMs,omitempty"`
	// StallWatchdogOff: the run turned the stall watchdog off
	// (run --stall-timeout off); the attempt is not watched, and
	// StallTimeoutMs is 0.
	StallWatchdogOff bool `json:"stallWatchdogOff,omitempty"`
	// AllowUnverifiedContainment carries the run's explicit unrestricted
	// contract for this attempt's provider (RunOptions.AllowUnverifiedContainment):
	// the runner launches it although its mode's containment is UNVERIFIED.
	// Only with the legacy contract (strict is always unsupported).
	AllowUnverifiedContainment bool `json:"allowUnverifiedContainment,omitempty"`
	// OpenCodeChatGPTSubscription carries the run's
	// RunOptions.OpenCodeChatGPTSubscription to an attempt it applies to:
	// provider opencode, apiSpend deny, openai/gpt-6.1-sol at default
	// effort (the runner's --opencode-chatgpt-subscription).
	OpenCodeChatGPTSubscription bool `json:"opencodeChatGPTSubscription,omitempty"`
}

// Validate checks a job's fields. Errors match ErrInvalid.
func (j Job) Validate() error {
	if j.Schema != 0 && j.Schema != JobSchemaVersion {
		return &DecodeError{What: "job", Err: fmt.Errorf("%w: schema %d (this build reads %d)", ErrSchemaVersion, j.Schema, JobSchemaVersion)}
	}
	if err := ValidateExecutionID(j.ExecutionID); err != nil {
		return err
	}
	if err := ValidateRunID(j.Run); err != nil {
		return err
	}
	if j.Lane < 0 || j.Lane > MaxLanes {
		return invalidf("job lane %d out of range", j.Lane)
	}
	if j.AttemptIndex < 0 || j.AttemptIndex >= policy.MaxAttemptsPerSeat {
		return invalidf("job attemptIndex %d: want 0..%d", j.AttemptIndex, policy.MaxAttemptsPerSeat-1)
	}
	if err := requireText("job descriptor", j.Descriptor); err != nil {
		return err
	}
	if err := ValidateProvider(string(j.Provider)); err != nil {
		return err
	}
	if j.Effort != "" && !j.Effort.Valid() {
		return invalidf("job effort %q is not an effort", j.Effort)
	}
	if _, err := policy.ParseAccess(string(j.Mode)); err != nil {
		return invalidf("job mode %q: want read-only or isolated-write", j.Mode)
	}
	switch j.APISpend {
	case policy.APISpendDeny, policy.APISpendApproved, policy.APISpendUnset, policy.APISpendLegacy:
	default:
		return invalidf("job apiSpend %q: want deny, approved, unset or legacy", j.APISpend)
	}
	if j.Contract != policy.ContractLegacy && j.Contract != policy.ContractStrict {
		return invalidf("job contract %q: want legacy or strict", j.Contract)
	}
	if _, err := policy.ParseParent(string(j.Parent)); err != nil {
		return invalidf("job parent %q: want claude or codex", j.Parent)
	}
	if j.Route != policy.RouteExternal && j.Route != policy.RouteNative {
		return invalidf("job route %q: want external or native", j.Route)
	}
	if j.TimeoutMs < 0 {
		return invalidf("job timeoutMs must not be negative")
	}
	if j.StallWatchdogOff && j.StallTimeoutMs != 0 {
		return invalidf("job stallWatchdogOff with stallTimeoutMs %d: an unwatched attempt has no stall timeout", j.StallTimeoutMs)
	}
	if j.StallTimeoutMs < 0 || j.StallTimeoutMs > MaxStallTimeoutMs {
		return invalidf("job stallTimeoutMs %d: want 0..%d", j.StallTimeoutMs, MaxStallTimeoutMs)
	}
	if j.AllowUnverifiedContainment && j.Contract != policy.ContractLegacy {
		return invalidf("job allowUnverifiedContainment needs the legacy contract, not %q", j.Contract)
	}
	if j.OpenCodeChatGPTSubscription && !ChatGPTSubscriptionAttempt(j.Provider, j.Model, j.Effort, j.APISpend) {
		return invalidf("job opencodeChatGPTSubscription needs provider opencode, model %s, effort default and apiSpend deny", OpenCodeChatGPTModel)
	}
	return j.Paths.validate()
}

// EncodeJob validates j and returns its JSON form (schema filled in). Over
// MaxMessageBytes it is a *LimitError.
func EncodeJob(j Job) ([]byte, error) {
	j.Schema = cmp.Or(j.Schema, JobSchemaVersion)
	if err := j.Validate(); err != nil {
		return nil, err
	}
	return encodeMessage("job", j)
}

// DecodeJob strictly decodes one job: at most MaxMessageBytes, exactly the
// job keys, schema JobSchemaVersion, nothing after the object, and every
// rule of Validate.
func DecodeJob(b []byte) (Job, error) {
	var j Job
	if err := decodeMessage("job", b, &j, &j.Schema); err != nil {
		return Job{}, err
	}
	if err := j.Validate(); err != nil {
		return Job{}, &DecodeError{What: "job", Err: err}
	}
	return j, nil
}

func encodeMessage(what string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", what, err)
	}
	if len(b) > MaxMessageBytes {
		return nil, &LimitError{What: what, Size: len(b), Max: MaxMessageBytes, Limit: "MaxMessageBytes"}
	}
	return b, nil
}

// decodeMessage applies the size limit, strict decoding and the schema check
// shared by jobs and reports.
func decodeMessage(what string, b []byte, v any, schema *int) error {
	if len(b) > MaxMessageBytes {
		return &DecodeError{What: what, Err: &LimitError{What: what, Size: len(b), Max: MaxMessageBytes, Limit: "MaxMessageBytes"}}
	}
	if err := unmarshalStored(b, v); err != nil {
		return &DecodeError{What: what, Err: err}
	}
	if *schema != JobSchemaVersion {
		return &DecodeError{What: what, Err: fmt.Errorf("%w: schema %d (this build reads %d)", ErrSchemaVersion, *schema, JobSchemaVersion)}
	}
	return nil
}

// OpenCodeChatGPTModel is the one model an OpenCode ChatGPT-subscription
// attempt runs (providers.OpenCodeChatGPTModel; events imports no provider
// spec).
const OpenCodeChatGPTModel = "openai/gpt-6.1-sol"

// ChatGPTSubscriptionAttempt reports whether an attempt is one the
// ChatGPT-subscription mode applies to: opencode, exactly
// OpenCodeChatGPTModel at default effort, under apiSpend deny.
func ChatGPTSubscriptionAttempt(p policy.Provider, model string, effort policy.Effort, spend policy.APISpend) bool {
	return p == policy.OpenCode && model == OpenCodeChatGPTModel && effort == policy.EffortDefault && spend == policy.APISpendDeny
}
