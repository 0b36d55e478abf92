// Package simconfig describes an installation of the simulated provider
// CLIs: the simcli.json file that chooses a transcript scenario per
// invocation, and the per-provider executable names the simulator is
// linked under.
//
// A bin directory holds one link per provider binary name (claude, codex,
// grok, devin, cursor-agent, agy, opencode, gemini) to the same simulator
// executable, plus simcli.json beside them. The simulator finds the file
// next to the path it was invoked by (os.Args[0] made absolute, symlinks
// not followed), so a runner that passes its children a constructed
// environment still selects scenarios per test.
package simconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// File names inside a bin directory.
const (
	ConfigFile     = "simcli.json"       // the Config
	InvocationsLog = "invocations.jsonl" // one simlog.Invocation per line
	SignalsLog     = "signals.jsonl"     // one simlog.Signal per line
	RPCLog         = "rpc.jsonl"         // one simlog.RPC per app-server message read
	StateFile      = "simcli.state.json" // per-provider invocation counters (queues)
	LockFile       = "simcli.lock"       // flock guarding StateFile
	StdinDir       = "stdin"             // captured stdin copies (Config.CaptureStdin)
)

// Scenario names shipped for every provider under testdata/transcripts.
const (
	ScenarioSuccess        = "success"
	ScenarioUsageExhausted = "usage-exhausted"
	ScenarioUnauth         = "unauthenticated"
	ScenarioMalformed      = "malformed"
	ScenarioLongRunning    = "long-running"
	ScenarioGrandchild     = "long-running-grandchild"
	ScenarioSlowSuccess    = "slow-success"
)

// Config is the content of simcli.json.
type Config struct {
	// Transcripts is the transcript root: <root>/<provider>/<scenario>/.
	// A relative path is resolved against the bin directory.
	Transcripts string `json:"transcripts"`
	// Providers maps a provider name (claude, codex, grok, devin, cursor,
	// antigravity, opencode, gemini) to its scenario choice. A provider
	// that is absent replays ScenarioSuccess.
	Providers map[string]ProviderConfig `json:"providers,omitempty"`
	// CaptureStdin, when true, also writes every stdin the simulator reads
	// to <bin>/stdin/<pid>.bin and records the path in the invocation.
	CaptureStdin bool `json:"captureStdin,omitempty"`
	// HangCapSeconds bounds a hang (and a grandchild's sleep) so a failed
	// test cannot leak a process forever; 0 means 600.
	HangCapSeconds int `json:"hangCapSeconds,omitempty"`
}

// ProviderConfig chooses what one provider's invocations replay.
type ProviderConfig struct {
	// Scenario is replayed by every invocation once Queue is used up;
	// "" means ScenarioSuccess. A scenario is a directory name under
	// <root>/<provider>/, or an absolute path to a scenario directory.
	Scenario string `json:"scenario,omitempty"`
	// Queue lists scenarios for the provider's first invocations, one
	// each, in order, counting every invocation of that provider
	// (preflight probes and the workload alike).
	Queue []string `json:"queue,omitempty"`
	// ReportedModel overrides {{reported_model}} (the model the CLI
	// reports); "" derives it from the requested --model.
	ReportedModel string `json:"reportedModel,omitempty"`
	// Session overrides {{session}} when argv names no session; "" means
	// DefaultSession.
	Session string `json:"session,omitempty"`
	// Models are extra lines for {{models}} in model listings.
	Models []string `json:"models,omitempty"`
}

// DefaultSession is {{session}} when neither argv nor the config names one.
const DefaultSession = "5e551011-0c1d-4a2b-9e3f-5a1c0de5e551"

// Provider describes one simulated CLI.
type Provider struct {
	Name   string // provider name as in policy (cursor, antigravity)
	Binary string // executable name the runner looks up
	// Stdin reports whether the workload reads its prompt on stdin.
	Stdin bool
}

// Providers lists every simulated provider in canonical order.
var Providers = []Provider{
	{Name: "claude", Binary: "claude", Stdin: true},
	{Name: "codex", Binary: "codex", Stdin: true},
	{Name: "grok", Binary: "grok", Stdin: false},
	{Name: "devin", Binary: "devin", Stdin: false},
	{Name: "cursor", Binary: "cursor-agent", Stdin: true},
	{Name: "antigravity", Binary: "agy", Stdin: true},
	{Name: "opencode", Binary: "opencode", Stdin: true},
	{Name: "gemini", Binary: "gemini", Stdin: true},
}

// ByBinary returns the provider simulated under an executable name.
func ByBinary(binary string) (Provider, bool) {
	for _, p := range Providers {
		if p.Binary == binary {
			return p, true
		}
	}
	return Provider{}, false
}

// ByName returns the provider with a policy name.
func ByName(name string) (Provider, bool) {
	for _, p := range Providers {
		if p.Name == name {
			return p, true
		}
	}
	return Provider{}, false
}

// Validate reports unknown providers and empty queue entries.
func (c Config) Validate() error {
	if c.Transcripts == "" {
		return errors.New("simcli config: transcripts root is empty")
	}
	names := make([]string, 0, len(c.Providers))
	for n := range c.Providers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, ok := ByName(n); !ok {
			return fmt.Errorf("simcli config: unknown provider %q", n)
		}
		for i, s := range c.Providers[n].Queue {
			if s == "" {
				return fmt.Errorf("simcli config: %s queue entry %d is empty", n, i)
			}
		}
	}
	if c.HangCapSeconds < 0 {
		return errors.New("simcli config: hangCapSeconds is negative")
	}
	return nil
}

// Load reads and validates <binDir>/simcli.json, resolving a relative
// transcript root against binDir.
func Load(binDir string) (Config, error) {
	b, err := os.ReadFile(filepath.Join(binDir, ConfigFile))
	if err != nil {
		return Config{}, err
	}
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return Config{}, fmt.Errorf("simcli config %s: %w", filepath.Join(binDir, ConfigFile), err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	if !filepath.IsAbs(c.Transcripts) {
		c.Transcripts = filepath.Join(binDir, c.Transcripts)
	}
	return c, nil
}

// Write validates c and writes it as <binDir>/simcli.json, replacing any
// previous file (tests may switch scenarios between invocations), and
// restarts every provider's queue.
func Write(binDir string, c Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(binDir, StateFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(binDir, ".simcli-*.json")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(binDir, ConfigFile))
}

// Install links the simulator executable exe into binDir under every
// provider binary name (a hard link, or a copy across file systems, so the
// name survives a runner that resolves symlinks) and writes c. Existing
// entries of those names are replaced.
func Install(exe, binDir string, c Config) error {
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return err
	}
	for _, p := range Providers {
		dst := filepath.Join(binDir, p.Binary)
		if err := os.Remove(dst); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if err := os.Link(exe, dst); err == nil {
			continue
		}
		if err := copyExecutable(exe, dst); err != nil {
			return fmt.Errorf("install %s: %w", p.Binary, err)
		}
	}
	return Write(binDir, c)
}

func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
