package runner

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/switchyard-dev/switchyard/providers"
)

// maxPromptBytes caps the task prompt the runner reads (16 MiB).
const maxPromptBytes = 16 << 20

// pathRef is one command-line path: absolute and cleaned, and canonical
// (symlinks of the existing part resolved).
type pathRef struct {
	abs, canon string
}

// same reports whether two paths name the same location either way.
func (p pathRef) same(q pathRef) bool { return p.abs == q.abs || p.canon == q.canon }

// sidecarOf reports whether p starts with "<q>." (a sidecar of q).
func (p pathRef) sidecarOf(q pathRef) bool {
	return strings.HasPrefix(p.abs, q.abs+".") || strings.HasPrefix(p.canon, q.canon+".")
}

// attemptPaths are the resolved paths of one attempt.
type attemptPaths struct {
	prompt, cwd, output, receipt pathRef
	progress                     *pathRef
}

// pathResolver makes paths absolute and canonical, resolving each
// directory once: an attempt's prompt, output, receipt and progress file
// share one execution directory, and filepath.EvalSymlinks of each would
// walk every component of every path again (an lstat each, about 75 an
// attempt before). It lives for one resolvePaths call only, so a symlink
// changed between attempts is seen by the next.
type pathResolver map[string]string

// dir is the canonical form of directory d.
func (r pathResolver) dir(d string) (string, error) {
	if c, ok := r[d]; ok {
		return c, nil
	}
	c, err := filepath.EvalSymlinks(d)
	if err != nil {
		return "", err
	}
	r[d] = c
	return c, nil
}

// ref makes p absolute and canonical. For a path that does not exist yet
// (or a symbolic link that leads nowhere), its directory must exist and
// is resolved instead.
func (r pathResolver) ref(flag, p string) (pathRef, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return pathRef{}, usagef(flag, "%s %q: %v", flag, p, err)
	}
	if strings.ContainsRune(abs, 0) {
		return pathRef{}, usagef(flag, "%s contains a NUL byte", flag)
	}
	canon, _, err := r.canon(abs)
	if err != nil {
		return pathRef{}, usagef(flag, "%s %s: directory %s does not exist or is not reachable", flag, abs, filepath.Clean(filepath.Dir(abs)))
	}
	return pathRef{abs: abs, canon: canon}, nil
}

// canon resolves the absolute, clean path abs: its directory's canonical
// form, then the last component followed when it is a symbolic link.
// whole says the last component resolved too, that is, canon is what
// filepath.EvalSymlinks(abs) answers; otherwise canon is the resolved
// directory joined with the last component as it is. An error means the
// directory does not resolve.
func (r pathResolver) canon(abs string) (canon string, whole bool, err error) {
	dir, base := filepath.Split(abs)
	canonDir, err := r.dir(dir)
	if err != nil {
		return "", false, err
	}
	full := filepath.Join(canonDir, base)
	fi, err := os.Lstat(full)
	switch {
	case err != nil:
		return full, false, nil
	case fi.Mode()&fs.ModeSymlink != 0:
		if c, err := filepath.EvalSymlinks(full); err == nil {
			return c, true, nil
		}
		return full, false, nil
	}
	return full, true, nil
}

// resolvePaths resolves and checks every path of o: the prompt must be a
// regular file and cwd a directory; prompt, output and receipt must all
// differ; the progress file must alias none of prompt, cwd, output or
// receipt and must not be a sidecar ("<output>." or "<receipt>." prefix)
// of either.
func resolvePaths(o Options, privateSuffix string) (attemptPaths, error) {
	var ap attemptPaths
	var err error
	res := pathResolver{}
	for _, r := range []struct {
		flag, value string
		dst         *pathRef
	}{
		{"--prompt", o.Prompt, &ap.prompt},
		{"--cwd", o.Cwd, &ap.cwd},
		{"--output", o.Output, &ap.output},
		{"--receipt", o.Receipt, &ap.receipt},
	} {
		if *r.dst, err = res.ref(r.flag, r.value); err != nil {
			return ap, err
		}
	}
	if fi, err := os.Stat(ap.prompt.abs); err != nil || !fi.Mode().IsRegular() {
		return ap, usagef("--prompt", "--prompt %s must be an existing regular file", ap.prompt.abs)
	}
	if fi, err := os.Stat(ap.cwd.abs); err != nil || !fi.IsDir() {
		return ap, usagef("--cwd", "--cwd %s must be an existing directory", ap.cwd.abs)
	}
	switch {
	case ap.output.same(ap.prompt):
		return ap, usagef("--output", "--output and --prompt name the same file %s", ap.output.abs)
	case ap.receipt.same(ap.prompt):
		return ap, usagef("--receipt", "--receipt and --prompt name the same file %s", ap.receipt.abs)
	case ap.receipt.same(ap.output):
		return ap, usagef("--receipt", "--receipt and --output name the same file %s", ap.receipt.abs)
	}
	if priv := privateDirFor(ap.receipt.abs, privateSuffix); exists(priv) {
		return ap, usagef("--receipt", "--receipt %s: the private directory %s already exists", ap.receipt.abs, priv)
	}
	if o.Progress == "" {
		return ap, nil
	}
	pr, err := res.ref("--progress", o.Progress)
	if err != nil {
		return ap, err
	}
	for _, other := range []struct {
		flag string
		ref  pathRef
	}{{"--prompt", ap.prompt}, {"--cwd", ap.cwd}, {"--output", ap.output}, {"--receipt", ap.receipt}} {
		if pr.same(other.ref) {
			return ap, usagef("--progress", "--progress and %s name the same path %s", other.flag, pr.abs)
		}
	}
	for _, other := range []struct {
		flag string
		ref  pathRef
	}{{"--output", ap.output}, {"--receipt", ap.receipt}} {
		if pr.sidecarOf(other.ref) {
			return ap, usagef("--progress", "--progress %s must not start with the %s path followed by '.' (reserved for runner sidecar files)", pr.abs, other.flag)
		}
	}
	ap.progress = &pr
	return ap, nil
}

// readPrompt reads the task prompt, at most maxPromptBytes.
func readPrompt(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usagef("--prompt", "--prompt %s: %v", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPromptBytes+1))
	if err != nil {
		return nil, usagef("--prompt", "--prompt %s: %v", path, err)
	}
	if len(b) > maxPromptBytes {
		return nil, usagef("--prompt", "--prompt %s is over the runner's %d-byte (16 MiB) prompt limit", path, maxPromptBytes)
	}
	return b, nil
}

// reservation is a file the runner created exclusively and still holds
// open: output, receipt or progress.
type reservation struct {
	path string
	f    *os.File
	dev  uint64
	ino  uint64
}

// reserve creates path exclusively with mode 0600: it must not exist, and a
// symlink at path (even a dangling one) is refused rather than followed.
func reserve(flag, path string) (*reservation, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, usagef(flag, "%s %s already exists; every attempt needs new, unique paths", flag, path)
		}
		return nil, usagef(flag, "%s %s cannot be reserved: %v", flag, path, errors.Unwrap(err))
	}
	res := &reservation{path: path, f: f}
	// The umask may have narrowed the mode; make it exactly 0600.
	if err := f.Chmod(0o600); err != nil {
		res.discard()
		return nil, usagef(flag, "%s %s: %v", flag, path, err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		res.discard()
		return nil, usagef(flag, "%s %s: %v", flag, path, err)
	}
	res.dev, res.ino = uint64(st.Dev), uint64(st.Ino)
	return res, nil
}

// stillOurs reports whether path still names the reserved inode.
func (r *reservation) stillOurs() bool {
	var st syscall.Stat_t
	if err := syscall.Lstat(r.path, &st); err != nil {
		return false
	}
	return uint64(st.Dev) == r.dev && uint64(st.Ino) == r.ino
}

// write replaces the reserved file's content through the held descriptor.
func (r *reservation) write(b []byte) error {
	if err := r.f.Truncate(0); err != nil {
		return err
	}
	if _, err := r.f.WriteAt(b, 0); err != nil {
		return err
	}
	return r.f.Sync()
}

// close releases the descriptor; the file stays.
func (r *reservation) close() {
	if r != nil && r.f != nil {
		r.f.Close()
		r.f = nil
	}
}

// discard closes and removes the reservation if it is still the empty file
// the runner created; anything else at the path is left alone.
func (r *reservation) discard() {
	if r == nil {
		return
	}
	empty := false
	if r.f != nil {
		if fi, err := r.f.Stat(); err == nil && fi.Size() == 0 {
			empty = true
		}
	}
	r.close()
	if empty && r.stillOurs() {
		os.Remove(r.path)
	}
}

// reservations are the three reserved files of an attempt.
type reservations struct {
	output, receipt, progress *reservation
}

// reserveAll reserves output, receipt and progress in that order; on any
// failure the ones already made are removed again.
func reserveAll(ap attemptPaths) (*reservations, error) {
	rs := &reservations{}
	var err error
	if rs.output, err = reserve("--output", ap.output.abs); err != nil {
		return nil, err
	}
	if rs.receipt, err = reserve("--receipt", ap.receipt.abs); err != nil {
		rs.output.discard()
		return nil, err
	}
	if ap.progress != nil {
		if rs.progress, err = reserve("--progress", ap.progress.abs); err != nil {
			rs.output.discard()
			rs.receipt.discard()
			return nil, err
		}
	}
	return rs, nil
}

// privateArea tracks the private directory and the files and directories
// one attempt created. Only what it created is ever removed.
type privateArea struct {
	dir   string   // the attempt's private directory, "<receipt><suffix>" (0700)
	dirs  []string // directories created, removed recursively
	files []string // files created (or claimed for the child) outside them
	// guarded are the Guard files (with their content digest) and
	// directories: removed only when unchanged or empty.
	guarded map[string]*[32]byte
}

// privateDirFor is the attempt's private directory beside its receipt:
// "<receipt><suffix>", the spec's PrivateSuffix (".cursor-config",
// ".opencode-config"), ".private" when the spec names none.
func privateDirFor(receipt, suffix string) string {
	if suffix == "" {
		suffix = ".private"
	}
	return receipt + suffix
}

// exists reports whether anything (even a dangling symlink) is at p.
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// newPrivateArea creates the private directory exclusively: an existing
// path there is refused, never reused.
func newPrivateArea(receipt, suffix string) (*privateArea, error) {
	dir := privateDirFor(receipt, suffix)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create private directory: %w", err)
	}
	a := &privateArea{dir: dir, dirs: []string{dir}}
	if err := os.Chmod(dir, 0o700); err != nil { // the umask may have narrowed it
		a.cleanup()
		return nil, fmt.Errorf("create private directory: %w", err)
	}
	return a, nil
}

// tempDir creates a fresh private temporary directory (0700, a random
// name) under /tmp, short whatever the receipt's path, owned by the area
// and removed with it. The path is returned with symlinks resolved
// (macOS's /tmp), as the sandbox grants it.
func (a *privateArea) tempDir() (string, error) {
	dir, err := os.MkdirTemp("/tmp", "switchyard-")
	if err != nil {
		return "", fmt.Errorf("create private TMPDIR: %w", err)
	}
	a.dirs = append(a.dirs, dir)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return dir, nil
}

// owns reports whether p is inside a directory this area created.
func (a *privateArea) owns(p string) bool {
	for _, d := range a.dirs {
		if strings.HasPrefix(p, d+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// realDir reports whether p is a directory and not a symlink.
func realDir(p string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", p)
	}
	return nil
}

// create makes one spec file. A directory is created when missing (and
// then owned), reused when it is a real directory, and refused when
// something else (a symlink, a file) is there. A file is created
// exclusively, never through a symlink, in an existing real directory.
func (a *privateArea) create(f providers.File) error {
	if !filepath.IsAbs(f.Path) || filepath.Clean(f.Path) != f.Path {
		return fmt.Errorf("private path %q is not a clean absolute path", f.Path)
	}
	if f.Dir {
		mode := fs.FileMode(f.Mode)
		if mode == 0 {
			mode = 0o700
		}
		if err := os.Mkdir(f.Path, mode); err != nil {
			if !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("create private directory %s: %w", f.Path, err)
			}
			return realDir(f.Path)
		}
		if f.Guard {
			a.guard(f.Path, nil)
			a.files = append(a.files, f.Path)
			return os.Chmod(f.Path, mode)
		}
		if !a.owns(f.Path) {
			a.dirs = append(a.dirs, f.Path)
		}
		return os.Chmod(f.Path, mode)
	}
	if err := realDir(filepath.Dir(f.Path)); err != nil {
		return fmt.Errorf("private file %s: %w", f.Path, err)
	}
	mode := fs.FileMode(f.Mode)
	if mode == 0 {
		mode = 0o600
	}
	file, err := os.OpenFile(f.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, mode)
	if err != nil {
		return fmt.Errorf("create private file: %w", err)
	}
	if !a.owns(f.Path) || f.Guard {
		a.files = append(a.files, f.Path)
	}
	if f.Guard {
		sum := sha256.Sum256(f.Content)
		a.guard(f.Path, &sum)
	}
	_, werr := file.Write(f.Content)
	cerr := file.Chmod(mode)
	if err := errors.Join(werr, cerr, file.Close()); err != nil {
		return fmt.Errorf("write private file %s: %w", f.Path, err)
	}
	return nil
}

// claimCapture prepares a path the child writes for the parser: it must
// not exist yet (a stale file must never be parsed) and its directory must
// be real. The runner removes it after the attempt.
func (a *privateArea) claimCapture(p string) error {
	if !filepath.IsAbs(p) {
		return fmt.Errorf("capture path %q is not absolute", p)
	}
	if err := realDir(filepath.Dir(p)); err != nil {
		return fmt.Errorf("capture path %s: %w", p, err)
	}
	if _, err := os.Lstat(p); err == nil {
		return fmt.Errorf("capture path %s already exists", p)
	}
	if !a.owns(p) {
		a.files = append(a.files, p)
	}
	return nil
}

// guard records a Guard path: a file with its content digest, or a
// directory (sum nil).
func (a *privateArea) guard(p string, sum *[32]byte) {
	if a.guarded == nil {
		a.guarded = map[string]*[32]byte{}
	}
	a.guarded[p] = sum
}

// errLeftInPlace reports guarded paths cleanup kept because the attempt
// changed them.
var errLeftInPlace = errors.New("left in place")

// removeGuarded removes a guarded file only when it is still the regular
// file with the content written, a guarded directory only when empty.
func removeGuarded(p string, sum *[32]byte) error {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if sum == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%w: %s was replaced during the attempt", errLeftInPlace, p)
		}
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("%w: %s is not empty after the attempt", errLeftInPlace, p)
		}
		return nil
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s was replaced during the attempt", errLeftInPlace, p)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if sha256.Sum256(data) != *sum {
		return fmt.Errorf("%w: %s was changed during the attempt", errLeftInPlace, p)
	}
	return os.Remove(p)
}

// cleanup removes everything the area created, newest first. RemoveAll
// never follows a symlink out of a directory. Guarded paths are removed
// only when unchanged (files) or empty (directories); the error names the
// ones left in place.
func (a *privateArea) cleanup() error {
	if a == nil {
		return nil
	}
	var errs []error
	for i := len(a.files) - 1; i >= 0; i-- {
		if sum, ok := a.guarded[a.files[i]]; ok {
			if err := removeGuarded(a.files[i], sum); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if err := os.Remove(a.files[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	for i := len(a.dirs) - 1; i >= 0; i-- {
		if err := os.RemoveAll(a.dirs[i]); err != nil {
			errs = append(errs, err)
		}
	}
	a.files, a.dirs = nil, nil
	return errors.Join(errs...)
}
