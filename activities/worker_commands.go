package activities

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/switchyard-dev/switchyard/activities/runner"
	"github.com/switchyard-dev/switchyard/activities/sandbox"
	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// AccessModes are the access modes a containment report lists, in order.
var AccessModes = []policy.Access{policy.ReadOnly, policy.IsolatedWrite}

// ContainmentOf lists the containment an attempt of spec gets on this
// host in every access mode (runner.ContainmentOf over the process's
// sandbox self-test, sandbox.Verify): verified by the kernel where the
// self-test passed, else the provider's own verified sandbox (codex), else
// UNVERIFIED with why and the fix.
func ContainmentOf(spec *providers.Spec) []events.ContainmentEntry {
	return ContainmentFrom(sandbox.Verify(""), spec)
}

// ContainmentFrom is ContainmentOf over a given self-test report.
func ContainmentFrom(rep sandbox.Report, spec *providers.Spec) []events.ContainmentEntry {
	out := make([]events.ContainmentEntry, 0, len(AccessModes))
	for _, m := range AccessModes {
		class, by, why, fix := runner.ContainmentOf(rep, spec, m)
		reason := "verified by " + by
		if class == providers.ContainmentUnverified {
			reason = why + "; fix: " + fix
		} else if own := providers.ContainmentFor(spec, m); rep.For(m).Verified && own.Class == class {
			reason += "; the provider's own sandbox stays a second layer (" + own.Reason + ")"
		}
		out = append(out, events.ContainmentEntry{Mode: m, Class: string(class), Reason: reason})
	}
	return out
}

// serveCommands answers the worker commands (events.WorkerCommands) on
// WorkerConfig.Commands until stop is called.
func (w *Worker) serveCommands() (stop func(), err error) {
	return events.ServeCommands(w.cfg.Commands, w.cfg.WorkerID, w.answer)
}

// answer handles one allowlisted command (events refuses every other one
// before this runs, so an unknown command never reaches a provider lookup).
func (w *Worker) answer(_ context.Context, command string, req events.CommandRequest) events.CommandReply {
	switch command {
	case events.CommandCapabilities:
		if !slices.Contains(w.cfg.Providers, req.Provider) {
			return events.CommandReply{Error: "this worker does not run provider " + string(req.Provider)}
		}
		spec, err := w.lookup(req.Provider)
		if err != nil {
			return events.CommandReply{Error: "provider " + string(req.Provider) + " has no spec in this worker's build"}
		}
		caps := events.Capabilities{Provider: req.Provider, Binaries: slices.Clone(spec.Binaries),
			KnownVersions: slices.Clone(spec.KnownVersions), Containment: ContainmentOf(spec),
			QuotaSource: spec.QuotaSource, Concurrency: w.cfg.Concurrency}
		if caps.KnownVersions == nil {
			caps.KnownVersions = []string{}
		}
		if exe, err := providers.ResolveBinary(spec, w.cfg.Env["PATH"]); err == nil {
			caps.BinaryPath = exe
		} else {
			caps.BinaryError = "none of " + strings.Join(spec.Binaries, ", ") + " is on this worker's PATH"
		}
		return events.CommandReply{Capabilities: &caps}
	case events.CommandTransportStatus:
		w.mu.Lock()
		ids := slices.Sorted(maps.Keys(w.active))
		w.mu.Unlock()
		st := events.TransportStatus{WorkerID: w.cfg.WorkerID, Connected: w.cfg.Commands.IsConnected(),
			Providers: slices.Clone(w.cfg.Providers), Leases: len(ids), Running: []events.RunningAttempt{}}
		for _, id := range ids {
			st.Running = append(st.Running, events.RunningAttempt{ExecutionID: id})
		}
		return events.CommandReply{Transport: &st}
	}
	// Unreachable: events.ServeCommands passes allowlisted commands only.
	return events.CommandReply{Error: "unknown worker command " + command}
}
