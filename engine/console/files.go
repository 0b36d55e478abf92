package console

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/switchyard-dev/switchyard/events"
)

// MaxFileBytes caps what the console serves of an attempt file; output
// beyond it is cut, and the header X-Switchyard-Truncated says so.
const MaxFileBytes = 256 << 10

// apiFile serves one file of an execution: receipt, progress or output,
// found through the execution's launch (or continue) event and only when
// it lies under the data directory. It never follows a symlink.
func (s *Server) apiFile(w http.ResponseWriter, r *http.Request) {
	id, ok := s.runID(w, r)
	if !ok {
		return
	}
	lane, err := strconv.Atoi(r.PathValue("lane"))
	if err != nil || lane < 0 || lane > events.MaxLanes {
		s.failField(w, http.StatusBadRequest, "lane", "lane %q: want a zero-based lane index", r.PathValue("lane"))
		return
	}
	exec, name := r.PathValue("exec"), r.PathValue("file")
	if err := events.ValidateExecutionID(exec); err != nil {
		s.failField(w, http.StatusBadRequest, "exec", "execution id %q is not valid", exec)
		return
	}
	envs, err := s.o.Store.Load(r.Context(), id, lane)
	if err != nil {
		s.fail(w, http.StatusServiceUnavailable, "load run %s lane %d: %v", id, lane, err)
		return
	}
	var paths *events.Paths
	for _, e := range envs {
		switch p := e.Payload.(type) {
		case events.Launch:
			if p.ExecutionID == exec {
				paths = &p.Paths
			}
		case events.Continue:
			if p.ExecutionID == exec {
				paths = &p.Paths
			}
		}
	}
	if paths == nil {
		s.fail(w, http.StatusNotFound, "run %s lane %d has no execution %s", id, lane, exec)
		return
	}
	var path, ctype string
	switch name {
	case "receipt":
		path, ctype = paths.Receipt, "application/json"
	case "progress":
		path, ctype = paths.Progress, "application/json"
	case "output":
		path, ctype = paths.Output, "text/plain; charset=utf-8"
	default:
		s.fail(w, http.StatusNotFound, "file %q: want receipt, progress or output", name)
		return
	}
	if !s.underDataDir(path) {
		s.fail(w, http.StatusForbidden, "the %s of execution %s lies outside the data directory; the console serves files only from there", name, exec)
		return
	}
	fh, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, os.ErrNotExist) {
		s.fail(w, http.StatusNotFound, "execution %s has no %s yet", exec, name)
		return
	}
	if err != nil {
		s.fail(w, http.StatusInternalServerError, "open the %s of execution %s: %v", name, exec, err)
		return
	}
	defer fh.Close()
	if st, err := fh.Stat(); err != nil || !st.Mode().IsRegular() {
		s.fail(w, http.StatusForbidden, "the %s of execution %s is not a regular file", name, exec)
		return
	}
	b, err := io.ReadAll(io.LimitReader(fh, MaxFileBytes+1))
	if err != nil {
		s.fail(w, http.StatusInternalServerError, "read the %s of execution %s: %v", name, exec, err)
		return
	}
	if len(b) > MaxFileBytes {
		b = b[:MaxFileBytes]
		w.Header().Set("X-Switchyard-Truncated", fmt.Sprint(MaxFileBytes))
		ctype = "text/plain; charset=utf-8"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}

// underDataDir reports whether path is absolute and inside the data
// directory.
func (s *Server) underDataDir(path string) bool {
	if !filepath.IsAbs(path) {
		return false
	}
	root := s.o.DataDir
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	rel, err := filepath.Rel(root, filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}
