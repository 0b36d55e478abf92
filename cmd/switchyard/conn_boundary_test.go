package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCommandsDoNotDial: the commands reach a serve or cluster only through
// internal/engineconn (which the client package shares): no non-test file
// of cmd/switchyard dials NATS, starts the embedded server, opens the
// streams or reads serve.json or serve.auth itself.
func TestCommandsDoNotDial(t *testing.T) {
	t.Parallel()
	forbidden := regexp.MustCompile(`events\.Connect\(|nats\.Connect\(|nats\.SetCustomDialer|events\.StartEmbedded|events\.OpenJetStream|events\.FileClientOptions|events\.ReadCredentials|os\.ReadFile\([^)]*(serveInfoName|authFileName|"serve\.json"|"serve\.auth")`)
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for i, line := range strings.Split(string(b), "\n") {
			if m := forbidden.FindString(line); m != "" {
				t.Errorf("%s:%d: %s: connection code belongs in internal/engineconn", f, i+1, m)
			}
		}
		checked++
	}
	require.Greater(t, checked, 20, "the commands' files were read")
}
