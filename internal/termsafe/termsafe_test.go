package termsafe

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// hostile is what a hostile CLI prints: clear screen, an OSC 52 clipboard
// write ended by BEL, a carriage return that overprints, a C1 CSI.
const hostile = "boom\x1b[2J\x1b]52;c;ZWNobyBwd25lZA==\x07\rok\u009b31m"

func TestWriterEscapesControlsButKeepsJSONExact(t *testing.T) {
	var out bytes.Buffer
	w := Writer(&out)
	n, err := w.Write([]byte("error: " + hostile + "\n\tnext\n"))
	require.NoError(t, err)
	require.Equal(t, len("error: "+hostile+"\n\tnext\n"), n)
	require.NotContains(t, out.String(), "\x1b")
	require.NotContains(t, out.String(), "\x07")
	require.NotContains(t, out.String(), "\r")
	require.Equal(t, "error: boom\\x1b[2J\\x1b]52;c;ZWNobyBwd25lZA==\\x07\\x0dok\u009b31m\n\tnext\n", out.String())

	doc, err := json.MarshalIndent(map[string]string{"error": hostile}, "", "  ")
	require.NoError(t, err)
	out.Reset()
	_, err = w.Write(append(doc, '\n'))
	require.NoError(t, err)
	require.Equal(t, string(doc)+"\n", out.String(), "JSON passes byte for byte")
}

func TestStringEscapesC1AndNewlines(t *testing.T) {
	require.Equal(t, `boom\x1b[2J\x1b]52;c;ZWNobyBwd25lZA==\x07\x0dok\x9b31m`, String(hostile))
	require.Equal(t, "a\tb\\x0ac", String("a\tb\nc"))
}
