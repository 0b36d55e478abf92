package engineconn

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/switchyard-dev/switchyard/activities/sandbox"
	"github.com/switchyard-dev/switchyard/events"
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
	ServeInfoName = "serve.json"
)

// DataDirEnv names the environment variable that sets the default data
// directory, ahead of XDG_STATE_HOME.
const DataDirEnv = "SWITCHYARD_DATA_DIR"

// DefaultDataDir is $SWITCHYARD_DATA_DIR, else $XDG_STATE_HOME/switchyard,
// else ~/.local/state/switchyard. A relative XDG_STATE_HOME is ignored, as
// the XDG base directory specification requires; a relative
// SWITCHYARD_DATA_DIR is taken from the working directory.
func DefaultDataDir() (string, error) {
	if d := os.Getenv(DataDirEnv); d != "" {
		return d, nil
	}
	return builtinDataDir()
}

// builtinDataDir is the default without SWITCHYARD_DATA_DIR: the one
// directory a printed command may leave --data-dir off for, because every
// shell of the user finds it without help.
func builtinDataDir() (string, error) {
	if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "switchyard"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", fmt.Errorf("no data directory: none of %s, XDG_STATE_HOME and HOME is set; pass --data-dir DIR", DataDirEnv)
	}
	return filepath.Join(home, ".local", "state", "switchyard"), nil
}

// IsBuiltinDataDir reports whether abs is the built-in default directory
// and SWITCHYARD_DATA_DIR is unset: only then may a printed command leave
// --data-dir off (a shell with the variable set would go elsewhere).
func IsBuiltinDataDir(abs string) bool {
	if os.Getenv(DataDirEnv) != "" {
		return false
	}
	d, err := builtinDataDir()
	if err != nil {
		return false
	}
	d, err = filepath.Abs(d)
	return err == nil && d == abs
}

// DataDirHelp describes --data-dir's default for help texts.
const DataDirHelp = "data directory: the embedded store and attempt files (default $" + DataDirEnv + ",\nelse $XDG_STATE_HOME/switchyard, else ~/.local/state/switchyard)"

// LocateDataDir returns the absolute data directory for a --data-dir value
// ("" means the default) without creating anything.
func LocateDataDir(flagValue string) (string, error) {
	dir := flagValue
	if dir == "" {
		var err error
		if dir, err = DefaultDataDir(); err != nil {
			return "", err
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("--data-dir %s: %v", dir, err)
	}
	return abs, nil
}

// ResolveDataDir returns the absolute data directory for a --data-dir value
// ("" means the default), creating it 0700 when missing.
func ResolveDataDir(flagValue string) (string, error) {
	abs, err := LocateDataDir(flagValue)
	if err != nil {
		return "", err
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
	if err := events.CheckPrivateDir(abs, "data directory"); err != nil {
		return "", err
	}
	return abs, nil
}

// StoreDirName is the embedded JetStream store inside a data directory
// (the server adds it under its store directory).
const StoreDirName = "jetstream"

// HasStore reports whether dir holds a Switchyard store: a command that
// only reads or answers runs needs one, and never creates one.
func HasStore(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, StoreDirName))
	return err == nil && fi.IsDir()
}

// StoreAccessError is the error of a data directory whose store this user
// may not look into (permission denied on the directory or its store), or
// nil. Without it such a directory reads as one holding no store, which
// sends the user hunting for runs that are there.
func StoreAccessError(dir string) error {
	_, err := os.Stat(filepath.Join(dir, StoreDirName))
	if !errors.Is(err, fs.ErrPermission) {
		return nil
	}
	return deniedf("data directory %s: permission denied reading it, so its store cannot be opened; "+
		"run switchyard as the user that owns it (the one that ran `switchyard serve` or `switchyard run` there), "+
		"or give this user access (chmod u+rwx %s), or pass --data-dir DIR", dir, dir)
}

// noStoreError is the error of a command that needs stored runs in a data
// directory holding none. It names where the directory came from, so a
// typo is easy to see.
func noStoreError(dir string, o Options) error {
	from := "the default data directory"
	switch {
	case o.DataDir != "":
		from = "--data-dir"
	case os.Getenv(DataDirEnv) != "":
		from = "$" + DataDirEnv
	}
	msg := fmt.Sprintf("no Switchyard data in %s (%s): it holds no store, so there is nothing to show or answer there; "+
		"check the directory (`switchyard run` and `switchyard serve` create one), or pass --data-dir DIR or set %s to the directory your runs use",
		dir, from, DataDirEnv)
	if o.DataDir != "" {
		return noDataUsagef("%s", msg)
	}
	return noDataf("%s", msg)
}

// listenRecordName is the file in which serve records the address it last
// listened on, so a restart with --listen HOST:0 comes back on the same
// port when it is free and clients never have to move.
const listenRecordName = "serve.addr"

// recordListen writes dir/serve.addr (best effort: it only saves clients a
// reconnect to another port).
func recordListen(dir, addr string) {
	tmp, err := os.CreateTemp(dir, ".serve-*.addr")
	if err != nil {
		return
	}
	_, werr := tmp.WriteString(addr + "\n")
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), filepath.Join(dir, listenRecordName))
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
}

// recordedListen returns the address serve last listened on in dir when
// its host is host, else "".
func recordedListen(dir, host string) string {
	b, err := os.ReadFile(filepath.Join(dir, listenRecordName))
	if err != nil {
		return ""
	}
	addr := strings.TrimSpace(string(b))
	h, port, err := net.SplitHostPort(addr)
	if err != nil || h != host || port == "" || port == "0" {
		return ""
	}
	return addr
}

// ServeInfo is serve.json: how other processes reach the process holding
// the data directory's lock.
type ServeInfo struct {
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
	// Start is the holder's process start identity (events.SelfStart):
	// with PID and the socket listening at URL it tells the holder from
	// a process that got its pid later (live).
	Start string `json:"start,omitempty"`
	// Containment is the holder's sandbox self-test (sandbox.Verify), the
	// evidence its eligibility gate decides with, once it has run
	// (PublishContainment; absent before). A run's pre-check and doctor,
	// served by this holder, read it here instead of testing their own
	// process: it is what the gate will use, and a self-test costs a
	// sandboxed child process.
	Containment *sandbox.Report `json:"containment,omitempty"`
}

// Live reports why the holder info names is not the live server of this
// user it claims to be (events.CheckServer), or nil when it is.
func (info ServeInfo) Live() error { return events.CheckServer(info.PID, info.Start, info.URL) }

// serveInfoTemps is the name pattern of writeServeInfo's temporary files.
const serveInfoTemps = ".serve-*.json"

// writeServeInfo writes dir/serve.json atomically (0600).
func writeServeInfo(dir string, info ServeInfo) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, serveInfoTemps)
	if err != nil {
		return fmt.Errorf("write %s: %w", ServeInfoName, err)
	}
	_, werr := tmp.Write(append(b, '\n'))
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), filepath.Join(dir, ServeInfoName))
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", ServeInfoName, werr)
	}
	return nil
}

// removeServeInfoTemps removes the temporary files of serve.json a holder
// killed while writing it left behind. Only the holder of dir's lock
// writes serve.json, so the caller, holding it, has none in progress.
func removeServeInfoTemps(dir string) {
	left, _ := filepath.Glob(filepath.Join(dir, serveInfoTemps))
	for _, f := range left {
		os.Remove(f)
	}
}

// Served reports whether dir's serve.json names a live holder listening
// where it says: a command connecting through dir would connect to it and
// start no server of its own. It takes no lock and writes nothing.
func Served(dir string) bool {
	info, err := ReadServeInfo(dir)
	return err == nil && info.Live() == nil
}

// ReadServeInfo reads dir/serve.json; fs.ErrNotExist when absent.
func ReadServeInfo(dir string) (ServeInfo, error) {
	var info ServeInfo
	f, err := events.OpenOwnedFile(filepath.Join(dir, ServeInfoName), ServeInfoName, "data directory")
	if err != nil {
		return info, unwrapPath(err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return info, unwrapPath(err)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return info, fmt.Errorf("%s: %w: %v", filepath.Join(dir, ServeInfoName), errCorruptServeInfo, err)
	}
	if info.URL == "" || info.PID <= 0 {
		return info, fmt.Errorf("%s: %w: no url or pid", filepath.Join(dir, ServeInfoName), errCorruptServeInfo)
	}
	return info, nil
}

// errCorruptServeInfo marks a serve.json that exists but does not parse
// (it is written whole, by rename, so a reader never sees half of one).
var errCorruptServeInfo = errors.New("not a valid serve.json")

// removeServeInfo removes dir/serve.json if it still names pid.
func removeServeInfo(dir string, pid int) {
	if info, err := ReadServeInfo(dir); err == nil && info.PID == pid {
		os.Remove(filepath.Join(dir, ServeInfoName))
	}
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
	if err := events.CheckOwnedFile(f, path, serveLockName); err != nil {
		f.Close()
		return nil, err
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

// unwrapPath is err without the *fs.PathError around it (messages name the
// path themselves).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// isNotExist reports a missing file through unwrapPath'd errors.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
