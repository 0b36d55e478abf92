package events

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// Local files Switchyard trusts (a data directory and what it reads from
// it: serve.json, serve.auth, serve.lock; a parent's operation ledger and
// its lock) must be this user's own. A mode alone proves nothing: a 0700
// directory of another user is private to that user, who could then
// replace serve.json and collect the secrets of every client that trusts
// it. These checks look at the owner (the effective uid) as well as the
// mode, and name the path, the owner found and the fix in their errors.
//
// They live here, beside the credentials file they guard, because events
// is the one package every reader of these files imports (the CLI, the
// client package, the engine, the contract ledger).

// UnsafePathError is a file or directory Switchyard refuses to trust: not
// this user's own, open to other users' writes, or not the kind of file
// expected. Nothing was read from it.
type UnsafePathError struct {
	// What names the file for the user ("data directory", "serve.json").
	What string
	// Path is the file's path.
	Path string
	// Problem says what is wrong and Fix what to do about it.
	Problem, Fix string
}

func (e *UnsafePathError) Error() string {
	return fmt.Sprintf("%s %s %s; %s", e.What, e.Path, e.Problem, e.Fix)
}

// ownerName is "uid N (name)" or "uid N" when the uid has no account.
func ownerName(uid uint32) string {
	s := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(s); err == nil && u.Username != "" {
		return "uid " + s + " (" + u.Username + ")"
	}
	return "uid " + s
}

// checkOwned checks that st, the status of path, is this user's own and
// writable by no one else.
func checkOwned(st fs.FileInfo, path, what string, dir bool) error {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return &UnsafePathError{What: what, Path: path, Problem: "has no owner this platform reports", Fix: "use a local file system"}
	}
	me := uint32(os.Geteuid())
	if sys.Uid != me {
		fix := fmt.Sprintf("another user could have written it, so nothing in it is trusted; remove it if you did not make it, or, if it is yours, give it to this user (chown %d %s)", me, path)
		if dir {
			fix = fmt.Sprintf("its owner could replace the files Switchyard reads there, so it is not used; run switchyard as that user, pass a directory of your own (--data-dir DIR), or, if it is yours, give it to this user (chown -R %d %s)", me, path)
		}
		return &UnsafePathError{What: what, Path: path,
			Problem: fmt.Sprintf("is owned by %s, not by this user (%s)", ownerName(sys.Uid), ownerName(me)), Fix: fix}
	}
	if st.Mode().Perm()&0o022 != 0 {
		return &UnsafePathError{What: what, Path: path,
			Problem: fmt.Sprintf("is writable by other users (mode %04o)", st.Mode().Perm()),
			Fix:     fmt.Sprintf("make it private: chmod go-w %s", path)}
	}
	switch {
	case dir && !st.IsDir():
		return &UnsafePathError{What: what, Path: path, Problem: "is not a directory", Fix: "pass a directory"}
	case !dir && !st.Mode().IsRegular():
		return &UnsafePathError{What: what, Path: path, Problem: fmt.Sprintf("is not a regular file (%v)", st.Mode().Type()), Fix: "remove it"}
	}
	return nil
}

// CheckPrivateDir checks that the directory at path (followed if it is a
// symlink) is this user's own and writable by no other user; what names
// it in the error ("data directory"). A missing directory is an
// fs.ErrNotExist error.
func CheckPrivateDir(path, what string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	return checkOwned(st, path, what, true)
}

// CheckOwnedFile checks that f, opened from path, is a regular file of
// this user's own that no other user may write.
func CheckOwnedFile(f *os.File, path, what string) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	return checkOwned(st, path, what, false)
}

// OpenOwnedFile opens path for reading after checking that its directory
// is a private directory of this user (dirWhat names it) and that the file
// itself is a regular file of this user's own that no other user may
// write. It never follows a symlink at path. A missing file is an
// fs.ErrNotExist error.
func OpenOwnedFile(path, what, dirWhat string) (*os.File, error) {
	if err := CheckPrivateDir(filepath.Dir(path), dirWhat); err != nil {
		return nil, err
	}
	// O_NONBLOCK: a FIFO planted in the file's place must not hang the
	// open; it is refused below as not a regular file.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, &UnsafePathError{What: what, Path: path, Problem: "is a symbolic link", Fix: "remove it"}
		}
		return nil, err
	}
	if err := CheckOwnedFile(f, path, what); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// CheckFileDir checks a directory that holds files Switchyard creates and
// later trusts (a ledger and its lock): it must belong to this user or to
// root and be writable by no one else. A shared world-writable directory
// such as /tmp is refused even with its sticky bit: another user could
// create the file there first.
func CheckFileDir(dir, what string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return &UnsafePathError{What: what, Path: dir, Problem: "has no owner this platform reports", Fix: "use a local file system"}
	}
	me := uint32(os.Geteuid())
	switch {
	case !st.IsDir():
		return &UnsafePathError{What: what, Path: dir, Problem: "is not a directory", Fix: "pass a path in a directory"}
	case st.Mode().Perm()&0o022 != 0:
		return &UnsafePathError{What: what, Path: dir,
			Problem: fmt.Sprintf("is writable by other users (mode %04o%s), so one of them could create or replace the file first", st.Mode().Perm(), stickyNote(st.Mode())),
			Fix:     "keep the file in a directory of your own (for example mkdir -m 700 " + filepath.Join(dir, "switchyard-"+strconv.Itoa(int(me))) + ")"}
	case sys.Uid != me && sys.Uid != 0:
		return &UnsafePathError{What: what, Path: dir,
			Problem: fmt.Sprintf("is owned by %s, not by this user (%s) or root, so its owner could replace the file", ownerName(sys.Uid), ownerName(me)),
			Fix:     "keep the file in a directory of your own"}
	}
	return nil
}

func stickyNote(m fs.FileMode) string {
	if m&fs.ModeSticky != 0 {
		return ", sticky"
	}
	return ""
}
