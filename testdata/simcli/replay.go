package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// replay is one transcript kind directory, read up front so the timing of
// the replay does not depend on the file system.
type replay struct {
	dir       string
	stdout    []byte
	hasStdout bool // a stdout file exists (possibly empty)
	stderr    []byte
	// exit is the exit code; dieBy, when set, is a signal the process
	// sends itself instead of exiting (a crash).
	exit  int
	dieBy syscall.Signal
	// delayMs sleeps after the output; chunkMs interleaves stdout and
	// stderr line by line with this pause between pairs.
	delayMs, chunkMs int
	chunked          bool
	// hang blocks until SIGTERM/SIGINT; hangIgnore ignores them so only
	// SIGKILL ends the process.
	hang, hangIgnore bool
	// grandchild spawns a sleeping grandchild in the same process group;
	// grandchildInherit hands it this process's stdout and stderr.
	grandchild, grandchildInherit bool
	// export is written to the path of --export (Devin's ATIF file).
	export []byte
	// echoEnv names a variable holding a config path whose content is
	// printed when the kind has no stdout file (OpenCode debug config).
	echoEnv string
	// hookCalls are agy PreToolUse inputs (JSONL, templated) an
	// Antigravity writer replays through the workspace approval hook
	// before its output (see agywriter.go).
	hookCalls []byte
}

// maxBaseDepth bounds "base" chains.
const maxBaseDepth = 4

// loadReplay reads a kind directory. A file missing from it is looked up
// in the directory named by its "base" file (relative to the directory
// holding the scenarios), so variants only store what differs.
func loadReplay(dir string) (*replay, error) {
	r := &replay{dir: dir}
	read := func(name string) ([]byte, bool, error) { return readLayered(dir, name, 0) }
	var err error
	var ok bool
	if r.stdout, r.hasStdout, err = read("stdout"); err != nil {
		return nil, err
	}
	if r.stderr, _, err = read("stderr"); err != nil {
		return nil, err
	}
	if b, ok, err := read("exit"); err != nil {
		return nil, err
	} else if ok {
		v := strings.TrimSpace(string(b))
		if sig, isSig := signalByName(v); isSig {
			r.dieBy = sig
		} else if r.exit, err = strconv.Atoi(v); err != nil || r.exit < 0 || r.exit > 255 {
			return nil, fmt.Errorf("%s/exit: %q is neither an exit code 0-255 nor a signal name", dir, v)
		}
	}
	if r.delayMs, _, err = readInt(dir, "delay_ms"); err != nil {
		return nil, err
	}
	if r.chunkMs, r.chunked, err = readInt(dir, "chunk_ms"); err != nil {
		return nil, err
	}
	var b []byte
	if b, r.hang, err = read("hang"); err != nil {
		return nil, err
	} else if r.hang {
		switch v := strings.TrimSpace(string(b)); v {
		case "", "signal":
		case "ignore":
			r.hangIgnore = true
		default:
			return nil, fmt.Errorf("%s/hang: %q is neither empty, \"signal\" nor \"ignore\"", dir, v)
		}
	}
	if b, r.grandchild, err = read("spawn_grandchild"); err != nil {
		return nil, err
	} else if r.grandchild {
		switch v := strings.TrimSpace(string(b)); v {
		case "", "detached":
		case "inherit":
			r.grandchildInherit = true
		default:
			return nil, fmt.Errorf("%s/spawn_grandchild: %q is neither empty, \"detached\" nor \"inherit\"", dir, v)
		}
	}
	if r.export, ok, err = read("export.json"); err != nil {
		return nil, err
	} else if !ok {
		r.export = nil
	}
	if b, ok, err = read("echo_env"); err != nil {
		return nil, err
	} else if ok {
		r.echoEnv = strings.TrimSpace(string(b))
	}
	if r.hookCalls, ok, err = read("hook_calls"); err != nil {
		return nil, err
	} else if !ok {
		r.hookCalls = nil
	}
	return r, nil
}

func readInt(dir, name string) (int, bool, error) {
	b, ok, err := readLayered(dir, name, 0)
	if err != nil || !ok {
		return 0, ok, err
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || v < 0 {
		return 0, false, fmt.Errorf("%s/%s: %q is not a non-negative integer", dir, name, strings.TrimSpace(string(b)))
	}
	return v, true, nil
}

func readLayered(dir, name string, depth int) ([]byte, bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err == nil {
		return b, true, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, false, err
	}
	base, err := os.ReadFile(filepath.Join(dir, "base"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if depth >= maxBaseDepth {
		return nil, false, fmt.Errorf("%s/base: chain deeper than %d", dir, maxBaseDepth)
	}
	// dir is <scenarios>/<scenario>/<kind>; base is relative to <scenarios>.
	next := filepath.Join(filepath.Dir(filepath.Dir(dir)), strings.TrimSpace(string(base)))
	if _, err := os.Stat(next); err != nil {
		return nil, false, fmt.Errorf("%s/base: %w", dir, err)
	}
	return readLayered(next, name, depth+1)
}

// signalByName maps the signals a replay may die by. The Go runtime turns
// a self-sent SIGSEGV or SIGABRT into an ordinary exit, so only signals
// whose default action it keeps are offered.
func signalByName(s string) (syscall.Signal, bool) {
	switch s {
	case "SIGKILL":
		return syscall.SIGKILL, true
	case "SIGHUP":
		return syscall.SIGHUP, true
	case "SIGTERM":
		return syscall.SIGTERM, true
	case "SIGINT":
		return syscall.SIGINT, true
	}
	return 0, false
}

// templater replaces the transcript placeholders. Values are inserted
// JSON-string-escaped (an identity for ordinary paths and model names) so
// JSON transcripts stay valid.
type templater struct{ r *strings.Replacer }

func newTemplater(vars map[string]string) templater {
	var pairs []string
	for k, v := range vars {
		pairs = append(pairs, "{{"+k+"}}", jsonEscape(v))
	}
	return templater{strings.NewReplacer(pairs...)}
}

func (t templater) apply(b []byte) []byte {
	if !bytes.Contains(b, []byte("{{")) {
		return b
	}
	return []byte(t.r.Replace(string(b)))
}

func jsonEscape(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	out := strings.TrimSuffix(buf.String(), "\n")
	return out[1 : len(out)-1]
}

// reportedModel is what the real CLI reports for a requested model: Claude
// resolves a family alias to a dated revision (claude-opus-5); everyone
// else reports the requested id.
func reportedModel(provider, requested string) string {
	if provider == "claude" && !strings.HasPrefix(requested, "claude-") {
		if requested == "" {
			requested = "sonnet"
		}
		return "claude-" + requested + "-5"
	}
	return requested
}

// splitLines splits b after each newline, keeping the newlines.
func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, b)
			break
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}
