package quota

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-dev/switchyard/policy"
)

// geminiBucketJSON is one retrieveUserQuota bucket; every field is
// optional (remainingAmount is not read: the fraction is the measure).
type geminiBucketJSON struct {
	ModelID           *string  `json:"modelId"`
	TokenType         *string  `json:"tokenType"`
	RemainingFraction *float64 `json:"remainingFraction"`
	ResetTime         *string  `json:"resetTime"`
}

// ParseGeminiQuota reads the body of Code Assist's retrieveUserQuota
// ({buckets:[...]}) acquired at at. Each bucket with a modelId and a
// remainingFraction becomes a window named by its model id (a second
// bucket of one model adds /<tokenType>); remainingFraction is the
// REMAINING share 0–1, so used_percent = 100×(1−fraction); resetTime
// (RFC 3339) becomes resets_at. Buckets without modelId or
// remainingFraction are skipped, as the Gemini CLI does. Unknown keys are
// ignored. An empty bucket list is a measurement with no windows.
//
// It never fails and never panics: a body that is not a JSON object,
// without a buckets array, with a field of the wrong type, a fraction
// outside 0–1 or an unreadable resetTime, or whose buckets are all
// skipped, is an UNKNOWN snapshot with reason unparseable.
func ParseGeminiQuota(body []byte, at time.Time) policy.CapacitySnapshot {
	bad := unknownSnapshot(policy.Gemini, policy.QuotaLiveHTTP, policy.CapacityReasonUnparseable, at)
	var top struct {
		Buckets *[]json.RawMessage `json:"buckets"`
	}
	if err := strictObject(body, &top); err != nil || top.Buckets == nil || *top.Buckets == nil {
		return bad
	}
	seen := map[string]bool{}
	windows := []policy.CapacityWindow{}
	for i, raw := range *top.Buckets {
		var b geminiBucketJSON
		if err := strictObject(raw, &b); err != nil {
			return bad
		}
		if b.ModelID == nil || *b.ModelID == "" || b.RemainingFraction == nil {
			continue
		}
		f := *b.RemainingFraction
		if !(f >= 0 && f <= 1) {
			return bad
		}
		used := round6(100 * (1 - f))
		var resets *time.Time
		if b.ResetTime != nil {
			t, ok := parseTime(*b.ResetTime)
			if !ok {
				return bad
			}
			resets = &t
		}
		name, ok := safeName(*b.ModelID)
		if !ok {
			name = "bucket#" + strconv.Itoa(i)
		}
		if seen[name] && b.TokenType != nil {
			if tt, ok := safeName(strings.ToLower(*b.TokenType)); ok {
				name += "/" + tt
			}
		}
		windows = append(windows, window(uniqueName(seen, name, i), &used, 0, resets))
	}
	if len(windows) == 0 && len(*top.Buckets) > 0 {
		return bad
	}
	s := unknownSnapshot(policy.Gemini, policy.QuotaLiveHTTP, "", at)
	s.State, s.Windows = policy.CapacityMeasured, windows
	if len(windows) == 0 {
		s.Windows = nil
	}
	return s
}

// parseLoadCodeAssist reads loadCodeAssist's cloudaicompanionProject: a
// string, or an object with an id (both seen); "" when absent or null. ok
// is false when the body is not an object or the field has another shape.
func parseLoadCodeAssist(body []byte) (project string, ok bool) {
	var top struct {
		Project json.RawMessage `json:"cloudaicompanionProject"`
	}
	if strictObject(body, &top) != nil {
		return "", false
	}
	if len(top.Project) == 0 || isNull(top.Project) {
		return "", true
	}
	if json.Unmarshal(top.Project, &project) == nil {
		return project, true
	}
	var obj struct {
		ID *string `json:"id"`
	}
	if strictObject(top.Project, &obj) != nil {
		return "", false
	}
	if obj.ID == nil {
		return "", true
	}
	return *obj.ID, true
}
