//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"sync"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// StartConfined starts cmd confined by p with no launcher process in
// between. Landlock domains, seccomp filters and no_new_privs belong to a
// thread and pass to the children it forks, so a goroutine locks a fresh
// OS thread, confines that thread alone and calls cmd.Start on it: the
// child is confined from its first instruction, exactly as if the
// launcher had applied p and exec'd it, but without starting this binary
// a second time. The thread is never unlocked, so it is never given back
// to the runtime: it waits until release is called, then exits with its
// goroutine. cmd's parent-death signal (Pdeathsig) fires when that thread
// exits, so call release only once the child has been reaped.
//
// It fails closed: if the thread cannot be confined, cmd is not started.
func StartConfined(p Policy, cmd *exec.Cmd) (release func(), err error) {
	rules, err := rulesFor(p)
	if err != nil {
		return nil, err
	}
	fd, flags, err := handled.NewRulesetFD(rules...)
	if err != nil {
		return nil, fmt.Errorf("landlock: %w", err)
	}
	if fd < 0 {
		// Best effort is off, so this means nothing is handled: refuse
		// rather than start an unconfined child.
		return nil, errors.New("landlock: the ruleset restricts nothing")
	}
	started := make(chan error, 1)
	done := make(chan struct{})
	confineAndStart := func(locked chan<- struct{}) {
		runtime.LockOSThread() // never unlocked: the confined thread dies with this goroutine
		if locked != nil {
			close(locked)
		}
		if err := confineThread(fd, flags); err != nil {
			started <- err
			return
		}
		started <- cmd.Start()
		<-done
	}
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() != unix.Getpid() {
			confineAndStart(nil)
			return
		}
		// This goroutine runs on the main thread, which the runtime never
		// lets exit: confined, it would stay so (parked) for the
		// process's life. Hold it while another goroutine, which cannot
		// run here meanwhile, takes a thread of its own; then give the
		// main thread back unconfined.
		locked := make(chan struct{})
		go confineAndStart(locked)
		<-locked
		runtime.UnlockOSThread()
	}()
	err = <-started
	unix.Close(fd)
	if err != nil {
		return nil, err
	}
	return sync.OnceFunc(func() { close(done) }), nil
}

// confineThread applies the ruleset and the socket filter to the calling
// thread only.
func confineThread(fd int, flags uint32) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := llsys.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return limitThreadSockets()
}
