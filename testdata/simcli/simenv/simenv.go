// Package simenv installs the simulated provider CLIs for a test: it
// builds testdata/simcli once per test binary and links it under every
// provider binary name in a bin directory with a simcli.json choosing the
// scenarios.
//
//	bin := simenv.Install(t, "", simenv.Config{Providers: map[string]simenv.ProviderConfig{
//		"codex": {Scenario: "usage-exhausted"},
//	}})
//	// run the runner with PATH=bin, then:
//	invs := simenv.Invocations(t, bin)
package simenv

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"testing"

	"github.com/switchyard-dev/switchyard/testdata/simcli/simconfig"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// Config and ProviderConfig are simcli.json (see simconfig).
type (
	Config         = simconfig.Config
	ProviderConfig = simconfig.ProviderConfig
)

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// sourceDir is testdata/simcli, found from this file's location.
func sourceDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("simenv: cannot locate its source file")
	}
	return filepath.Dir(filepath.Dir(file))
}

// TranscriptsRoot is the absolute path of testdata/transcripts.
func TranscriptsRoot() string {
	return filepath.Join(filepath.Dir(sourceDir()), "transcripts")
}

// Build compiles the simulator once per test binary and returns the path
// of the executable. The binary is cached under the system temporary
// directory by a digest of the simulator's sources and the Go version, so
// concurrent test binaries share it and an edit rebuilds it.
func Build(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() { buildPath, buildErr = build() })
	if buildErr != nil {
		t.Fatalf("simenv: build simulator: %v", buildErr)
	}
	return buildPath
}

func build() (string, error) {
	src := sourceDir()
	digest, err := sourceDigest(src)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(os.TempDir(), "switchyard-simcli-"+digest[:16])
	exe := filepath.Join(dir, "simcli")
	if fi, err := os.Stat(exe); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return exe, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, ".simcli-build-*")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	cmd := exec.Command(goTool(), "build", "-o", tmp.Name(), ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	// Rename is atomic: a concurrent builder's identical result may win.
	if err := os.Rename(tmp.Name(), exe); err != nil {
		return "", err
	}
	return exe, nil
}

// sourceDigest hashes every .go file of the simulator and its packages.
func sourceDigest(src string) (string, error) {
	var files []string
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && filepath.Ext(path) == ".go" {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	h := sha256.New()
	fmt.Fprintln(h, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, f := range files {
		rel, _ := filepath.Rel(src, f)
		fmt.Fprintln(h, rel)
		in, err := os.Open(f)
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, in)
		in.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// goTool is the go command of the toolchain running the tests.
func goTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			return p
		}
	}
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Install builds the simulator (once), links it under every provider
// binary name in dir (a new t.TempDir() when dir is "") and writes cfg as
// simcli.json. An empty cfg.Transcripts means TranscriptsRoot(). It
// returns the bin directory, to put first on the runner's PATH.
func Install(t testing.TB, dir string, cfg Config) (binDir string) {
	t.Helper()
	exe := Build(t)
	if dir == "" {
		dir = t.TempDir()
	}
	cfg.Transcripts = cmp.Or(cfg.Transcripts, TranscriptsRoot())
	if err := simconfig.Install(exe, dir, cfg); err != nil {
		t.Fatalf("simenv: install into %s: %v", dir, err)
	}
	return dir
}

// Configure replaces the bin directory's simcli.json (restarting every
// provider's queue); an empty cfg.Transcripts means TranscriptsRoot().
func Configure(t testing.TB, binDir string, cfg Config) {
	t.Helper()
	cfg.Transcripts = cmp.Or(cfg.Transcripts, TranscriptsRoot())
	if err := simconfig.Write(binDir, cfg); err != nil {
		t.Fatalf("simenv: configure %s: %v", binDir, err)
	}
}

// Scenarios is a Config that gives each named provider one scenario.
func Scenarios(pairs map[string]string) Config {
	c := Config{Providers: map[string]ProviderConfig{}}
	for p, s := range pairs {
		c.Providers[p] = ProviderConfig{Scenario: s}
	}
	return c
}

// LogPath is the invocation log of a bin directory.
func LogPath(binDir string) string { return filepath.Join(binDir, simconfig.InvocationsLog) }

// SignalsPath is the signal log of a bin directory.
func SignalsPath(binDir string) string { return filepath.Join(binDir, simconfig.SignalsLog) }

// Invocations reads the bin directory's invocation log.
func Invocations(t testing.TB, binDir string) []simlog.Invocation {
	t.Helper()
	invs, err := simlog.Read(LogPath(binDir))
	if err != nil {
		t.Fatalf("simenv: %v", err)
	}
	return invs
}

// Signals reads the bin directory's signal log.
func Signals(t testing.TB, binDir string) []simlog.Signal {
	t.Helper()
	sigs, err := simlog.ReadSignals(SignalsPath(binDir))
	if err != nil {
		t.Fatalf("simenv: %v", err)
	}
	return sigs
}

// Binary is the path of a provider's simulated executable in binDir
// ("cursor" → cursor-agent, "antigravity" → agy).
func Binary(t testing.TB, binDir, provider string) string {
	t.Helper()
	p, ok := simconfig.ByName(provider)
	if !ok {
		t.Fatalf("simenv: unknown provider %q", provider)
	}
	return filepath.Join(binDir, p.Binary)
}

// SandboxWritable is the runner's variable naming extra directories a
// contained attempt may write (runner.EnvSandboxWritable): the simulated
// CLIs keep their invocation log and queue state in their bin directory,
// so every harness that launches them contained names it there.
const SandboxWritable = "SWITCHYARD_SANDBOX_WRITABLE"
