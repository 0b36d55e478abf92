package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// TestUsageSaysWhenTheCredentialFileIsRead: `usage` prints, under
// Claude, that its quota source reads the CLI's credential file and how to
// stop it, or that it was not read when the kill switch turned the source
// off; Codex (whose source asks its CLI) gets no such line.
func TestUsageSaysWhenTheCredentialFileIsRead(t *testing.T) {
	now := time.Now()
	off := &policy.CapacityReport{SchemaVersion: policy.CapacitySchemaVersion, Provider: policy.Claude,
		Snapshot: policy.CapacitySnapshot{SchemaVersion: policy.CapacitySchemaVersion, Provider: policy.Claude, Source: policy.QuotaLiveHTTP,
			State: policy.CapacityUnknown, Reason: policy.CapacityReasonDisabled, AcquiredAt: now}}
	var b bytes.Buffer
	out := usageOutput{Providers: []providerUsage{providerUsageOf(policy.Claude, nil, now), providerUsageOf(policy.Codex, nil, now)}}
	require.NoError(t, printUsage(&b, out, "here", false))
	require.Contains(t, b.String(), "  credential: the quota source reads the claude CLI's own sign-in token from $CLAUDE_CONFIG_DIR/.credentials.json, else ~/.claude/.credentials.json")
	require.Equal(t, 1, bytes.Count(b.Bytes(), []byte("credential:")), "codex reads no credential file:\n%s", b.String())

	b.Reset()
	out = usageOutput{Providers: []providerUsage{providerUsageOf(policy.Claude, off, now)}}
	require.NoError(t, printUsage(&b, out, "here", false))
	require.Contains(t, b.String(), "  credential: credential file not read: SWITCHYARD_CLAUDE_USAGE_API=0 turned the quota source off\n")
}
