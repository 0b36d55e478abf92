package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Environment variables of the re-exec: EnvPolicy carries the Policy as
// JSON to the sandboxed process, EnvProbe (self-test only) the probes it
// runs instead of exec'ing a command. Neither reaches the CLI: Enter
// removes both before it execs.
const (
	EnvPolicy = "SWITCHYARD_SANDBOX_POLICY"
	EnvProbe  = "SWITCHYARD_SANDBOX_PROBE"
)

// ExitSandboxFailed is the exit status of a re-exec that could not apply
// its policy or exec its command: the command never ran.
const ExitSandboxFailed = 125

// MinABI is the lowest Landlock ABI the sandbox accepts: filesystem rules
// with truncate and device ioctl (ABI 3, 5), TCP connect rules (ABI 4)
// and the signal and abstract-socket scopes (ABI 6; Linux 6.12).
const MinABI = 6

// Policy is what a sandboxed process may do beyond reading and executing
// files: write its Writable paths (each an existing directory, with
// everything beneath it, or an existing file) and connect over TCP to
// ConnectPort (the attempt's egress proxy; 0 allows no TCP connect).
// Every other write and TCP connect is refused by the kernel,
// as are signals and abstract Unix sockets to processes outside the
// sandbox.
type Policy struct {
	Writable    []string `json:"writable"`
	ConnectPort uint16   `json:"connectPort"`
}

// validate checks every writable path is absolute and clean.
func (p Policy) validate() error {
	for _, w := range p.Writable {
		if !filepath.IsAbs(w) || filepath.Clean(w) != w {
			return fmt.Errorf("writable path %q is not absolute and clean", w)
		}
	}
	return nil
}

// WorktreeWritable lists what a writer may write in its worktree: every
// entry at its top level except ".git" (the parent owns Git metadata).
// Landlock grants rights to a directory and everything beneath it, so the
// worktree directory itself stays read-only: a writer edits, creates and
// removes files inside the existing top-level directories and edits the
// existing top-level files, but cannot create or remove top-level entries
// (docs/GUARANTEES.md).
func WorktreeWritable(worktree string) ([]string, error) {
	entries, err := os.ReadDir(worktree)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		if e.Type()&os.ModeSymlink != 0 {
			// A symlink's rule would follow it out of the worktree.
			continue
		}
		out = append(out, filepath.Join(worktree, e.Name()))
	}
	return out, nil
}

// Wrap turns a command into its sandboxed form: argv[0] becomes an
// argument of exe (the switchyard binary, whose Enter applies p and execs
// argv), and env carries p. Any sandbox variable already in env is
// dropped first, so a child cannot be handed a different policy.
func Wrap(exe string, p Policy, argv, env []string) ([]string, []string, error) {
	if !filepath.IsAbs(exe) {
		return nil, nil, fmt.Errorf("sandbox launcher %q is not an absolute path", exe)
	}
	if len(argv) == 0 || !filepath.IsAbs(argv[0]) {
		return nil, nil, fmt.Errorf("command %q is not an absolute executable path", argv)
	}
	if err := p.validate(); err != nil {
		return nil, nil, err
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, nil, err
	}
	out := slices.DeleteFunc(slices.Clone(env), isSandboxVar)
	out = append(out, EnvPolicy+"="+string(b))
	return append([]string{exe}, argv...), out, nil
}

// IsSandboxVar reports whether kv (NAME=value) is one of the sandbox's
// own variables, which no child may be handed.
func IsSandboxVar(kv string) bool { return isSandboxVar(kv) }

func isSandboxVar(kv string) bool {
	return strings.HasPrefix(kv, EnvPolicy+"=") || strings.HasPrefix(kv, EnvProbe+"=")
}

// decodePolicy reads EnvPolicy's value strictly.
func decodePolicy(raw string) (Policy, error) {
	var p Policy
	d := json.NewDecoder(strings.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(&p); err != nil {
		return Policy{}, fmt.Errorf("sandbox policy: %w", err)
	}
	if d.More() {
		return Policy{}, errors.New("sandbox policy: trailing data")
	}
	return p, p.validate()
}
