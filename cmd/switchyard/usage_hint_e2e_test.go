package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestUsageRefreshHintOnlyWithoutRefresh: a provider with no report gets
// the "try --refresh" hint only when --refresh was not given (issue 28,
// finding 18).
func TestUsageRefreshHintOnlyWithoutRefresh(t *testing.T) {
	t.Parallel()
	s := newEngineSandbox(t, nil, singleLaneSheet)
	srv := s.start(t, "serve", "--data-dir", s.data, "--listen", "127.0.0.1:0")
	waitServeInfo(t, s.data, srv)

	plain := s.run(t, 60*time.Second, "usage", "--data-dir", s.data, "--provider", "codex")
	require.Equal(t, 0, plain.code, plain.stderr)
	require.Contains(t, plain.stdout, "no current report (no worker for it has measured yet; try --refresh)")

	refreshed := s.run(t, 60*time.Second, "usage", "--data-dir", s.data, "--provider", "codex", "--refresh", "--wait", "1s")
	require.Equal(t, 0, refreshed.code, refreshed.stderr)
	require.Contains(t, refreshed.stdout, "no current report (no worker for it has measured yet)")
	require.NotContains(t, refreshed.stdout, "try --refresh", "--refresh was given")
}
