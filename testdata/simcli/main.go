// Command simcli is a simulated provider CLI: one real executable that,
// linked under a provider's binary name (claude, codex, grok, devin,
// cursor-agent, agy, opencode, gemini), replays a recorded transcript for
// that provider so the runner's timeouts, signals, exit codes, pipes and
// side files are exercised against a real process.
//
// Each invocation reads simcli.json beside the path it was invoked by
// (never an environment variable: the runner gives children a constructed
// environment), classifies argv as a preflight probe or the workload,
// replays <transcripts>/<provider>/<scenario>/<kind>/ and appends one line
// describing itself to invocations.jsonl in the same directory. The
// transcript layout is documented in testdata/transcripts/README.md.
//
// Invoked as "simcli" it is a small installer:
//
//	simcli install [-transcripts DIR] [-capture-stdin] BINDIR [provider=scenario ...]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchyard-dev/switchyard/testdata/simcli/simconfig"
)

// Exit codes of the simulator itself, distinct from anything a transcript
// replays.
const (
	exitMisconfigured = 125 // bad config, missing transcript, unknown binary name
	exitHangCap       = 126 // a hang or delay outlived Config.HangCapSeconds
)

// grandchildName is argv[0]'s base name for a spawned sleeping grandchild.
const grandchildName = "simcli-grandchild"

func main() {
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

func run(argv []string, stdin *os.File, stdout, stderr io.Writer) int {
	started := time.Now().UTC()
	if len(argv) == 0 {
		fmt.Fprintln(stderr, "simcli: empty argv")
		return exitMisconfigured
	}
	self, err := invokedPath(argv[0])
	if err != nil {
		fmt.Fprintf(stderr, "simcli: locate %q: %v\n", argv[0], err)
		return exitMisconfigured
	}
	base := filepath.Base(argv[0])
	binDir := filepath.Dir(self)
	switch base {
	case "simcli":
		return runTool(argv[1:], stderr)
	case grandchildName:
		return runGrandchild(argv[1:])
	}
	prov, ok := simconfig.ByBinary(base)
	if !ok {
		fmt.Fprintf(stderr, "simcli: %q is not a simulated provider binary\n", base)
		return exitMisconfigured
	}
	sim := &simulation{
		prov:    prov,
		binary:  base,
		binDir:  binDir,
		argv:    argv,
		args:    argv[1:],
		started: started,
		stdin:   stdin,
		stdout:  stdout,
		stderr:  stderr,
	}
	sim.sig = watchSignals(sim)
	return sim.run()
}

// invokedPath makes argv[0] absolute without following symlinks: a path
// with a slash is taken relative to the working directory, a bare name is
// looked up on PATH as the parent did.
func invokedPath(arg0 string) (string, error) {
	if strings.Contains(arg0, "/") {
		return filepath.Abs(arg0)
	}
	if p, err := exec.LookPath(arg0); err == nil {
		return filepath.Abs(p)
	}
	return os.Executable()
}

// runTool implements the "simcli" name: installing links and a config.
func runTool(args []string, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "install" {
		fmt.Fprintln(stderr, "usage: simcli install [-transcripts DIR] [-capture-stdin] BINDIR [provider=scenario ...]")
		return 64
	}
	fs := flag.NewFlagSet("simcli install", flag.ContinueOnError)
	fs.SetOutput(stderr)
	transcripts := fs.String("transcripts", "", "transcript root (required)")
	capture := fs.Bool("capture-stdin", false, "keep a copy of every stdin read under BINDIR/stdin")
	if err := fs.Parse(args[1:]); err != nil {
		return 64
	}
	if fs.NArg() < 1 {
		fmt.Fprintln(stderr, "simcli install: BINDIR is required")
		return 64
	}
	binDir, err := filepath.Abs(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, "simcli install:", err)
		return 1
	}
	cfg := simconfig.Config{Transcripts: *transcripts, CaptureStdin: *capture, Providers: map[string]simconfig.ProviderConfig{}}
	if cfg.Transcripts == "" {
		fmt.Fprintln(stderr, "simcli install: -transcripts is required")
		return 64
	}
	if cfg.Transcripts, err = filepath.Abs(cfg.Transcripts); err != nil {
		fmt.Fprintln(stderr, "simcli install:", err)
		return 1
	}
	for _, pair := range fs.Args()[1:] {
		name, scenario, ok := strings.Cut(pair, "=")
		if !ok {
			fmt.Fprintf(stderr, "simcli install: %q is not provider=scenario\n", pair)
			return 64
		}
		cfg.Providers[name] = simconfig.ProviderConfig{Scenario: scenario}
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "simcli install:", err)
		return 1
	}
	if err := simconfig.Install(exe, binDir, cfg); err != nil {
		fmt.Fprintln(stderr, "simcli install:", err)
		return 1
	}
	return 0
}
