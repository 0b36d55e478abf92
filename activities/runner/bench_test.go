package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// BenchmarkRunnerOverhead measures what the runner adds around a trivial
// child: each iteration runs the fake CLI alone (same binary, environment
// and stdin prompt) and then the full runner around it (flag checks,
// reservations, private directory, worker contract, capture, parse,
// classification, receipt), interleaved so both see the same machine
// state. It reports the medians and their difference:
//
//	go test -run '^$' -bench RunnerOverhead -benchtime 200x ./activities/runner
//
// Without -race the fake CLI is a plain Go binary; under -race every
// child adds the race runtime's start-up to both sides alike.
func BenchmarkRunnerOverhead(b *testing.B) {
	dir := b.TempDir()
	prompt := filepath.Join(dir, "prompt.md")
	cwd := filepath.Join(dir, "checkout")
	if err := os.WriteFile(prompt, []byte("Say hello.\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.Mkdir(cwd, 0o755); err != nil {
		b.Fatal(err)
	}
	fake := fakeCLI{Helper: "ok", Dir: dir}
	var sink bytes.Buffer
	r, err := New(Config{
		Lookup: func(policy.Provider) (*providers.Spec, error) { return fake.spec() },
		Env:    map[string]string{"PATH": binDir, "HOME": dir},
		Stdout: &sink, Stderr: &sink,
	})
	if err != nil {
		b.Fatal(err)
	}
	exe := filepath.Join(binDir, fakeBinary)
	childEnv := []string{"PATH=" + binDir, "HOME=" + dir, envHelper + "=ok", "GORACE=atexit_sleep_ms=0"}
	stdin := workerPrompt(providers.WriterTools{Shell: true}, policy.ReadOnly, []byte("Say hello.\n"))

	var alone, runner []time.Duration
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		cmd := exec.Command(exe, "exec", "--model", "gpt-5.5", "-")
		cmd.Env, cmd.Dir, cmd.Stdin = childEnv, cwd, bytes.NewReader(stdin)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			b.Fatalf("child alone: %v: %s", err, out.String())
		}
		t1 := time.Now()
		sink.Reset()
		code := r.Main(context.Background(), []string{"--parent", "claude", "--provider", "codex",
			"--model", "gpt-5.5", "--effort", "high", "--mode", "read-only", "--prompt", prompt, "--cwd", cwd,
			"--output", filepath.Join(dir, fmt.Sprintf("out-%d.md", i)),
			"--receipt", filepath.Join(dir, fmt.Sprintf("receipt-%d.json", i))})
		if code != 0 {
			b.Fatalf("runner exit %d: %s", code, strings.TrimSpace(sink.String()))
		}
		t2 := time.Now()
		alone, runner = append(alone, t1.Sub(t0)), append(runner, t2.Sub(t1))
	}
	b.StopTimer()
	ma, mr := median(alone), median(runner)
	b.ReportMetric(float64(ma.Microseconds())/1000, "child-ms")
	b.ReportMetric(float64(mr.Microseconds())/1000, "runner-ms")
	b.ReportMetric(float64((mr-ma).Microseconds())/1000, "overhead-ms")
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkProgressFlush is one progress snapshot written atomically (a
// new file, then rename over the reserved path), the write every lane
// makes about eight times:
//
//	go test ./activities/runner -run '^$' -bench BenchmarkProgressFlush -count 5
func BenchmarkProgressFlush(b *testing.B) {
	dir := b.TempDir()
	progress, err := reserve("--progress", filepath.Join(dir, "progress.json"))
	if err != nil {
		b.Fatal(err)
	}
	receipt, err := reserve("--receipt", filepath.Join(dir, "receipt.json"))
	if err != nil {
		b.Fatal(err)
	}
	r := openProgress(progress, policy.Codex, time.Now(), receipt, time.Now, time.Hour)
	on := false
	for b.Loop() {
		on = !on
		r.retryWait(on)
	}
	if r.disabled || r.state.Seq < 2 {
		b.Fatalf("the reporter stopped writing (seq %d)", r.state.Seq)
	}
}
