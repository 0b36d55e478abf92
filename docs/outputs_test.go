package docs

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// A documented command output is a fenced block (```console or ```text)
// whose preceding line names how it is produced:
//
//	<!-- output: make demo -->        the block is what `make demo` prints
//	                                  from its first "$ switchyard" line to
//	                                  its replay line
//	<!-- output: after make demo -->  the block is a transcript: each
//	                                  "$ COMMAND" line (a trailing "\"
//	                                  continues it) is run, in order, in one
//	                                  bash in the clone's root, with bin/ and
//	                                  bin/sim first on PATH and
//	                                  SWITCHYARD_DATA_DIR set to the data
//	                                  directory the demo just wrote; the lines
//	                                  up to the next "$ " are what it prints
//	                                  (stdout and stderr, any exit code)
//	<!-- output: in the clone -->     a transcript run the same way, whose
//	                                  commands read only files of the clone
//
// A line "..." in a block stands for any number of lines (an excerpt).
// Both sides are normalized before they are compared (normalize), so that
// only what a run cannot reproduce is left out.
var outputMarker = regexp.MustCompile("(?m)^<!-- output: ([a-z ]+) -->\n```(?:console|text)\n((?s:.*?))```\n")

// The fixtures a marker may name.
const (
	fixtureDemo      = "make demo"
	fixtureAfterDemo = "after make demo"
	fixtureClone     = "in the clone"
)

// outputBlock is one marked block of a document.
type outputBlock struct {
	where   string // file:line of the fence
	fixture string
	body    string
}

// outputBlocks returns every marked output block of README.md and docs/.
func outputBlocks(t *testing.T) []outputBlock {
	t.Helper()
	var blocks []outputBlock
	for _, f := range documents(t) {
		text := read(t, f)
		for _, m := range outputMarker.FindAllStringSubmatchIndex(text, -1) {
			b := outputBlock{
				where:   fmt.Sprintf("%s:%d", f, strings.Count(text[:m[0]], "\n")+2),
				fixture: text[m[2]:m[3]],
				body:    text[m[4]:m[5]],
			}
			switch b.fixture {
			case fixtureDemo, fixtureAfterDemo, fixtureClone:
			default:
				t.Fatalf("%s: unknown output fixture %q", b.where, b.fixture)
			}
			blocks = append(blocks, b)
		}
	}
	return blocks
}

// Normalization: what differs between two runs of the same commands, and
// what differs between this machine and the one a document was written on,
// is replaced on both sides by a placeholder. Nothing else is.
var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	// Temporary directories: mktemp's random suffix.
	{regexp.MustCompile(`switchyard-demo\.[A-Za-z0-9]+`), "switchyard-demo.<tmp>"},
	// Execution ids, in full or abbreviated in a document ("a910…").
	{regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), "<id>"},
	{regexp.MustCompile(`\b[0-9a-f]{4}…`), "<id>"},
	// Worker ids: "<hostname>-<pid>-<8 hex digits>".
	{regexp.MustCompile(`\b[A-Za-z0-9_.-]+-[0-9]+-[0-9a-f]{8}\b`), "<worker>"},
	// Times (RFC 3339, UTC), digests of what holds a time, process ids and
	// ports.
	{regexp.MustCompile(`\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`), "<time>"},
	{regexp.MustCompile(`\bsha256:[0-9a-f]{12,64}\b`), "sha256:<digest>"},
	{regexp.MustCompile(`\bpid \d+`), "pid <pid>"},
	{regexp.MustCompile(`(127\.0\.0\.1|localhost):\d+`), "$1:<port>"},
	// Durations ("129ms", "0.0s", "1m30s", "2m ago").
	{regexp.MustCompile(`\b(\d+h)?(\d+m)?\d+(\.\d+)?(ns|µs|ms|s)\b`), "<duration>"},
	{regexp.MustCompile(`\b\d+[mhd] ago\b`), "<duration> ago"},
	// The kernel's Landlock ABI version.
	{regexp.MustCompile(`Landlock ABI \d+`), "Landlock ABI <n>"},
	// history's sequence numbers: lanes run concurrently, so one lane's
	// events interleave with the others' differently each run.
	{regexp.MustCompile(`(?m)^\d+ +<time>`), "<seq> <time>"},
	// Trailing blanks (tables pad their last column).
	{regexp.MustCompile(`(?m)[ \t]+$`), ""},
}

// progressLine is a run's per-lane progress line ("swarm workers#2 (lane
// 1): running ...") or a line it prints under one ("  notice: ...").
var (
	progressLine = regexp.MustCompile(`^\S.*\(lane \d+\): `)
	progressSub  = regexp.MustCompile(`^  (notice|waiting)`)
)

// normalize applies the normalizers, then sorts each stretch of progress
// lines (each with the lines under it): lanes run concurrently, so their
// lines' order varies from run to run while their content does not.
func normalize(s string) []string {
	for _, n := range normalizers {
		s = n.re.ReplaceAllString(s, n.with)
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	var out, group []string
	var stretch [][]string
	flush := func() {
		if len(group) > 0 {
			stretch = append(stretch, group)
			group = nil
		}
		sort.SliceStable(stretch, func(i, j int) bool { return stretch[i][0] < stretch[j][0] })
		for _, g := range stretch {
			out = append(out, g...)
		}
		stretch = nil
	}
	for _, l := range lines {
		switch {
		case progressLine.MatchString(l):
			if len(group) > 0 {
				stretch = append(stretch, group)
			}
			group = []string{l}
		case progressSub.MatchString(l) && len(group) > 0:
			group = append(group, l)
		default:
			flush()
			out = append(out, l)
		}
	}
	flush()
	return out
}

// matchLines reports whether got matches want, where a want line "..."
// matches any number of got lines.
func matchLines(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "..." {
		for i := 0; i <= len(got); i++ {
			if matchLines(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && want[0] == got[0] && matchLines(want[1:], got[1:])
}

// compareOutput fails the test when got (what a command printed) does not
// match the documented want, showing both normalized.
func compareOutput(t *testing.T, where, what, want, got string, replace map[string]string) {
	t.Helper()
	for from, to := range replace {
		got = strings.ReplaceAll(got, from, to)
	}
	w, g := normalize(want), normalize(got)
	if !matchLines(w, g) {
		i := 0
		for i < len(w) && i < len(g) && w[i] == g[i] {
			i++
		}
		t.Errorf("%s: the documented output of %s no longer matches what it prints (first difference at its normalized line %d); update the block.\n--- documented (normalized):\n%s\n--- printed (normalized):\n%s",
			where, what, i+1, strings.Join(w, "\n"), strings.Join(g, "\n"))
	}
}

// transcriptCommand is one "$ " command of a block and the output the block
// shows for it.
type transcriptCommand struct {
	command, output string
}

// parseTranscript splits a block into its commands.
func parseTranscript(t *testing.T, where, body string) []transcriptCommand {
	t.Helper()
	var cmds []transcriptCommand
	lines := strings.Split(strings.TrimRight(body, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if c, ok := strings.CutPrefix(l, "$ "); ok {
			for strings.HasSuffix(c, `\`) && i+1 < len(lines) {
				i++
				c += "\n" + lines[i]
			}
			cmds = append(cmds, transcriptCommand{command: c})
			continue
		}
		if len(cmds) == 0 {
			t.Fatalf("%s: a transcript block must start with a \"$ \" command line, not %q", where, l)
		}
		cmds[len(cmds)-1].output += l + "\n"
	}
	return cmds
}

// runTranscript runs a block's commands in one bash and returns what each
// printed.
func runTranscript(t *testing.T, env []string, cmds []transcriptCommand) []string {
	t.Helper()
	const sep = "@@@ switchyard docs output %d @@@"
	var script strings.Builder
	for i, c := range cmds {
		// The separator keeps the previous command's exit status for a
		// documented `echo $?`.
		fmt.Fprintf(&script, "sy_status=$?; echo '"+sep+"'; (exit $sy_status)\n%s\n", i, c.command)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var out syncBuffer
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir = repoRoot
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run() // a transcript may show a failing command; its output is compared
	if ctx.Err() != nil {
		t.Fatalf("the transcript did not end within 5 minutes:\n%s", out.String())
	}
	outputs := make([]string, len(cmds))
	rest := out.String()
	for i := range cmds {
		_, after, ok := strings.Cut(rest, fmt.Sprintf(sep, i)+"\n")
		if !ok {
			t.Fatalf("the transcript's output lacks the start of command %d:\n%s", i, out.String())
		}
		rest = after
		next := fmt.Sprintf(sep, i+1) + "\n"
		if i+1 == len(cmds) {
			outputs[i] = rest
			break
		}
		outputs[i], _, _ = strings.Cut(rest, next)
	}
	return outputs
}

// TestDocOutputsMatch runs `make demo` as the README says (in a fresh
// home and temporary directory), then checks every marked output block of
// README.md and docs/ against what the commands print today: the demo's
// own transcript, and each "after make demo" block's commands run on the
// data directory the demo wrote. A block that drifts from the output
// fails the test, naming its file and line.
//
// It also checks what the documents say about codex in the demo: codex
// is launched only as `codex app-server`, for quota readings, never as an
// attempt (see TestDemoLaunchesCodexOnlyForQuota's assertions below).
func TestDocOutputsMatch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries and runs the demo")
	}
	blocks := outputBlocks(t)
	if len(blocks) < 8 {
		t.Fatalf("found only %d marked output blocks; the marker no longer matches the documents", len(blocks))
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	home, tmp := t.TempDir(), t.TempDir()
	env := freshEnv(t, home, tmp)

	var demo syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	if err := runUntil(ctx, shell(env, "make demo", &demo)); err != nil {
		t.Fatalf("make demo failed: %v\n%s", err, demo.String())
	}
	transcript, data := demoTranscript(t, demo.String(), tmp)
	checkCodexOnlyReadsQuota(t, root)

	// The documents show this clone as ~/switchyard and the temporary
	// directory as /tmp.
	replace := map[string]string{root: "~/switchyard", tmp: "/tmp"}
	after := append(env,
		"PATH="+filepath.Join(root, "bin")+":"+filepath.Join(root, "bin", "sim")+":"+os.Getenv("PATH"),
		"SWITCHYARD_DATA_DIR="+data,
		"SWITCHYARD_SANDBOX_WRITABLE="+filepath.Join(root, "bin", "sim"))
	for _, b := range blocks {
		switch b.fixture {
		case fixtureDemo:
			compareOutput(t, b.where, "make demo", b.body, transcript, replace)
		case fixtureAfterDemo, fixtureClone:
			cmds := parseTranscript(t, b.where, b.body)
			outs := runTranscript(t, after, cmds)
			for i, c := range cmds {
				compareOutput(t, b.where, "`"+c.command+"`", c.output, outs[i], replace)
			}
		}
	}
}

// demoTranscript returns the part of make demo's output the documents
// show (from the run's "$ switchyard" line to the replay's result) and the
// data directory the demo wrote.
func demoTranscript(t *testing.T, out, tmp string) (transcript, data string) {
	t.Helper()
	start := strings.Index(out, "$ switchyard run ")
	end := strings.Index(out, "\nDemo data: ")
	if start < 0 || end < start {
		t.Fatalf("make demo's output lacks its run or its closing lines:\n%s", out)
	}
	m := regexp.MustCompile(`--data-dir (\S+/switchyard-demo\.[A-Za-z0-9]+/data)\b`).FindStringSubmatch(out[end:])
	if m == nil || !strings.HasPrefix(m[1], tmp) {
		t.Fatalf("make demo's closing lines name no data directory under %s:\n%s", tmp, out[end:])
	}
	return out[start : end+1], m[1]
}

// checkCodexOnlyReadsQuota reads the simulated CLIs' invocation log the
// demo left in bin/sim and asserts what the documents say: codex is
// launched only as `codex app-server` to read its quota and eligibility
// (the run's worker when it starts and, when the engine's gate asks for a
// fresh reading before that one lands, once more; `switchyard usage`
// once), never as an attempt; grok and devin run the attempts.
func checkCodexOnlyReadsQuota(t *testing.T, root string) {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "bin", "sim", "invocations.jsonl"))
	if err != nil {
		t.Fatalf("the demo left no invocation log: %v", err)
	}
	defer f.Close()
	codex, attempts := 0, map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var inv struct {
			Provider string   `json:"provider"`
			Kind     string   `json:"kind"`
			Argv     []string `json:"argv"`
		}
		if err := json.Unmarshal(sc.Bytes(), &inv); err != nil {
			t.Fatalf("invocation log: %v", err)
		}
		if inv.Kind == "workload" {
			attempts[inv.Provider]++
		}
		if inv.Provider != "codex" {
			continue
		}
		codex++
		if inv.Kind != "app-server" || len(inv.Argv) != 2 || inv.Argv[1] != "app-server" {
			t.Errorf("the demo launched codex other than for a quota reading: kind %q, argv %q", inv.Kind, inv.Argv[1:])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if codex < 2 || codex > 3 {
		t.Errorf("the demo launched codex app-server %d times; the documents say two or three (one or two quota readings in the run, one for usage)", codex)
	}
	if attempts["codex"] != 0 || attempts["grok"] != 2 || attempts["devin"] != 1 {
		t.Errorf("the demo's attempts by provider are %v; the documents say grok 2, devin 1, codex none", attempts)
	}
}

// TestDocOutputComparison shows the comparison fails on a drifted block
// and passes over what a run cannot reproduce.
func TestDocOutputComparison(t *testing.T) {
	const printed = `run demo: role "swarm workers", 3 lanes, on the embedded server of /tmp/switchyard-demo.DhAqiP/data
swarm workers#2 (lane 1): launching grok:grok-4.7@high
swarm workers#1 (lane 0): launching grok:grok-4.7@xhigh
  notice: lane 0: excluded before launch
lane 0: 129ms, output /tmp/switchyard-demo.DhAqiP/data/runs/demo/L0/05c267fc-4ef7-4eeb-a0d3-208e8efa4ab2/output.md
13   2026-12-05T17:16:20.243Z  0     finish    execution ended, reported by vm-21396-f5126747, pid 4872 on nats://127.0.0.1:36495
3 lanes: 3 complete
`
	cases := []struct {
		name       string
		documented string
		match      bool
	}{
		{"the same output", printed, true},
		{"other ids, times, durations, paths and order of lanes", `run demo: role "swarm workers", 3 lanes, on the embedded server of /tmp/switchyard-demo.EG0N3u/data
swarm workers#1 (lane 0): launching grok:grok-4.7@xhigh
  notice: lane 0: excluded before launch
swarm workers#2 (lane 1): launching grok:grok-4.7@high
lane 0: 347ms, output /tmp/switchyard-demo.EG0N3u/data/runs/demo/L0/a910…/output.md
2    2026-11-29T13:42:16.031Z  0     finish    execution ended, reported by host-1-0123abcd, pid 1 on nats://127.0.0.1:4222
3 lanes: 3 complete
`, true},
		{"an excerpt", "...\n3 lanes: 3 complete\n", true},
		{"a changed word", strings.Replace(printed, "3 complete", "2 complete", 1), false},
		{"a missing line", strings.Replace(printed, "3 lanes: 3 complete\n", "", 1), false},
		{"an extra line", printed + "exhausted provider groups: codex\n", false},
		{"a notice under the wrong lane", strings.Replace(printed,
			"swarm workers#2 (lane 1): launching grok:grok-4.7@high\nswarm workers#1 (lane 0): launching grok:grok-4.7@xhigh\n",
			"swarm workers#1 (lane 0): launching grok:grok-4.7@xhigh\nswarm workers#2 (lane 1): launching grok:grok-4.7@high\n", 1), false},
		{"an excerpt whose end drifted", "...\n3 lanes: 2 complete\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := matchLines(normalize(c.documented), normalize(printed))
			if got != c.match {
				t.Errorf("match = %v, want %v\ndocumented:\n%s\nprinted:\n%s", got, c.match,
					strings.Join(normalize(c.documented), "\n"), strings.Join(normalize(printed), "\n"))
			}
		})
	}
}
