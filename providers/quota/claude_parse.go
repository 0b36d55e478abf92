package quota

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/switchyard-dev/switchyard/policy"
)

// claudeWindows are the usage endpoint's fixed windows, in output order:
// the JSON key, the window name and its length in minutes.
var claudeWindows = []struct {
	key, name string
	minutes   int
}{
	{"five_hour", "5h", 5 * 60},
	{"seven_day", "7d", 7 * 24 * 60},
	{"seven_day_opus", "7d-opus", 7 * 24 * 60},
	{"seven_day_sonnet", "7d-sonnet", 7 * 24 * 60},
}

// claudeLimitsKey is the newer array of limits (the only home of
// model-scoped weekly caps).
const claudeLimitsKey = "limits"

// claudeWindowJSON is one fixed window; either field may be null.
type claudeWindowJSON struct {
	Utilization *float64 `json:"utilization"`
	ResetsAt    *string  `json:"resets_at"`
}

// claudeLimitJSON is one limits[] entry; percent may be null.
type claudeLimitJSON struct {
	Kind     *string         `json:"kind"`
	Percent  *float64        `json:"percent"`
	ResetsAt *string         `json:"resets_at"`
	Scope    json.RawMessage `json:"scope"`
}

// ParseClaudeUsage reads the body of Claude's OAuth usage endpoint (GET
// /api/oauth/usage) acquired at at. Windows: five_hour → "5h", seven_day →
// "7d", seven_day_opus → "7d-opus", seven_day_sonnet → "7d-sonnet" (with
// their lengths), and each limits[] entry → "limit/<kind>" plus its scope's
// model display name or surface when one is given. utilization and percent
// are 0–100 (above 100 is clamped to 100); a null percentage leaves the
// window without used_percent, a null resets_at without resets_at; a null
// or absent window is left out. Unknown keys (extra_usage with its credit
// amounts among them) are ignored: the source adds keys.
//
// It never fails and never panics: a body that is not a JSON object, holds
// none of the windows above, or has a known field of the wrong type, a
// negative percentage or an unreadable timestamp is an UNKNOWN snapshot
// with reason unparseable. The snapshot carries no payload text but the
// labels of window names.
func ParseClaudeUsage(body []byte, at time.Time) policy.CapacitySnapshot {
	bad := unknownSnapshot(policy.Claude, policy.QuotaLiveHTTP, policy.CapacityReasonUnparseable, at)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return bad
	}
	known := false
	seen := map[string]bool{}
	var windows []policy.CapacityWindow
	for _, cw := range claudeWindows {
		raw, ok := top[cw.key]
		if !ok {
			continue
		}
		known = true
		if isNull(raw) {
			continue
		}
		var w claudeWindowJSON
		if err := strictObject(raw, &w); err != nil {
			return bad
		}
		used, resets, ok := claudeFields(w.Utilization, w.ResetsAt)
		if !ok {
			return bad
		}
		seen[cw.name] = true
		windows = append(windows, window(cw.name, used, cw.minutes, resets))
	}
	if raw, ok := top[claudeLimitsKey]; ok {
		known = true
		if !isNull(raw) {
			limits, ok := claudeLimits(raw, seen)
			if !ok {
				return bad
			}
			windows = append(windows, limits...)
		}
	}
	if !known {
		return bad
	}
	s := unknownSnapshot(policy.Claude, policy.QuotaLiveHTTP, "", at)
	s.State, s.Windows = policy.CapacityMeasured, windows
	return s
}

// claudeLimits reads the limits array into windows named limit/<kind>[/<scope>].
func claudeLimits(raw json.RawMessage, seen map[string]bool) ([]policy.CapacityWindow, bool) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || items == nil {
		return nil, false
	}
	var out []policy.CapacityWindow
	for i, item := range items {
		var l claudeLimitJSON
		if err := strictObject(item, &l); err != nil || l.Kind == nil {
			return nil, false
		}
		used, resets, ok := claudeFields(l.Percent, l.ResetsAt)
		if !ok {
			return nil, false
		}
		name := "limit/#" + strconv.Itoa(i)
		if kind, ok := safeName(*l.Kind); ok {
			name = "limit/" + kind
			if q, ok := claudeScope(l.Scope); ok {
				name += "/" + q
			}
		}
		out = append(out, window(uniqueName(seen, name, i), used, 0, resets))
	}
	return out, true
}

// claudeScope names a limit's scope: scope.model.display_name, else a
// string scope.surface, when it is a plain label. The scope's shape is not
// pinned, so anything else just leaves the name unqualified.
func claudeScope(raw json.RawMessage) (string, bool) {
	var scope struct {
		Model *struct {
			DisplayName *string `json:"display_name"`
		} `json:"model"`
		Surface json.RawMessage `json:"surface"`
	}
	if len(raw) == 0 || isNull(raw) || json.Unmarshal(raw, &scope) != nil {
		return "", false
	}
	if scope.Model != nil && scope.Model.DisplayName != nil {
		return safeName(*scope.Model.DisplayName)
	}
	var surface string
	if json.Unmarshal(scope.Surface, &surface) == nil {
		return safeName(surface)
	}
	return "", false
}

// claudeFields validates a percentage and a reset time, either possibly
// null.
func claudeFields(pct *float64, reset *string) (used *float64, resets *time.Time, ok bool) {
	if pct != nil {
		v, ok := percent(*pct)
		if !ok {
			return nil, nil, false
		}
		used = &v
	}
	if reset != nil {
		t, ok := parseTime(*reset)
		if !ok {
			return nil, nil, false
		}
		resets = &t
	}
	return used, resets, true
}

// strictObject decodes raw, which must be a JSON object, into v (unknown
// keys ignored, wrong types an error).
func strictObject(raw json.RawMessage, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return errNotObject
	}
	return json.Unmarshal(raw, v)
}

// isNull reports whether raw is the JSON literal null.
func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }
