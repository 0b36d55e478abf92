package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/switchyard-dev/switchyard/testdata/simcli/simconfig"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// spawnGrandchild starts a sleeping descendant in this process's group and
// logs it before any output, so a test that has seen output can find it.
func (s *simulation) spawnGrandchild(inherit bool) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := &exec.Cmd{
		Path: exe,
		Args: []string{filepath.Join(s.binDir, grandchildName), s.prov.Name, strconv.Itoa(int(s.hangCap() / time.Second))},
		Env:  os.Environ(),
	}
	if inherit {
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	rec := simlog.Invocation{
		Provider:  s.prov.Name,
		Binary:    grandchildName,
		Argv:      cmd.Args,
		Env:       envNames(cmd.Env),
		StdinKind: simlog.StdinDevNull,
		Kind:      simlog.KindGrandchild,
		Seq:       -1,
		Pid:       cmd.Process.Pid,
		Ppid:      os.Getpid(),
		Pgid:      syscall.Getpgrp(),
		StartedAt: time.Now().UTC(),
	}
	rec.Cwd, _ = os.Getwd()
	if err := cmd.Process.Release(); err != nil {
		return err
	}
	return simlog.Append(filepath.Join(s.binDir, simconfig.InvocationsLog), rec)
}

// runGrandchild is a spawned descendant that only sleeps, keeping the
// default signal dispositions so a process-group kill ends it.
// args: [provider, capSeconds].
func runGrandchild(args []string) int {
	limit := 600 * time.Second
	if len(args) > 1 {
		var s int
		if _, err := fmt.Sscan(args[1], &s); err == nil && s > 0 {
			limit = time.Duration(s) * time.Second
		}
	}
	time.Sleep(limit)
	return exitHangCap
}
