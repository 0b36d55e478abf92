package activities

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// AccessModes are the access modes a containment report lists, in order.
var AccessModes = []policy.Access{policy.ReadOnly, policy.IsolatedWrite}

// ContainmentOf lists spec's containment for every access mode; a mode the
// spec does not declare is UNVERIFIED (providers.Spec.Containment).
func ContainmentOf(spec *providers.Spec) []events.ContainmentEntry {
	out := make([]events.ContainmentEntry, 0, len(AccessModes))
	for _, m := range AccessModes {
		c, ok := spec.Containment[m]
		if !ok || c.Class == "" {
			out = append(out, events.ContainmentEntry{Mode: m, Class: string(providers.ContainmentUnverified),
				Reason: "the provider spec declares no containment for this mode"})
			continue
		}
		out = append(out, events.ContainmentEntry{Mode: m, Class: string(c.Class), Reason: c.Reason})
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
