package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/switchyard-dev/switchyard/testdata/simcli/simconfig"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// simulation is one invocation of a simulated provider CLI.
type simulation struct {
	prov    simconfig.Provider
	binary  string
	binDir  string
	argv    []string
	args    []string
	started time.Time
	stdin   *os.File
	stdout  io.Writer
	stderr  io.Writer

	sig *signals
	cfg simconfig.Config
}

func (s *simulation) failf(format string, a ...any) int {
	fmt.Fprintf(s.stderr, "simcli: "+format+"\n", a...)
	return exitMisconfigured
}

func (s *simulation) run() int {
	cfg, err := simconfig.Load(s.binDir)
	if err != nil {
		return s.failf("%v", err)
	}
	s.cfg = cfg
	pc := cfg.Providers[s.prov.Name]
	kind := classify(s.prov.Name, s.args)
	scenario, seq, err := s.pickScenario(pc)
	if err != nil {
		return s.failf("%s queue: %v", s.prov.Name, err)
	}
	dir, err := s.transcriptDir(scenario, kind)
	if err != nil {
		return s.failf("%v", err)
	}
	r, err := loadReplay(dir)
	if err != nil {
		return s.failf("%v", err)
	}
	if r.hangIgnore {
		s.sig.ignore.Store(true) // such a CLI ignores signals from the start
	}

	inv := simlog.Invocation{
		Provider:      s.prov.Name,
		Binary:        s.binary,
		Argv:          s.argv,
		Env:           envNames(os.Environ()),
		StdinKind:     stdinKind(s.stdin),
		Kind:          kind,
		Scenario:      scenario,
		TranscriptDir: dir,
		Seq:           seq,
		Pid:           os.Getpid(),
		Ppid:          os.Getppid(),
		Pgid:          syscall.Getpgrp(),
		StartedAt:     s.started,
	}
	inv.Cwd, _ = os.Getwd()
	var prompt []byte
	if kind == simlog.KindWorkload && s.prov.Stdin && inv.StdinKind != simlog.StdinTerminal && inv.StdinKind != simlog.StdinClosed {
		if prompt, err = s.readStdin(&inv); err != nil {
			return s.failf("read stdin: %v", err)
		}
	}
	if err := simlog.Append(filepath.Join(s.binDir, simconfig.InvocationsLog), inv); err != nil {
		return s.failf("log invocation: %v", err)
	}

	if r.grandchild {
		if err := s.spawnGrandchild(r.grandchildInherit); err != nil {
			return s.failf("spawn grandchild: %v", err)
		}
	}

	if kind == simlog.KindAppServer {
		return s.serveAppServer(r, newTemplater(appServerVars(time.Now())))
	}

	vars := s.templateVars(pc, inv.Cwd)
	if s.prov.Name == "opencode" {
		if err := touchOpenCodeConfigHome(kind); err != nil {
			return s.failf("opencode global configuration directory: %v", err)
		}
		switch kind {
		case simlog.KindWorkload:
			// OpenCode persists each session (prompt, directory, agent,
			// model); `session export` reads it back later.
			if err := s.persistSession(vars, prompt); err != nil {
				return s.failf("persist session: %v", err)
			}
		case simlog.KindSessionExport:
			if vars, err = s.loadSession(); err != nil {
				fmt.Fprintf(s.stderr, "Session not found: %v\n", err)
				return 1
			}
		}
	}
	t := newTemplater(vars)
	if kind == simlog.KindWorkload && s.prov.Name == "antigravity" && slices.Contains(s.args, "accept-edits") {
		if code, msg := s.agyWriter(r, t, inv.Cwd); code != 0 {
			fmt.Fprintln(s.stderr, msg)
			return code
		}
	}
	if r.shellCommand != "" {
		out, err := exec.Command(os.Getenv("SHELL"), "-c", r.shellCommand).CombinedOutput()
		if err != nil {
			fmt.Fprintf(s.stderr, "Error: shell tool failed: %v\n%s", err, out)
			return 1
		}
	}
	stdout, stderr := t.apply(r.stdout), t.apply(r.stderr)
	if !r.hasStdout && r.echoEnv != "" {
		b, err := readEchoed(r.echoEnv)
		if err != nil {
			fmt.Fprintf(s.stderr, "Error: %v\n", err)
			return 1
		}
		stdout = b
	}
	if err := s.emit(stdout, stderr, r); err != nil {
		return 1 // a closed pipe; the parent went away
	}
	if r.export != nil {
		if path, ok := flagValue(s.args, "--export"); ok {
			if err := writeExport(path, t.apply(r.export)); err != nil {
				fmt.Fprintf(s.stderr, "Error: failed to write export: %v\n", err)
				return 1
			}
		}
	}
	return s.finish(r)
}

// templateVars binds the placeholders for this invocation's argv.
func (s *simulation) templateVars(pc simconfig.ProviderConfig, procCwd string) map[string]string {
	session := pc.Session
	if v, ok := flagValue(s.args, "--session-id", "--resume", "--session"); ok {
		session = v
	}
	if session == "" {
		session = simconfig.DefaultSession
	}
	model, _ := flagValue(s.args, "--model", "-m")
	reported := pc.ReportedModel
	if reported == "" {
		reported = reportedModel(s.prov.Name, model)
	}
	cwd := procCwd
	if v, ok := flagValue(s.args, cwdFlags[s.prov.Name]...); ok {
		cwd = v
	}
	agent, _ := flagValue(s.args, "--agent")
	return map[string]string{
		"agent":          agent,
		"model":          model,
		"reported_model": reported,
		"session":        session,
		"cwd":            cwd,
		"models":         strings.Join(pc.Models, "\n"),
	}
}

// finish delays, hangs, dies by a signal or exits as the replay says.
func (s *simulation) finish(r *replay) int {
	limit := s.hangCap()
	if r.delayMs > 0 {
		d := time.Duration(r.delayMs) * time.Millisecond
		if d > limit {
			return exitHangCap
		}
		time.Sleep(d)
	}
	if r.hang {
		time.Sleep(limit) // a handled signal exits from the watcher
		fmt.Fprintln(s.stderr, "simcli: hang cap reached")
		return exitHangCap
	}
	if r.dieBy != 0 {
		signal.Reset(r.dieBy)
		_ = syscall.Kill(os.Getpid(), r.dieBy)
		time.Sleep(limit) // delivery is asynchronous
	}
	return r.exit
}

func (s *simulation) hangCap() time.Duration {
	if s.cfg.HangCapSeconds > 0 {
		return time.Duration(s.cfg.HangCapSeconds) * time.Second
	}
	return 600 * time.Second
}

// pickScenario applies the provider's queue: the n-th invocation of the
// provider replays Queue[n] while it lasts. seq is -1 without a queue.
func (s *simulation) pickScenario(pc simconfig.ProviderConfig) (string, int, error) {
	scenario := pc.Scenario
	if scenario == "" {
		scenario = simconfig.ScenarioSuccess
	}
	if len(pc.Queue) == 0 {
		return scenario, -1, nil
	}
	seq, err := nextSeq(s.binDir, s.prov.Name)
	if err != nil {
		return "", 0, err
	}
	if seq < len(pc.Queue) {
		scenario = pc.Queue[seq]
	}
	return scenario, seq, nil
}

// nextSeq increments the provider's invocation counter under an exclusive
// flock, so concurrent invocations each take a distinct queue entry.
func nextSeq(binDir, provider string) (int, error) {
	lf, err := os.OpenFile(filepath.Join(binDir, simconfig.LockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return 0, err
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return 0, err
	}
	defer syscall.Flock(int(lf.Fd()), syscall.LOCK_UN)
	path := filepath.Join(binDir, simconfig.StateFile)
	state := map[string]int{}
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &state); err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	n := state[provider]
	state[provider] = n + 1
	b, err := json.Marshal(state)
	if err != nil {
		return 0, err
	}
	return n, os.WriteFile(path, b, 0o600)
}

// transcriptDir finds <root>/<provider>/<scenario>/<kind>, falling back to
// <root>/<provider>/_preflight/<kind> for preflight kinds.
func (s *simulation) transcriptDir(scenario, kind string) (string, error) {
	scenDir := scenario
	if !filepath.IsAbs(scenDir) {
		scenDir = filepath.Join(s.cfg.Transcripts, s.prov.Name, scenario)
	}
	if fi, err := os.Stat(scenDir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("no scenario %q for %s (looked in %s)", scenario, s.prov.Name, scenDir)
	}
	dir := filepath.Join(scenDir, kindDir(kind))
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return dir, nil
	}
	if kind != simlog.KindWorkload {
		def := filepath.Join(s.cfg.Transcripts, s.prov.Name, "_preflight", kindDir(kind))
		if fi, err := os.Stat(def); err == nil && fi.IsDir() {
			return def, nil
		}
	}
	return "", fmt.Errorf("no %s transcript for %s scenario %q (argv %q)", kind, s.prov.Name, scenario, s.args)
}

// readStdin reads fd 0 to EOF as given, hashing it and optionally keeping
// a copy.
func (s *simulation) readStdin(inv *simlog.Invocation) ([]byte, error) {
	h := sha256.New()
	var kept bytes.Buffer
	var w io.Writer = h
	if s.prov.Name == "opencode" {
		w = io.MultiWriter(h, &kept) // OpenCode persists the prompt with its session
	}
	var keep *os.File
	if s.cfg.CaptureStdin {
		dir := filepath.Join(s.binDir, simconfig.StdinDir)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(os.Getpid())+".bin"), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, err
		}
		keep = f
		w = io.MultiWriter(w, f)
		inv.StdinFile = f.Name()
	}
	n, err := io.Copy(w, s.stdin)
	if keep != nil {
		if cerr := keep.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return nil, err
	}
	inv.StdinRead = true
	inv.StdinBytes = n
	inv.StdinSHA256 = hexSum(h)
	return kept.Bytes(), nil
}

func hexSum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

// emit writes the replayed output: all of stdout then all of stderr, or
// line pairs with chunkMs pauses when chunk_ms is present.
func (s *simulation) emit(stdout, stderr []byte, r *replay) error {
	if !r.chunked {
		if _, err := s.stdout.Write(stdout); err != nil {
			return err
		}
		_, err := s.stderr.Write(stderr)
		return err
	}
	outs, errs := splitLines(stdout), splitLines(stderr)
	for i := 0; i < len(outs) || i < len(errs); i++ {
		if i > 0 && r.chunkMs > 0 {
			time.Sleep(time.Duration(r.chunkMs) * time.Millisecond)
		}
		if i < len(outs) {
			if _, err := s.stdout.Write(outs[i]); err != nil {
				return err
			}
		}
		if i < len(errs) {
			if _, err := s.stderr.Write(errs[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// readEchoed prints the configuration named by the first set variable of
// names (space separated): for a file (OpenCode 1.x's OPENCODE_CONFIG) the
// effective configuration 1.18.33 prints for it (openCodeEffective), or, for a directory
// (OpenCode 2.x's OPENCODE_CONFIG_DIR), the 2.x `debug config` source list:
// the directory's opencode.json as a document source and the directory
// itself.
func readEchoed(names string) ([]byte, error) {
	for _, name := range strings.Fields(names) {
		path := os.Getenv(name)
		if path == "" {
			continue
		}
		fi, err := os.Stat(path)
		if err != nil || !fi.IsDir() {
			b, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			return openCodeEffective(b), nil
		}
		doc := filepath.Join(path, "opencode.json")
		b, err := os.ReadFile(doc)
		if err != nil {
			return nil, err
		}
		var info any
		if err := json.Unmarshal(b, &info); err != nil {
			return nil, fmt.Errorf("%s: %w", doc, err)
		}
		return json.MarshalIndent([]any{
			map[string]any{"type": "document", "path": doc, "info": info},
			map[string]any{"type": "directory", "path": path},
		}, "", "  ")
	}
	return nil, fmt.Errorf("none of %s is set", names)
}

// writeExport writes a side file the way the CLI does: parent directories
// created private, the file replaced.
func writeExport(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// envNames returns the sorted, distinct variable names of an environment.
func envNames(env []string) []string {
	seen := map[string]bool{}
	names := []string{}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if name != "" && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// stdinKind describes what fd 0 is without reading it.
func stdinKind(f *os.File) string {
	fi, err := f.Stat()
	if err != nil {
		return simlog.StdinClosed
	}
	m := fi.Mode()
	switch {
	case m&os.ModeNamedPipe != 0:
		return simlog.StdinPipe
	case m.IsRegular():
		return simlog.StdinFile
	case m&os.ModeSocket != 0:
		return simlog.StdinSocket
	case m&os.ModeCharDevice != 0:
		if dn, err := os.Stat(os.DevNull); err == nil && os.SameFile(fi, dn) {
			return simlog.StdinDevNull
		}
		return simlog.StdinTerminal
	}
	return simlog.StdinOther
}
