package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// The data directory (DESIGN.md, "Files on disk") holds the embedded
// JetStream store, each attempt's private files, and two files that let
// processes sharing it find each other:
//
//	serve.lock  held (flock) by the one process running the data
//	            directory's embedded server: switchyard serve, a
//	            self-contained switchyard run, or briefly any other
//	            command that had to open the store itself.
//	serve.json  written by a holder that listens for other processes
//	            (serve, run): its client URL and pid. Removed on a clean
//	            exit; a stale one is ignored because the lock is free.
const (
	serveLockName = "serve.lock"
	serveInfoName = "serve.json"
)

// defaultDataDir is $XDG_STATE_HOME/switchyard, else
// ~/.local/state/switchyard. A relative XDG_STATE_HOME is ignored, as the
// XDG base directory specification requires.
func defaultDataDir() (string, error) {
	if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "switchyard"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", fmt.Errorf("no data directory: neither XDG_STATE_HOME nor HOME is set; pass --data-dir DIR")
	}
	return filepath.Join(home, ".local", "state", "switchyard"), nil
}

// dataDirHelp describes --data-dir's default for help texts.
const dataDirHelp = "data directory: the embedded store and attempt files (default $XDG_STATE_HOME/switchyard, else ~/.local/state/switchyard)"

// resolveDataDir returns the absolute data directory for a --data-dir value
// ("" means the default), creating it 0700 when missing.
func resolveDataDir(flagValue string) (string, error) {
	dir := flagValue
	if dir == "" {
		var err error
		if dir, err = defaultDataDir(); err != nil {
			return "", err
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("--data-dir %s: %v", dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", fmt.Errorf("--data-dir %s: cannot create it: %v; pass a writable directory", abs, unwrapPath(err))
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("--data-dir %s: %v", abs, unwrapPath(err))
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("--data-dir %s is not a directory; pass a directory", abs)
	}
	return abs, nil
}

// serveInfo is serve.json: how other processes reach the process holding
// the data directory's lock.
type serveInfo struct {
	// PID of the holder.
	PID int `json:"pid"`
	// URL is the holder's NATS client URL (loopback).
	URL string `json:"url"`
	// Kind is "serve" or "run" (a self-contained run serving its data
	// directory while it lasts).
	Kind string `json:"kind"`
	// DataDir is the absolute data directory.
	DataDir string `json:"dataDir"`
	// Fsync is the embedded server's fsync policy.
	Fsync string `json:"fsync"`
	// Started is when the holder started serving.
	Started time.Time `json:"started"`
}

// writeServeInfo writes dir/serve.json atomically (0600).
func writeServeInfo(dir string, info serveInfo) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".serve-*.json")
	if err != nil {
		return fmt.Errorf("write %s: %w", serveInfoName, err)
	}
	_, werr := tmp.Write(append(b, '\n'))
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), filepath.Join(dir, serveInfoName))
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", serveInfoName, werr)
	}
	return nil
}

// readServeInfo reads dir/serve.json; fs.ErrNotExist when absent.
func readServeInfo(dir string) (serveInfo, error) {
	var info serveInfo
	b, err := os.ReadFile(filepath.Join(dir, serveInfoName))
	if err != nil {
		return info, unwrapPath(err)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return info, fmt.Errorf("%s: %v", filepath.Join(dir, serveInfoName), err)
	}
	if info.URL == "" || info.PID <= 0 {
		return info, fmt.Errorf("%s: no url or pid", filepath.Join(dir, serveInfoName))
	}
	return info, nil
}

// removeServeInfo removes dir/serve.json if it still names pid.
func removeServeInfo(dir string, pid int) {
	if info, err := readServeInfo(dir); err == nil && info.PID == pid {
		os.Remove(filepath.Join(dir, serveInfoName))
	}
}

// processAlive reports whether pid names a live process.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// dirLock is the held serve.lock of a data directory.
type dirLock struct {
	f *os.File
}

// errLocked: another process holds the data directory's lock.
var errLocked = errors.New("data directory is in use by another switchyard process")

// tryLockDataDir takes dir/serve.lock without waiting; errLocked when
// another process holds it. The lock is released when the process exits,
// however it exits.
func tryLockDataDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, serveLockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %v", path, unwrapPath(err))
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, fmt.Errorf("lock %s: %v", path, err)
	}
	// Record the holder for people looking at the directory.
	f.Truncate(0)
	f.WriteAt([]byte(fmt.Sprintf("%d\n", os.Getpid())), 0)
	return &dirLock{f: f}, nil
}

// lockHolder reads the pid the holder wrote into serve.lock (0 if unknown).
func lockHolder(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, serveLockName))
	if err != nil {
		return 0
	}
	var pid int
	fmt.Sscanf(strings.TrimSpace(string(b)), "%d", &pid)
	return pid
}

// Unlock releases the lock.
func (l *dirLock) Unlock() {
	if l == nil || l.f == nil {
		return
	}
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
	l.f = nil
}

// isNotExist reports a missing file through unwrapPath'd errors.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
