package sandbox_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-dev/switchyard/activities/sandbox"
)

// confinedThreads counts this process's threads that carry no_new_privs
// or a seccomp filter, from /proc/self/task/*/status.
func confinedThreads(t *testing.T) int {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread exited meanwhile
		}
		s := string(b)
		if strings.Contains(s, "\nNoNewPrivs:\t1") || !strings.Contains(s, "\nSeccomp:\t0") {
			n++
		}
	}
	return n
}

// TestStartConfinedConfinesTheChildAndNothingElse: a child started by
// StartConfined cannot write outside its writable path, the confinement
// sits on one thread of this process only while the child lives, and
// after release no thread of this process is left confined (a confined
// thread handed back to the runtime would confine whatever goroutine ran
// on it next).
func TestStartConfinedConfinesTheChildAndNothingElse(t *testing.T) {
	needLandlock(t)
	if n := confinedThreads(t); n != 0 {
		t.Fatalf("%d threads confined before the test", n)
	}
	dir := t.TempDir()
	ok, no := filepath.Join(dir, "ok"), filepath.Join(dir, "no")
	for _, d := range []string{ok, no} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// The child writes where it may, tries where it may not, then waits
	// for its stdin to close so the test can look at this process meanwhile.
	cmd := exec.Command("/bin/sh", "-c", `echo a > "$1/f"; echo b > "$2/f" || echo refused; cat >/dev/null`, "sh", ok, no)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	release, err := sandbox.StartConfined(sandbox.Policy{Writable: []string{ok}}, cmd)
	if err != nil {
		t.Fatal(err)
	}
	if n := confinedThreads(t); n != 1 {
		t.Fatalf("%d threads of this process confined while the child runs, want exactly the one that started it", n)
	}
	// This process itself still writes anywhere.
	if err := os.WriteFile(filepath.Join(no, "parent"), []byte("p"), 0o600); err != nil {
		t.Fatalf("the parent lost write access: %v", err)
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v: %s", err, errb.String())
	}
	release()
	if got := out.String(); got != "refused\n" {
		t.Fatalf("child stdout %q, want the forbidden write refused", got)
	}
	if !strings.Contains(errb.String(), "Permission denied") {
		t.Fatalf("child stderr %q, want the kernel's refusal", errb.String())
	}
	if _, err := os.Stat(filepath.Join(no, "f")); !os.IsNotExist(err) {
		t.Fatalf("the forbidden write reached the disk: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(ok, "f")); err != nil || string(b) != "a\n" {
		t.Fatalf("the allowed write: %q %v", b, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for confinedThreads(t) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d confined threads still alive 30 s after release", confinedThreads(t))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStartConfinedFailsClosed: a policy that cannot be applied starts
// nothing.
func TestStartConfinedFailsClosed(t *testing.T) {
	needLandlock(t)
	marker := filepath.Join(t.TempDir(), "ran")
	cmd := exec.Command("/bin/sh", "-c", `touch "$1"`, "sh", marker)
	_, err := sandbox.StartConfined(sandbox.Policy{Writable: []string{"/nonexistent/switchyard"}}, cmd)
	if err == nil || !strings.Contains(err.Error(), "writable path") {
		t.Fatalf("err %v, want the missing writable path named", err)
	}
	if cmd.Process != nil {
		t.Fatal("the command was started")
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatal("the command ran")
	}
}
