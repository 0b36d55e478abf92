package policy

import (
	"os"
	"path/filepath"
	"testing"
)

func FuzzParseAttempt(f *testing.F) {
	for _, s := range []string{"auto", "inherit-parent", "grok:grok-4.7@xhigh", "opencode:a/b:c@default",
		"claude:claude-opus-4-5@max", "devin:swe-2@low", "antigravity:x@high", "codex:@", ":", "@", "a:b@c@d",
		"antigravity:Auto@default", "opencode:auto/gpt-5@default", "opencode:openai/AUTO@default"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAttempt(s)
		if err != nil {
			return
		}
		if a.String() != s {
			t.Fatalf("accepted %q but renders %q", s, a.String())
		}
		if a.Kind == KindDescriptor && a.Provider == Devin {
			_, _ = DevinModelUID(a.Model, a.Effort)
		}
		_ = NormalizeAttempt(a)
	})
}

func FuzzParseSheet(f *testing.F) {
	paths, _ := filepath.Glob("testdata/sheets/*.sheet")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("bug-fix: grok:g@high -> auto\r\n# fallback: {\"on\":[]}\n"))
	f.Add([]byte(`# access: {"provider":"grok","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}`))
	f.Add([]byte("# continuation: {\"on\":[\"handoff\"],\"max\":2}\narena runners: a, b"))
	// Section 4's validate rules: a non-integer max, indented headers and
	// comments, auto on OpenCode and Antigravity.
	f.Add([]byte("# continuation: {\"on\":[\"handoff\"],\"max\":\"3\"}\n"))
	f.Add([]byte("# continuation: {\"on\":[\"handoff\"],\"max\":3.0}\n"))
	f.Add([]byte("bug-fix: auto\n  how explorer: auto\n\t# fallback: {\"on\":[]}\n  # plain note\n"))
	f.Add([]byte("how explorer: opencode:auto/gpt-5@default\nbug-fix: antigravity:Auto@default\n"))
	opt := DefaultOptions()
	f.Fuzz(func(t *testing.T, src []byte) {
		s, err := ParseSheet(src, opt)
		if err != nil {
			if !IsPolicy(err) {
				t.Fatalf("parse error is %T, want *PolicyError", err)
			}
			return
		}
		if got := string(s.Render()); got != string(src) {
			t.Fatalf("render differs:\n%q\n%q", src, got)
		}
		for _, row := range opt.Catalog {
			for _, p := range []Parent{ParentClaude, ParentCodex} {
				_, _ = Resolve(s, row.Header, p, opt)
			}
		}
		_, _ = ValidateSheet(s, ParentClaude, opt)
	})
}
