package providers

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseCodexBanner(t *testing.T) {
	t.Parallel()
	v, err := ParseCodexBanner("codex-cli 0.171.0\n") // codex 0.171.0's own banner
	require.NoError(t, err)
	require.Equal(t, Version{0, 171, 0}, v)
	for _, bad := range []string{"", "0.171.0\n", "codex 0.171.0\n", "codex-cli 0.171.0-alpha.1\n",
		"codex-cli 0.171.0\nupdate available\n", "codex-cli  0.171.0\n", "codex-cli v0.171.0\n"} {
		_, err := ParseCodexBanner(bad)
		require.ErrorIs(t, err, ErrVersion, "%q", bad)
	}
}
