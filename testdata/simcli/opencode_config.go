package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// openCodeGitignore is the .gitignore opencode 1.18.33 writes into every
// configuration directory it loads (captured byte for byte: no trailing
// newline).
const openCodeGitignore = "node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore"

// touchOpenCodeConfigHome does what the real CLI does to its global
// configuration directory, $XDG_CONFIG_HOME/opencode (captured from
// opencode 1.18.33): every command creates the directory (0755), and the
// commands that load configuration (debug config, models, run) write its
// .gitignore when it is missing. `--version` and `auth list` only create
// the directory.
func touchOpenCodeConfigHome(kind string) error {
	home := os.Getenv("XDG_CONFIG_HOME")
	if home == "" {
		return nil // the real CLI falls back to ~/.config; a test never wants that touched
	}
	dir := filepath.Join(home, "opencode")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	switch kind {
	case simlog.KindDebugConfig, simlog.KindModels, simlog.KindWorkload:
	default:
		return nil
	}
	f, err := os.OpenFile(filepath.Join(dir, ".gitignore"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := f.WriteString(openCodeGitignore); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// member is one member of a JSON object, in document order.
type member struct {
	Key string
	Raw json.RawMessage
}

// objectMembers splits a JSON object into its members in order; ok is
// false when b is not one object.
func objectMembers(b []byte) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		key, isKey := tok.(string)
		if err != nil || !isKey {
			return nil, false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		out = append(out, member{key, raw})
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err == nil {
		return nil, false // a second document
	}
	return out, true
}

// renderMembers renders members as one compact object.
func renderMembers(ms []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.Key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.Raw)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// openCodeEffective is what opencode 1.18.33's `--pure debug config`
// prints for a single OPENCODE_CONFIG file (captured): the file's members
// in order, every agent with an empty "options" object appended, then
// whichever of "agent", "mode", "plugin", "command", "username" and (with
// OPENCODE_DISABLE_AUTOCOMPACT) "compaction" the file lacks, indented two
// spaces. A compaction member the file has is printed as written (the
// runner's always sets auto false). A file that is not one JSON object is printed
// verbatim (the real CLI would refuse it; the runner's check refuses it
// here too).
func openCodeEffective(file []byte) []byte {
	top, ok := objectMembers(file)
	if !ok {
		return file
	}
	have := map[string]bool{}
	for i, m := range top {
		have[m.Key] = true
		if m.Key != "agent" {
			continue
		}
		agents, ok := objectMembers(m.Raw)
		if !ok {
			continue
		}
		for j, a := range agents {
			fields, ok := objectMembers(a.Raw)
			if !ok {
				continue
			}
			agents[j].Raw = renderMembers(append(fields, member{"options", json.RawMessage(`{}`)}))
		}
		top[i].Raw = renderMembers(agents)
	}
	extras := []member{
		{"agent", json.RawMessage(`{}`)}, {"mode", json.RawMessage(`{}`)}, {"plugin", json.RawMessage(`[]`)},
		{"command", json.RawMessage(`{}`)}, {"username", json.RawMessage(`"unknown"`)},
	}
	if os.Getenv("OPENCODE_DISABLE_AUTOCOMPACT") != "" {
		extras = append(extras, member{"compaction", json.RawMessage(`{"auto":false}`)})
	}
	for _, extra := range extras {
		if !have[extra.Key] {
			top = append(top, extra)
		}
	}
	var out bytes.Buffer
	if err := json.Indent(&out, renderMembers(top), "", "  "); err != nil {
		return file
	}
	out.WriteByte('\n')
	return out.Bytes()
}
