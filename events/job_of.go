package events

import (
	"slices"

	"github.com/switchyard-dev/switchyard/policy"
)

// JobOf is the job of the execution l launched (or continued, as a
// Launch) on lane lane of run run, whose run-created is c: every field
// comes from the log, so the engine that publishes a job and a worker that
// checks one derive the same job from the same events. The attempt is
// c.Lanes[lane].Attempts[l.AttemptIndex]; the mode, parent, contract,
// timeouts and allow-flags are the run's. Schema is left 0 (current).
//
// unsetStallMs is the response-stall timeout of an attempt of a provider
// whose run sets none (providers.UnsetStallTimeoutMs), 0 meaning
// DefaultStallTimeoutMs; the job carries the effective value, never 0,
// unless the run turned the watchdog off (StallWatchdogOff, 0). A lane or attempt the run does not have is an error.
func JobOf(run string, lane int, c RunCreated, l Launch, unsetStallMs func(policy.Provider) int64) (Job, error) {
	if lane < 0 || lane >= len(c.Lanes) {
		return Job{}, invalidf("lane %d: the run has %d lanes", lane, len(c.Lanes))
	}
	attempts := c.Lanes[lane].Attempts
	if l.AttemptIndex < 0 || l.AttemptIndex >= len(attempts) {
		return Job{}, invalidf("attempt %d of lane %d: the lane has %d attempts", l.AttemptIndex, lane, len(attempts))
	}
	ap := attempts[l.AttemptIndex]
	provider := ap.RunsOn()
	o := c.Options
	stallMs := stallTimeoutMs(o, provider, unsetStallMs)
	if !o.StallWatchdog.Watched() {
		stallMs = 0
	}
	return Job{
		ExecutionID: l.ExecutionID, Run: run, Lane: lane, AttemptIndex: l.AttemptIndex,
		Descriptor: l.Descriptor, Provider: provider, Model: ap.Attempt.Model, Effort: ap.Attempt.Effort,
		Mode: c.Access, APISpend: ap.APISpend, Contract: o.Contract, Parent: c.Parent,
		Route: l.Route, Paths: l.Paths, TimeoutMs: o.TimeoutMs,
		StallTimeoutMs:             stallMs,
		StallWatchdogOff:           !o.StallWatchdog.Watched(),
		AllowUnverifiedContainment: slices.Contains(o.AllowUnverifiedContainment, provider),
		OpenCodeChatGPTSubscription: o.OpenCodeChatGPTSubscription &&
			ChatGPTSubscriptionAttempt(provider, ap.Attempt.Model, ap.Attempt.Effort, ap.APISpend),
	}, nil
}

// stallTimeoutMs is the response-stall timeout of an attempt of provider
// under the run's options: the provider's override, else the run's, else
// unset's value for the provider, else DefaultStallTimeoutMs.
func stallTimeoutMs(o RunOptions, provider policy.Provider, unset func(policy.Provider) int64) int64 {
	ms := o.StallTimeoutMs
	if v, ok := o.ProviderStallTimeoutMs[provider]; ok {
		ms = v
	}
	if ms > 0 && ms <= MaxStallTimeoutMs {
		return ms
	}
	// Unset (or, past run-created's validation, impossible).
	if unset != nil {
		if d := unset(provider); d > 0 && d <= MaxStallTimeoutMs {
			return d
		}
	}
	return DefaultStallTimeoutMs
}
