package contract

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strings"
)

// DigestDomain opens every checkpoint digest's framing (version 1).
const DigestDomain = "switchyard-checkpoint-digest/v1"

// DigestFile is one file of a checkpoint digest.
type DigestFile struct {
	Path    string // repository-relative, "/" separated.
	Mode    string // "100644" or "100755", as Git records a regular file.
	Content []byte
}

// Digest is the SHA-256 checkpoint digest over HEAD, the operation, the
// checks and the framed file paths, modes and contents, as lowercase hex.
// The framing (docs/CONTRACT.md) is, with u64(n) an 8-byte big-endian
// unsigned integer and str(s) = u64(len(s)) || s:
//
//	str(DigestDomain) || str(head) || str(operation) ||
//	u64(#checks) || str(check)... (checks sorted by bytes) ||
//	u64(#files) || (str(path) || str(mode) || str(content))... (files sorted by path bytes)
func Digest(head, operation string, checks []string, files []DigestFile) string {
	h := sha256.New()
	u64 := func(n int) {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(n))
		h.Write(b[:])
	}
	str := func(s []byte) {
		u64(len(s))
		h.Write(s)
	}
	str([]byte(DigestDomain))
	str([]byte(head))
	str([]byte(operation))
	cs := slices.Clone(checks)
	slices.Sort(cs)
	u64(len(cs))
	for _, c := range cs {
		str([]byte(c))
	}
	fs := slices.Clone(files)
	slices.SortFunc(fs, func(a, b DigestFile) int { return strings.Compare(a.Path, b.Path) })
	u64(len(fs))
	for _, f := range fs {
		str([]byte(f.Path))
		str([]byte(f.Mode))
		str(f.Content)
	}
	return hex.EncodeToString(h.Sum(nil))
}
