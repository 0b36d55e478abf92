package policy

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseRunSheet: a run's sheet drops a leading byte-order mark and
// refuses every line that is neither blank, a comment nor a row, in line
// order with the sheet's own issues; ParseSheet keeps reading such a line
// as prose.
func TestParseRunSheet(t *testing.T) {
	opt := DefaultOptions()
	src := []byte("\ufeff# access: {\"provider\":\"grok\",\"funding\":\"included\",\"capacity\":\"standard\",\"apiSpend\":\"approved\",\"provenance\":\"user\"}\n" +
		"hillclimb: grok:grok-4.7@xhigh\n")
	frozen, s, err := ParseRunSheet(src, opt)
	require.NoError(t, err)
	require.Equal(t, src[3:], frozen)
	require.True(t, s.PolicyEnabled(), "the first line is read as the access fact it is")

	bad := []byte("hillclimb grok:grok-4.7@xhigh\n# note\nbug-fix: nope\n  \nsome prose\n")
	_, _, err = ParseRunSheet(bad, opt)
	var pe *PolicyError
	require.ErrorAs(t, err, &pe)
	require.Len(t, pe.Issues, 3, "%q", pe.Issues)
	require.Contains(t, pe.Issues[0], `line 1: "hillclimb grok:grok-4.7@xhigh" is neither blank, a # comment nor a role row`)
	require.Contains(t, pe.Issues[1], "line 3: bug-fix:")
	require.Contains(t, pe.Issues[2], `line 5: "some prose"`)

	lenient, err := ParseSheet([]byte("hillclimb grok:grok-4.7@xhigh\nhillclimb: grok:grok-4.7@xhigh\n"), opt)
	require.NoError(t, err, "policy's reading is unchanged")
	require.Equal(t, LineText, lenient.Lines[0].Kind)
}

// TestSuggestRoles: the configured roles closest to an unknown one, by
// prefix or edit distance; nothing when none is close.
func TestSuggestRoles(t *testing.T) {
	opt := DefaultOptions()
	s, err := ParseSheet([]byte("swarm workers: codex:gpt-5.6-sol@high\nbug-fix: codex:gpt-5.6-sol@high\nfeature, refactoring: codex:gpt-5.6-sol@high\n"), opt)
	require.NoError(t, err)
	require.Equal(t, []string{"swarm workers"}, s.SuggestRoles("swarm worker", opt))
	require.Equal(t, []string{"swarm workers"}, s.SuggestRoles("Swarm", opt))
	require.Equal(t, []string{"bug-fix"}, s.SuggestRoles("bugfix", opt))
	require.Equal(t, []string{"refactoring"}, s.SuggestRoles("refactor", opt))
	require.Empty(t, s.SuggestRoles("architect runners", opt))
	require.False(t, s.HasRole("swarm worker", opt))
	require.True(t, s.HasRole("feature", opt))
	require.Equal(t, []string{"swarm workers", "bug-fix", "feature, refactoring", "feature", "refactoring"}, s.Roles(opt))
}
