package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/switchyard-dev/switchyard/policy"
)

var statusFlags = flagSet{
	values:   map[string]bool{"progress": true, "receipt": true},
	booleans: map[string]bool{"json": true},
}

// Status runs `switchyard runner status`: it reads each lane's progress
// snapshot and receipt and prints one line per lane, or JSON with --json.
// It is read-only. Exit 0, or ExitUsage for bad arguments.
func (r *Runner) Status(args []string) int {
	p, err := statusFlags.parse(args)
	if errors.Is(err, ErrHelp) {
		io.WriteString(r.cfg.Stdout, StatusUsage)
		return 0
	}
	if err == nil && (len(p.values["progress"]) == 0 || len(p.values["progress"]) != len(p.values["receipt"])) {
		err = usagef("--progress", "status needs one or more --progress F --receipt F pairs (got %d --progress and %d --receipt)",
			len(p.values["progress"]), len(p.values["receipt"]))
	}
	if err != nil {
		fmt.Fprintf(r.cfg.Stderr, "error: %s\n\n%s", err, StatusUsage)
		return ExitUsage
	}
	now := r.cfg.Now()
	var out bytes.Buffer
	lanes := make([]any, 0, len(p.values["progress"]))
	for i, prog := range p.values["progress"] {
		v := readLaneView(prog, p.values["receipt"][i])
		line, key := renderLane(v, now)
		if p.booleans["json"] {
			lanes = append(lanes, laneJSON(i, v, line, key, now))
			continue
		}
		label := fmt.Sprintf("L%d", i+1)
		if v.snap != nil {
			label += fmt.Sprintf(" %s:%s", v.snap.Provider, v.snap.AttemptID[:8])
		}
		fmt.Fprintf(&out, "%s %s\n", label, line)
	}
	if p.booleans["json"] {
		b, _ := json.Marshal(struct {
			SchemaVersion int   `json:"schemaVersion"`
			Lanes         []any `json:"lanes"`
		}{1, lanes})
		out.Write(b)
		out.WriteByte('\n')
	}
	r.cfg.Stdout.Write(out.Bytes())
	return 0
}

// laneView is what status concluded about one lane.
type laneView struct {
	kind           string // terminal, active, interrupted or unknown
	status         policy.ReceiptStatus
	reason         string
	child          string // interrupted: possibly-running, gone, reused, unverified, exited, none
	receiptWritten *bool
	snap           *snapshot
}

// readBounded reads at most limit bytes of a regular file, never through
// a symlink, optionally bound to an inode. The reason is "" (ok), missing,
// not-regular-file, oversize or undecodable.
func readBounded(path string, limit int64, ref *fileRef) ([]byte, string) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, "missing"
		case errors.Is(err, syscall.ELOOP):
			return nil, "not-regular-file"
		}
		return nil, "undecodable"
	}
	defer f.Close()
	var st syscall.Stat_t
	if syscall.Fstat(int(f.Fd()), &st) != nil {
		return nil, "undecodable"
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, "not-regular-file"
	}
	if ref != nil && (uint64(st.Dev) != ref.Dev || uint64(st.Ino) != ref.Ino) {
		return nil, "undecodable"
	}
	if st.Size > limit {
		return nil, "oversize"
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, "undecodable"
	}
	if int64(len(b)) > limit {
		return nil, "oversize"
	}
	return b, ""
}

// receiptStatus reads a receipt's status when it parses as schema 1 or 2
// with a known status; exists says whether anything is at the path.
func receiptStatus(path string, ref *fileRef) (status policy.ReceiptStatus, exists bool) {
	b, why := readBounded(path, receiptReadLimit, ref)
	if why != "" {
		return "", why != "missing"
	}
	// Only the header decides, but strictly: one object, each key once and
	// spelled exactly (encoding/json alone would let a repeated or
	// differently-cased "status" win).
	m, err := policy.ObjectMembers(b, nil)
	if err != nil {
		return "", true
	}
	var st string
	if json.Unmarshal(m["status"], &st) != nil {
		return "", true
	}
	v := string(m["schemaVersion"])
	if (v == "1" || v == "2") && policy.ReceiptStatus(st).Valid() &&
		(v == "2" || st != string(policy.StatusNeedsParentOperation)) {
		return policy.ReceiptStatus(st), true
	}
	return "", true
}

// readSnapshot reads and strictly decodes a progress file. A file over
// RUNNER.md's 4096 bytes is oversize: no runner writes one.
func readSnapshot(path string) (*snapshot, string) {
	b, why := readBounded(path, snapshotMaxBytes, nil)
	if why != "" {
		return nil, why
	}
	s, err := decodeSnapshot(b)
	if err != nil {
		return nil, "undecodable"
	}
	return s, ""
}

// readLaneView merges the progress file, the receipt (bound to the
// reserved inode the snapshot records) and process-identity probes. Only
// a parsing receipt makes a lane terminal.
func readLaneView(progressPath, receiptPath string) laneView {
	snap, why := readSnapshot(progressPath)
	var ref *fileRef
	if snap != nil {
		ref = snap.ReceiptRef
	}
	status, exists := receiptStatus(receiptPath, ref)
	if status != "" {
		return laneView{kind: "terminal", status: status, snap: snap}
	}
	switch {
	case why == "missing" && exists:
		return laneView{kind: "unknown", reason: "not-started"}
	case why != "":
		return laneView{kind: "unknown", reason: why}
	case snap.Terminal != nil:
		w := snap.Terminal.ReceiptWritten
		return laneView{kind: "unknown", reason: "terminal-without-receipt", receiptWritten: &w, snap: snap}
	}
	launcher := probeIdentity(snap.Runner.Pid, snap.Runner.StartToken)
	switch launcher {
	case "live":
		return laneView{kind: "active", snap: snap}
	case "unverified":
		return laneView{kind: "unknown", reason: "launcher-unverified", snap: snap}
	}
	// The launcher is gone: it may have finished between the two reads.
	if again, _ := readSnapshot(progressPath); again != nil && again.AttemptID == snap.AttemptID {
		snap = again
	}
	if status, _ := receiptStatus(receiptPath, snap.ReceiptRef); status != "" {
		return laneView{kind: "terminal", status: status, snap: snap}
	}
	if snap.Terminal != nil {
		w := snap.Terminal.ReceiptWritten
		return laneView{kind: "unknown", reason: "terminal-without-receipt", receiptWritten: &w, snap: snap}
	}
	v := laneView{kind: "interrupted", reason: "launcher-gone", snap: snap}
	if launcher == "reused" {
		v.reason = "pid-reused"
	}
	switch c := snap.Child; {
	case c == nil:
		v.child = "none"
	case !c.Running:
		v.child = "exited"
	default:
		switch probeIdentity(c.Pid, c.StartToken) {
		case "live":
			v.child = "possibly-running"
		case "absent":
			v.child = "gone"
		case "reused":
			v.child = "reused"
		default:
			v.child = "unverified"
		}
	}
	return v
}

// probeIdentity compares a pid's current start token with the recorded
// one: live, absent, reused or unverified (no recorded token or no answer).
func probeIdentity(pid int, recorded *string) string {
	if recorded == nil {
		return "unverified"
	}
	tok, v := startToken(pid)
	switch {
	case v == procAbsent:
		return "absent"
	case v == procUnverified:
		return "unverified"
	case tok == *recorded:
		return "live"
	}
	return "reused"
}
