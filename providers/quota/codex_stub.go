package quota

import (
	"context"

	"github.com/switchyard-dev/switchyard/policy"
)

// acquireCodex is a stand-in so the dispatcher builds on this branch:
// replaced by codex.go at merge. It answers UNKNOWN (never "go ahead").
func acquireCodex(_ context.Context, cfg Config) policy.CapacityReport {
	return unknownReport(policy.Codex, policy.QuotaLiveRPC, httpReasonBackendError, cfg.Now())
}
