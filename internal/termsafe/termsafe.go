// Package termsafe escapes control characters in text bound for a
// terminal, so that provider output, receipts, error strings and other
// stored text cannot drive the user's terminal (clear the screen, write
// the clipboard through OSC 52, move the cursor over earlier lines).
//
// Writer is applied at the CLI's print boundary (its stdout and stderr),
// so no command can forget it. It escapes C0 controls but newline and tab,
// ESC and BEL among them, as \xNN. JSON that encoding/json wrote passes
// byte for byte: it never holds a raw C0 control but the newlines between
// and inside indented documents (it escapes them as \u00NN in strings).
// String escapes in addition DEL and the C1 controls (U+0080 to U+009F),
// for text a command prints itself.
package termsafe

import (
	"fmt"
	"io"
	"strings"
)

// unsafeC0 reports a C0 control a terminal acts on: all but tab and
// newline.
func unsafeC0(c byte) bool { return c < 0x20 && c != '\n' && c != '\t' }

// Writer returns w with C0 controls (but newline and tab) escaped as \xNN.
// A write reports the length of its input when all of it was written.
func Writer(w io.Writer) io.Writer {
	if _, ok := w.(*writer); ok {
		return w
	}
	return &writer{w: w}
}

type writer struct{ w io.Writer }

func (t *writer) Write(p []byte) (int, error) {
	clean := true
	for _, c := range p {
		if unsafeC0(c) {
			clean = false
			break
		}
	}
	if clean {
		return t.w.Write(p)
	}
	var b strings.Builder
	b.Grow(len(p) + 16)
	for _, c := range p {
		if unsafeC0(c) {
			fmt.Fprintf(&b, "\\x%02x", c)
			continue
		}
		b.WriteByte(c)
	}
	if _, err := io.WriteString(t.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// String escapes every control character in s but tab (C0 including
// newline, DEL, C1) as \xNN: for one line of stored or provider text.
func String(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '\t' || (r >= 0x20 && r != 0x7f && !(r >= 0x80 && r < 0xa0)) {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, "\\x%02x", r)
	}
	return b.String()
}
