package events

import (
	"errors"
	"fmt"
	"slices"

	"github.com/switchyard-dev/switchyard/policy"
)

// The capacity store's wire form is policy's canonical capacity report
// (policy.MarshalCapacityReport: strict, times in UTC). A report is
// validated before it is stored and again when it is read: a value that
// fails is an error naming the provider key, never a guess.

// CapacityProviders lists, in order, the providers the capacity store
// keeps reports for: every policy.Providers entry, then policy.Gemini,
// which has a quota source though no sheet names it. List returns reports
// in this order.
var CapacityProviders = append(slices.Clone(policy.Providers), policy.Gemini)

// capacityProvider reports whether p is one of CapacityProviders.
func capacityProvider(p policy.Provider) bool { return slices.Contains(CapacityProviders, p) }

// validateCapacityReport checks a report with policy's rules; a refusal
// matches ErrInvalid.
func validateCapacityReport(r policy.CapacityReport) error {
	if err := r.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

// encodeCapacityReport validates r and returns its stored JSON, at most
// MaxMessageBytes. Every refusal matches ErrInvalid.
func encodeCapacityReport(r policy.CapacityReport) ([]byte, error) {
	if !capacityProvider(r.Provider) {
		return nil, fmt.Errorf("capacity report of %s: %w", r.Provider, invalidf("provider %q: want one of %v", r.Provider, CapacityProviders))
	}
	b, err := policy.MarshalCapacityReport(r)
	if err != nil {
		return nil, fmt.Errorf("capacity report of %s: %w: %w", r.Provider, ErrInvalid, err)
	}
	if len(b) > MaxMessageBytes {
		what := "capacity report of " + string(r.Provider)
		return nil, &LimitError{What: what, Size: len(b), Max: MaxMessageBytes, Limit: "MaxMessageBytes"}
	}
	return b, nil
}

// decodeCapacityReport strictly decodes the value stored under key (a
// provider name) with policy.DecodeCapacityReport, and checks the provider
// equals the key. Errors are *DecodeError naming the key.
func decodeCapacityReport(key string, b []byte) (policy.CapacityReport, error) {
	what := "capacity report " + key
	if len(b) > MaxMessageBytes {
		return policy.CapacityReport{}, &DecodeError{What: what, Err: &LimitError{What: what, Size: len(b), Max: MaxMessageBytes, Limit: "MaxMessageBytes"}}
	}
	r, err := policy.DecodeCapacityReport(b)
	if err != nil {
		return policy.CapacityReport{}, &DecodeError{What: what, Err: fmt.Errorf("%w: %w", ErrInvalid, err)}
	}
	if string(r.Provider) != key {
		return policy.CapacityReport{}, &DecodeError{What: what, Err: invalidf("the report under key %s is %s's", key, r.Provider)}
	}
	return r, nil
}

// capacityReportDigest is policy.CapacityReportDigest.
func capacityReportDigest(r policy.CapacityReport) (string, error) {
	return policy.CapacityReportDigest(r)
}

// newerReport reports whether r replaces old: only a strictly later
// acquisition does, so a slow worker never rolls the state back.
func newerReport(r, old policy.CapacityReport) bool {
	return r.Snapshot.AcquiredAt.After(old.Snapshot.AcquiredAt)
}

func isNoReport(err error) bool { return errors.Is(err, ErrNoCapacityReport) }
