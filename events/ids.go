package events

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on identifiers and lane indexes.
const (
	MaxIDLen       = 128  // run ids and execution ids.
	MaxProviderLen = 64   // provider and parent names.
	MaxWorkerIDLen = 256  // worker ids.
	MaxLanes       = 9999 // largest lane index a subject may carry.
)

// ValidateRunID accepts a subject-token-safe run id: 1 to MaxIDLen
// characters from [A-Za-z0-9_-], starting with a letter or digit. A UUID
// qualifies.
func ValidateRunID(id string) error {
	if !tokenSafe(id) {
		return invalidf("run id %q: want 1-%d characters from [A-Za-z0-9_-], starting with a letter or digit", id, MaxIDLen)
	}
	return nil
}

// ValidateExecutionID accepts the same alphabet as ValidateRunID. Execution
// ids become claim keys and message ids, so they must be token-safe.
func ValidateExecutionID(id string) error {
	if !tokenSafe(id) {
		return invalidf("execution id %q: want 1-%d characters from [A-Za-z0-9_-], starting with a letter or digit", id, MaxIDLen)
	}
	return nil
}

// ValidateProvider accepts a provider or parent name usable in a job
// subject: 1 to MaxProviderLen characters from [a-z0-9-], starting with a
// letter or digit, and not "native".
func ValidateProvider(name string) error {
	ok := name != "" && len(name) <= MaxProviderLen && name != nativeToken && name[0] != '-'
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-'
	}
	if !ok {
		return invalidf("provider %q: want 1-%d characters from [a-z0-9-], not \"native\"", name, MaxProviderLen)
	}
	return nil
}

// ValidateWorkerID accepts any printable UTF-8 string of 1 to MaxWorkerIDLen
// bytes without spaces (worker ids are often host names or host:pid).
func ValidateWorkerID(id string) error {
	ok := id != "" && len(id) <= MaxWorkerIDLen && utf8.ValidString(id)
	for _, r := range id {
		if !ok {
			break
		}
		ok = unicode.IsPrint(r) && !unicode.IsSpace(r)
	}
	if !ok {
		return invalidf("worker id %q: want 1-%d printable bytes without spaces", id, MaxWorkerIDLen)
	}
	return nil
}

func tokenSafe(s string) bool {
	if s == "" || len(s) > MaxIDLen || s[0] == '-' || s[0] == '_' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// requireText reports a missing or blank string field.
func requireText(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return invalidf("%s is required", field)
	}
	return nil
}

func itoa64(v uint64) string { return strconv.FormatUint(v, 10) }
