package providers

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Version is a stable MAJOR.MINOR.PATCH CLI version. Version floors compare
// these; a prerelease never satisfies a floor, so it never parses.
type Version struct {
	Major, Minor, Patch int
}

// ErrVersion is wrapped by every version parse failure.
var ErrVersion = errors.New("unrecognized CLI version")

// ParseVersion accepts exactly MAJOR.MINOR.PATCH: decimal digits without
// leading zeros. Prereleases (1.2.3-beta), build metadata, a v prefix,
// surrounding text or whitespace are rejected.
func ParseVersion(s string) (Version, error) {
	if strings.ContainsAny(s, "-+") {
		return Version{}, fmt.Errorf("%w: %q is a prerelease or build, not a stable release", ErrVersion, clip(s))
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return Version{}, fmt.Errorf("%w: %q is not MAJOR.MINOR.PATCH", ErrVersion, clip(s))
	}
	var n [3]int
	for i, p := range parts {
		if p == "" || (len(p) > 1 && p[0] == '0') || strings.TrimLeft(p, "0123456789") != "" || len(p) > 9 {
			return Version{}, fmt.Errorf("%w: %q is not MAJOR.MINOR.PATCH", ErrVersion, clip(s))
		}
		n[i], _ = strconv.Atoi(p)
	}
	return Version{n[0], n[1], n[2]}, nil
}

// MustVersion parses a version literal of this package; it panics on a
// malformed literal (a programming error).
func MustVersion(s string) Version {
	v, err := ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

// Compare returns -1, 0 or +1 as v is older than, equal to or newer than w.
func (v Version) Compare(w Version) int {
	for _, d := range [3]int{v.Major - w.Major, v.Minor - w.Minor, v.Patch - w.Patch} {
		if d < 0 {
			return -1
		}
		if d > 0 {
			return 1
		}
	}
	return 0
}

// AtLeast reports whether v is floor or newer.
func (v Version) AtLeast(floor Version) bool { return v.Compare(floor) >= 0 }

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// claudeWriterFloor is the first Claude Code validated with the writer
// sandbox profile (provider-dispatch.md).
var claudeWriterFloor = MustVersion("2.1.285")

// parseClaudeVersion reads `claude --version`: the version, optionally
// followed by " (Claude Code)", on one line.
func parseClaudeVersion(out string) (Version, error) {
	line, err := singleLine(out)
	if err != nil {
		return Version{}, err
	}
	return ParseVersion(strings.TrimSuffix(line, " (Claude Code)"))
}

// OpenCodeContract is the native OpenCode contract a version banner selects
// by stable major version.
type OpenCodeContract int

// OpenCode contracts.
const (
	OpenCodeV1 OpenCodeContract = 1 // restored V1: >=1.18.29 <2
	OpenCodeV2 OpenCodeContract = 2 // stable V2: >=2.0.0 <3
)

// openCodeV1Floor is the oldest release of the restored V1 contract.
var openCodeV1Floor = MustVersion("1.18.29")

// ParseOpenCodeBanner reads `opencode --version`: a bare version (1.18.32)
// or "opencode v2.0.27", one line. It selects the contract by major version;
// prereleases, unknown majors, V1 releases below 1.18.29, malformed output
// and trailing noise are errors.
func ParseOpenCodeBanner(out string) (Version, OpenCodeContract, error) {
	line, err := singleLine(out)
	if err != nil {
		return Version{}, 0, err
	}
	if rest, ok := strings.CutPrefix(line, "opencode v"); ok {
		line = rest
	}
	v, err := ParseVersion(line)
	if err != nil {
		return Version{}, 0, err
	}
	switch v.Major {
	case 1:
		if !v.AtLeast(openCodeV1Floor) {
			return v, 0, openCodeUnsupported(v, fmt.Sprintf("older than %s", openCodeV1Floor))
		}
		return v, OpenCodeV1, nil
	case 2:
		return v, OpenCodeV2, nil
	}
	return v, 0, openCodeUnsupported(v, fmt.Sprintf("major version %d is unknown (supported: 1.x from %s, 2.x)", v.Major, openCodeV1Floor))
}

// openCodeUnsupported is the typed error of a stable OpenCode release the
// spec does not drive.
func openCodeUnsupported(v Version, reason string) error {
	e := &UnsupportedVersionError{Provider: "opencode", Version: v.String(), Reason: reason}
	if s, ok := registry["opencode"]; ok {
		e.Install = s.Install
	}
	return e
}

// parseBareVersion reads a version probe that prints only the version
// (`cursor-agent --version`, `gemini --version`).
func parseBareVersion(out string) (Version, error) {
	line, err := singleLine(out)
	if err != nil {
		return Version{}, err
	}
	return ParseVersion(line)
}

// singleLine returns the only line of out, allowing one trailing newline
// (and a carriage return before it). Anything else is noise.
func singleLine(out string) (string, error) {
	s := strings.TrimSuffix(out, "\n")
	s = strings.TrimSuffix(s, "\r")
	if s == "" {
		return "", fmt.Errorf("%w: empty output", ErrVersion)
	}
	if strings.ContainsAny(s, "\r\n") {
		return "", fmt.Errorf("%w: more than one line of output", ErrVersion)
	}
	return s, nil
}

// clip bounds CLI text quoted in an error so raw output never floods a
// receipt.
func clip(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
