package policy

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParseVocab feeds arbitrary text to the closed-vocabulary parsers that
// read command-line and job values (ParseParent, ParseAccess). It proves:
// neither panics; a refusal is a *UsageError; an accepted value is one of
// the vocabulary's constants and is exactly the text given (no trimming, no
// case folding).
func FuzzParseVocab(f *testing.F) {
	for _, s := range []string{"claude", "codex", "read-only", "isolated-write", "", "Claude",
		" claude", "codex\n", "read_only", "gemini", "\x00", "isolated-write\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if p, err := ParseParent(s); err != nil {
			require.True(t, IsUsage(err), "ParseParent error %T %v", err, err)
			require.Empty(t, p)
		} else {
			require.Contains(t, []Parent{ParentClaude, ParentCodex}, p)
			require.Equal(t, s, string(p))
		}
		if a, err := ParseAccess(s); err != nil {
			require.True(t, IsUsage(err), "ParseAccess error %T %v", err, err)
			require.Empty(t, a)
		} else {
			require.Contains(t, []Access{ReadOnly, IsolatedWrite}, a)
			require.Equal(t, s, string(a))
		}
	})
}
