package quota

import (
	"fmt"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// CredentialFile is the credential file p's quota source reads, as people
// read it (the spec's QuotaCredentialFile), or "" when the source reads
// none (docs/decisions.md D-26C: the usage endpoint accepts only the CLI's
// own token, so its source reads it, never refreshes, copies or stores it,
// and its kill switch stops it).
func CredentialFile(p policy.Provider) string {
	spec, err := providers.Lookup(p)
	if err != nil {
		return ""
	}
	return spec.QuotaCredentialFile
}

// CredentialNote says, for `usage` and `doctor`, whether p's quota source
// read (or reads, on each measurement) the CLI's credential file: "" for a
// source that reads none; that the file was not read when rep says the kill
// switch turned the source off; else which file it reads and how to stop
// it. rep may be nil (no report yet).
func CredentialNote(p policy.Provider, rep *policy.CapacityReport) string {
	file := CredentialFile(p)
	if file == "" {
		return ""
	}
	if rep != nil && rep.Snapshot.Reason == policy.CapacityReasonDisabled {
		return fmt.Sprintf("credential file not read: %s=0 turned the quota source off", KillSwitch(p))
	}
	return fmt.Sprintf("the quota source reads the %s CLI's own sign-in token from %s on each measurement, only to call its usage endpoint (never refreshed, copied or stored); %s=0 stops it",
		p, file, KillSwitch(p))
}
