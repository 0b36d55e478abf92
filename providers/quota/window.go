package quota

import (
	"math"
	"strconv"
	"time"

	"github.com/switchyard-dev/switchyard/policy"
)

// maxNameLen bounds a window name built from payload text.
const maxNameLen = 64

// safeName returns s when it is a plain label (letters, digits, space and
// ._:- , at most maxNameLen bytes) and false otherwise. Window names come
// from payload text (a model id, a limit kind); only such labels reach an
// output, so no address, token or free text can.
func safeName(s string) (string, bool) {
	if s == "" || len(s) > maxNameLen {
		return "", false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case r == '.' || r == '_' || r == ':' || r == '-' || r == ' ':
		default:
			return "", false
		}
	}
	return s, true
}

// uniqueName returns name, or name#i when an earlier window took it.
func uniqueName(seen map[string]bool, name string, i int) string {
	if seen[name] {
		name += "#" + strconv.Itoa(i)
	}
	seen[name] = true
	return name
}

// percent validates a used percentage: finite and not negative. Above 100
// is clamped to 100 (the source says over the limit, which is exhausted;
// Claude's own status line reports 105). ok is false for anything else.
func percent(v float64) (float64, bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, false
	}
	return min(v, 100), true
}

// round6 drops float noise (100×(1−0.87) is 13.000000000000002).
func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// parseTime reads an RFC 3339 / ISO-8601 timestamp (fractional seconds and
// numeric offsets allowed) as UTC.
func parseTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// window builds a CapacityWindow; nil pointers stay absent.
func window(name string, used *float64, minutes int, resets *time.Time) policy.CapacityWindow {
	w := policy.CapacityWindow{Name: name, UsedPercent: used, ResetsAt: resets}
	if minutes > 0 {
		w.WindowMinutes = &minutes
	}
	return w
}
