package contract

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestInterpretWhitespaceOnlyIsMalformed: a response of blanks is no more a
// completion than an empty one (issue 28, finding 26).
func TestInterpretWhitespaceOnlyIsMalformed(t *testing.T) {
	for _, final := range []string{" ", "\n", "\n\n  \t\r\n", "   \n"} {
		v := Interpret([]byte(final))
		require.Equal(t, VerdictMalformed, v.Verdict, "%q", final)
		require.Contains(t, v.Error, "whitespace", "%q", final)
	}
	require.Equal(t, VerdictComplete, Interpret([]byte("done\n")).Verdict, "text with blanks around it is still a completion")
	require.Equal(t, VerdictComplete, Interpret([]byte("\n  done  \n")).Verdict)
}
