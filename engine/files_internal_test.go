package engine

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadLimited: a regular file of up to the limit is read whole, also
// when it is larger than a first guess at its size; one byte more, a
// symbolic link or a directory is an error naming the path.
func TestReadLimited(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, bytes.Repeat([]byte{'x'}, n), 0o600))
		return p
	}
	for _, n := range []int{0, 1, 511, 512, 513, 4096, 10000} {
		b, err := readLimited(write("f", n), 10000, "receipt")
		require.NoError(t, err, "%d bytes", n)
		require.Len(t, b, n)
	}
	// A file whose size says 0 but which holds more (procfs): the buffer
	// grows.
	want, err := os.ReadFile("/proc/self/cmdline")
	require.NoError(t, err)
	b, err := readLimited("/proc/self/cmdline", 1<<20, "receipt")
	require.NoError(t, err)
	require.Equal(t, want, b)

	over := write("over", 10001)
	_, err = readLimited(over, 10000, "receipt")
	require.ErrorContains(t, err, over+" is over the receipt limit (10000 bytes)")

	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(write("target", 3), link))
	_, err = readLimited(link, 10000, "receipt")
	require.Error(t, err, "a final symbolic link is refused")

	_, err = readLimited(dir, 10000, "receipt")
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "not a regular file"), err.Error())
}

// BenchmarkReadLimited reads a 3 KB file, a receipt's size:
//
//	go test -run '^$' -bench BenchmarkReadLimited ./engine
func BenchmarkReadLimited(b *testing.B) {
	p := filepath.Join(b.TempDir(), "receipt.json")
	if err := os.WriteFile(p, bytes.Repeat([]byte{'x'}, 3000), 0o600); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := readLimited(p, 1<<20, "receipt"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFreezePromptRacesSeeAWholePrompt: submissions of one run id that
// race to freeze the same prompt all succeed, exactly one of them
// creating it: none reads the file while another is still writing it
// (the race TestSubmitOnceIsIdempotentByRunID once lost under load). A
// different prompt is refused, and no temporary file is left.
func TestFreezePromptRacesSeeAWholePrompt(t *testing.T) {
	e := &Engine{cfg: Config{DataDir: t.TempDir()}}
	prompt := bytes.Repeat([]byte("Fix it.\n"), 4096)
	for round := range 20 {
		run := "race-" + strings.Repeat("x", round+1)
		const racers = 8
		errs := make(chan error, racers)
		created := make(chan bool, racers)
		start := make(chan struct{})
		for range racers {
			go func() {
				<-start
				_, c, err := e.freezePrompt(run, prompt)
				errs <- err
				created <- c
			}()
		}
		close(start)
		n := 0
		for range racers {
			require.NoError(t, <-errs, "round %d", round)
			if <-created {
				n++
			}
		}
		require.Equal(t, 1, n, "round %d: one racer created the prompt", round)
		_, _, err := e.freezePrompt(run, []byte("Another task.\n"))
		require.ErrorIs(t, err, os.ErrExist)
		names, err := os.ReadDir(e.runDir(run))
		require.NoError(t, err)
		require.Len(t, names, 1, "only the prompt: no temporary file left")
		st, err := os.Stat(filepath.Join(e.runDir(run), frozenPrompt))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	}
}
