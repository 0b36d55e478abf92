package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/testdata/golden"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// This file holds the machinery of runner_e2e_test.go: a lane (a work
// directory, a simulator bin directory and the runner's argv and
// environment), running the real binary against it, and rendering its
// receipt for a golden file with only the run-specific fields normalized.

// e2eDescriptor is the descriptor each provider's lanes request: a model
// the simulated CLI lists and reports, an effort the provider accepts, and
// a parent that does not cover the provider natively (a Codex parent
// covers every codex descriptor, a Claude parent its own native claude
// lanes).
var e2eDescriptor = map[policy.Provider]struct {
	parent        policy.Parent
	model, effort string
}{
	policy.Claude:      {policy.ParentCodex, "opus", "high"},
	policy.Codex:       {policy.ParentClaude, "gpt-5.5", "high"},
	policy.Grok:        {policy.ParentClaude, "grok-4.7", "xhigh"},
	policy.Devin:       {policy.ParentClaude, "swe-2", "high"},
	policy.Cursor:      {policy.ParentClaude, "composer-2.5", "default"},
	policy.Antigravity: {policy.ParentClaude, "gemini-3.1-pro-high", "default"},
	policy.OpenCode:    {policy.ParentClaude, "openai/gpt-6.1-sol", "default"},
	policy.Gemini:      {policy.ParentClaude, "gemini-2.5-pro", "high"},
}

// e2eProviders is every provider the runner launches, in canonical order.
var e2eProviders = []policy.Provider{policy.Claude, policy.Codex, policy.Grok, policy.Devin,
	policy.Cursor, policy.Antigravity, policy.OpenCode, policy.Gemini}

// e2eLane is one prepared runner invocation. Paths live under work; the
// simulated CLIs under bin.
type e2eLane struct {
	provider policy.Provider
	work     string // prompt.md, checkout/, home/, out.md, receipt.json, progress.json
	bin      string // simenv bin directory, first on the runner's PATH
	args     []string
	env      []string
}

func (l *e2eLane) path(name string) string { return filepath.Join(l.work, name) }

// newE2ELane installs the simulator replaying scenario for the provider
// (every other provider replays success) and builds the runner's argv:
// read-only, with a progress file, apiSpend as given ("" omits the flag)
// and extra flags appended. The runner's environment is constructed, never
// the test's: PATH with the simulators first, HOME, LANG, plus extraEnv.
func newE2ELane(t *testing.T, provider policy.Provider, scenario, apiSpend string, extraEnv []string, extra ...string) *e2eLane {
	t.Helper()
	cfg := simenv.Scenarios(map[string]string{string(provider): scenario})
	cfg.HangCapSeconds = 60 // a failed test never leaves a simulator behind for long
	l := &e2eLane{provider: provider, work: t.TempDir(), bin: simenv.Install(t, "", cfg)}
	require.NoError(t, os.WriteFile(l.path("prompt.md"), []byte("Summarize README.md in one sentence.\n"), 0o600))
	for _, d := range []string{"checkout", "home"} {
		if d == "checkout" && provider == policy.Grok {
			// A read-only Grok lane refuses a checkout under a temporary
			// directory (providers/grok_checkout.go); the link resolves
			// to one outside.
			require.NoError(t, os.Symlink(simenv.Checkout(t), l.path(d)))
			continue
		}
		require.NoError(t, os.Mkdir(l.path(d), 0o755))
	}
	d := e2eDescriptor[provider]
	l.args = []string{"runner", "--parent", string(d.parent), "--provider", string(provider),
		"--model", d.model, "--effort", d.effort, "--mode", "read-only",
		"--prompt", l.path("prompt.md"), "--cwd", l.path("checkout"),
		"--output", l.path("out.md"), "--receipt", l.path("receipt.json"),
		"--progress", l.path("progress.json")}
	if apiSpend != "" {
		l.args = append(l.args, "--api-spend", apiSpend)
	}
	l.args = append(l.args, extra...)
	writable := l.bin // the simulators' log; a test's own fakes (srt) add theirs
	for _, kv := range extraEnv {
		if v, ok := strings.CutPrefix(kv, simenv.SandboxWritable+"="); ok {
			writable += ":" + v
		}
	}
	l.env = append([]string{"PATH=" + l.bin + ":/usr/bin:/bin", "HOME=" + l.path("home"), "LANG=C.UTF-8"}, extraEnv...)
	l.env = append(l.env, simenv.SandboxWritable+"="+writable)
	return l
}

// e2eRun is what one run of the binary produced.
type e2eRun struct {
	code           int
	stdout, stderr string
	wall           time.Duration // measured by the test around the whole process
}

// start starts the binary for the lane with its constructed environment.
func (l *e2eLane) start(stdout, stderr io.Writer) (*exec.Cmd, error) {
	cmd := exec.Command(binPath, l.args...)
	cmd.Env = l.env
	cmd.Dir = l.work
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return cmd, cmd.Start()
}

// run runs the lane to completion (bounded, so a hung runner fails the
// test instead of the whole package). It uses no testing.T so slow lanes
// can run concurrently from plain goroutines.
func (l *e2eLane) run() (e2eRun, error) {
	return l.runWith(nil)
}

// runWith runs the lane; during, when non-nil, runs once the process has
// started (the cancellation driver) and an error from it is returned after
// the runner has been waited for.
func (l *e2eLane) runWith(during func(cmd *exec.Cmd) error) (e2eRun, error) {
	var stdout, stderr bytes.Buffer
	t0 := time.Now()
	cmd, err := l.start(&stdout, &stderr)
	if err != nil {
		return e2eRun{}, err
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var duringErr error
	if during != nil {
		duringErr = during(cmd)
	}
	var werr error
	select {
	case werr = <-waited:
	case <-time.After(45 * time.Second):
		syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
		<-waited
		return e2eRun{}, fmt.Errorf("runner did not exit within 45s; stderr: %s", stderr.String())
	}
	r := e2eRun{stdout: stdout.String(), stderr: stderr.String(), wall: time.Since(t0)}
	var ee *exec.ExitError
	switch {
	case errors.As(werr, &ee):
		r.code = ee.ExitCode()
	case werr != nil:
		return r, werr
	}
	return r, duringErr
}

// waitFor polls cond every few milliseconds until it holds or limit passes.
func waitFor(limit time.Duration, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(limit)
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// cancelWhenBusy is the cancellation driver: it waits until the simulated
// CLI has logged its workload invocation, then, when the transcript prints
// anything before hanging, until the runner's progress snapshot has
// recorded that output (the snapshot flushes byte activity at most every
// 5 s; this wait is what makes the receipt's capture counts deterministic,
// since the simulator logs before it prints), and then sends SIGTERM to the
// runner process.
func (l *e2eLane) cancelWhenBusy(cmd *exec.Cmd) error {
	err := waitFor(20*time.Second, "the workload invocation in the simulator's log", func() (bool, error) {
		invs, err := simlog.Read(simenv.LogPath(l.bin))
		return len(simlog.Filter(invs, string(l.provider), simlog.KindWorkload)) > 0, err
	})
	if err == nil && l.scenarioPrints(simlog.KindWorkload) {
		err = waitFor(20*time.Second, "output activity in the progress snapshot", func() (bool, error) {
			b, err := os.ReadFile(l.path("progress.json"))
			if err != nil {
				return false, nil // renamed into place atomically; absent only before the first write
			}
			var snap struct {
				Phase    string `json:"phase"`
				Activity struct {
					LastActivityAt *string `json:"lastActivityAt"`
				} `json:"activity"`
			}
			if err := json.Unmarshal(b, &snap); err != nil {
				return false, fmt.Errorf("progress snapshot: %v", err)
			}
			return snap.Phase == "workload-running" && snap.Activity.LastActivityAt != nil, nil
		})
	}
	if err != nil {
		cmd.Process.Signal(syscall.SIGTERM) // end the lane anyway; the error fails the test
		return err
	}
	return cmd.Process.Signal(syscall.SIGTERM)
}

// scenarioPrints reports whether the lane's scenario writes any stdout or
// stderr for an invocation kind (the long-running Cursor and Devin
// workloads print nothing until they finish, as the real CLIs do).
func (l *e2eLane) scenarioPrints(kind string) bool {
	cfg, err := os.ReadFile(filepath.Join(l.bin, "simcli.json"))
	if err != nil {
		return true
	}
	var c simenv.Config
	if json.Unmarshal(cfg, &c) != nil {
		return true
	}
	dir := filepath.Join(c.Transcripts, string(l.provider), c.Providers[string(l.provider)].Scenario, kind)
	for _, f := range []string{"stdout", "stderr"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err == nil && fi.Size() > 0 {
			return true
		}
	}
	return false
}

// --- receipts as ordered JSON ---------------------------------------------

// jsonValue is a decoded JSON value that keeps object member order, so a
// golden reads in the receipt's own field order.
type jsonValue struct {
	members []jsonMember // objects
	items   []*jsonValue // arrays
	scalar  any          // string, json.Number, bool or nil
	kind    byte         // 'o', 'a' or 's'
}

type jsonMember struct {
	key   string
	value *jsonValue
}

// decodeOrdered decodes exactly one JSON value.
func decodeOrdered(b []byte) (*jsonValue, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (*jsonValue, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		v := &jsonValue{kind: 'o'}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			m, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			v.members = append(v.members, jsonMember{key: k.(string), value: m})
		}
		_, err := dec.Token()
		return v, err
	case json.Delim('['):
		v := &jsonValue{kind: 'a'}
		for dec.More() {
			m, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			v.items = append(v.items, m)
		}
		_, err := dec.Token()
		return v, err
	}
	return &jsonValue{kind: 's', scalar: tok}, nil
}

// get returns an object member (nil when absent).
func (v *jsonValue) get(key string) *jsonValue {
	if v == nil || v.kind != 'o' {
		return nil
	}
	for _, m := range v.members {
		if m.key == key {
			return m.value
		}
	}
	return nil
}

// render writes v indented by two spaces, strings escaped as the runner
// writes them (no HTML escaping).
func (v *jsonValue) render(b *strings.Builder, indent string) {
	switch v.kind {
	case 'o':
		if len(v.members) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, m := range v.members {
			b.WriteString(indent + "  ")
			b.WriteString(jsonString(m.key))
			b.WriteString(": ")
			m.value.render(b, indent+"  ")
			if i < len(v.members)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "}")
	case 'a':
		if len(v.items) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, it := range v.items {
			b.WriteString(indent + "  ")
			it.render(b, indent+"  ")
			if i < len(v.items)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "]")
	default:
		switch s := v.scalar.(type) {
		case nil:
			b.WriteString("null")
		case string:
			b.WriteString(jsonString(s))
		case json.Number:
			b.WriteString(s.String())
		case bool:
			b.WriteString(strconv.FormatBool(s))
		}
	}
}

func jsonString(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(buf.String(), "\n")
}

// --- normalization --------------------------------------------------------

// isoMillis is the receipt's timestamp form.
var isoMillis = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// agentName is the per-attempt agent of Antigravity (16 hex digits) and
// OpenCode (24): pstack-<sha256(receipt path) prefix>.
var agentName = regexp.MustCompile(`^pstack-([0-9a-f]{16}|[0-9a-f]{24})$`)

// receiptNormalizer replaces exactly the run-specific parts of a receipt:
// the two timestamps and elapsedMs (after checking their form and range),
// pid fields, the lane's temporary directories inside string values
// ($WORK, $BIN: the paths, the executable and argv[0]), and the agent name
// derived from the temporary receipt path (after checking the digest).
// Everything else is compared exactly.
type receiptNormalizer struct {
	lane    *e2eLane
	maxWall time.Duration
	errs    []string
}

func (n *receiptNormalizer) failf(format string, a ...any) {
	n.errs = append(n.errs, fmt.Sprintf(format, a...))
}

// paths lists (directory, placeholder) pairs, longest first, including
// each directory's resolved form.
func (n *receiptNormalizer) paths() [][2]string {
	var out [][2]string
	// The checkout is first: a Grok lane's links to one outside the
	// temporary directory, and its resolved form reads as the link.
	for _, p := range [][2]string{{n.lane.path("checkout"), "$WORK/checkout"}, {n.lane.work, "$WORK"}, {n.lane.bin, "$BIN"}} {
		out = append(out, p)
		if real, err := filepath.EvalSymlinks(p[0]); err == nil && real != p[0] {
			out = append(out, [2]string{real, p[1]})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i][0]) > len(out[j][0]) })
	return out
}

func (n *receiptNormalizer) text(s string) string {
	for _, p := range n.paths() {
		s = strings.ReplaceAll(s, p[0], p[1])
	}
	// The kernel's Landlock ABI varies by host; the golden says only
	// that the kernel verified the containment.
	return landlockABI.ReplaceAllString(s, "Landlock ABI N")
}

var landlockABI = regexp.MustCompile(`Landlock ABI \d+`)

// normalize rewrites the top-level receipt in place.
func (n *receiptNormalizer) normalize(rc *jsonValue) {
	if rc.kind != 'o' {
		n.failf("receipt is not a JSON object")
		return
	}
	var started, completed time.Time
	for i := range rc.members {
		m := &rc.members[i]
		switch m.key {
		case "startedAt", "completedAt":
			s, _ := m.value.scalar.(string)
			if !isoMillis.MatchString(s) {
				n.failf("%s %q is not an ISO timestamp with milliseconds", m.key, s)
				continue
			}
			ts, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				n.failf("%s: %v", m.key, err)
			}
			if m.key == "startedAt" {
				started = ts
			} else {
				completed = ts
			}
			m.value = &jsonValue{kind: 's', scalar: "<" + m.key + ">"}
		case "elapsedMs":
			num, _ := m.value.scalar.(json.Number)
			ms, err := num.Int64()
			if err != nil || ms < 0 || time.Duration(ms)*time.Millisecond > n.maxWall {
				n.failf("elapsedMs %v is not an integer between 0 and the measured wall time %s", m.value.scalar, n.maxWall)
			}
			m.value = &jsonValue{kind: 's', scalar: "<elapsedMs>"}
		}
	}
	if completed.Before(started) {
		n.failf("completedAt %s precedes startedAt %s", completed, started)
	}
	n.walk(rc)
}

// walk normalizes pid members and every string value below v.
func (n *receiptNormalizer) walk(v *jsonValue) {
	switch v.kind {
	case 'o':
		for i := range v.members {
			m := &v.members[i]
			if m.key == "pid" && m.value.kind == 's' && m.value.scalar != nil {
				m.value = &jsonValue{kind: 's', scalar: "<pid>"}
				continue
			}
			n.walk(m.value)
		}
	case 'a':
		for _, it := range v.items {
			n.walk(it)
		}
	default:
		s, ok := v.scalar.(string)
		if !ok {
			return
		}
		if g := agentName.FindStringSubmatch(s); g != nil {
			sum := sha256.Sum256([]byte(n.lane.path("receipt.json")))
			want := hex.EncodeToString(sum[:])[:len(g[1])]
			if g[1] != want {
				n.failf("agent name %s is not pstack-<sha256(receipt)[:%d]> (%s)", s, len(g[1]), want)
			}
			v.scalar = fmt.Sprintf("pstack-<sha256(receipt)[:%d]>", len(g[1]))
			return
		}
		v.scalar = n.text(s)
	}
}

// normalizedReceipt decodes, normalizes and renders a receipt.
func normalizedReceipt(l *e2eLane, raw []byte, maxWall time.Duration) (string, error) {
	rc, err := decodeOrdered(raw)
	if err != nil {
		return "", fmt.Errorf("receipt is not JSON: %v", err)
	}
	n := &receiptNormalizer{lane: l, maxWall: maxWall}
	n.normalize(rc)
	if len(n.errs) > 0 {
		return "", errors.New(strings.Join(n.errs, "; "))
	}
	var b strings.Builder
	rc.render(&b, "")
	b.WriteByte('\n')
	return b.String(), nil
}

// --- goldens --------------------------------------------------------------

// runnerGoldenDir holds testdata/runner/<provider>/<case>.golden.
const runnerGoldenDir = "testdata/runner"

// checkRunnerGolden compares got with testdata/runner/<provider>/<name>.golden,
// or rewrites it under -update.
func checkRunnerGolden(t *testing.T, provider policy.Provider, name, got string) {
	t.Helper()
	golden.Check(t, runnerGoldenDir+"/"+string(provider)+"/"+name+".golden", got)
}

// renderRunnerGolden is a golden file: a note when the status is not what
// the scenario's name says, the command line (paths normalized), the exit
// code, which stream carried the receipt line, the output file, and the
// normalized receipt file.
func renderRunnerGolden(l *e2eLane, r e2eRun, note, stream, output, receipt string) string {
	n := &receiptNormalizer{lane: l}
	quoted := make([]string, len(l.args))
	for i, a := range l.args {
		quoted[i] = n.text(a)
		if strings.ContainsAny(a, " \t\"'\\") {
			quoted[i] = strconv.Quote(quoted[i])
		}
	}
	if note != "" {
		note = "# " + note + "\n"
	}
	return fmt.Sprintf("%s$ switchyard %s\nexit %d\nreceipt line on %s\n--- output file\n%s--- receipt file\n%s",
		note, strings.Join(quoted, " "), r.code, stream, output, receipt)
}
