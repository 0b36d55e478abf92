package quota

import (
	"fmt"

	"github.com/switchyard-dev/switchyard/policy"
)

// credentialFiles names, for each provider whose live source reads the
// CLI's own login file, the file it reads (docs/decisions.md D-26C: the
// usage endpoint accepts only the CLI's own token, so its source reads it,
// never refreshes, copies or stores it, and its kill switch stops it).
var credentialFiles = map[policy.Provider]string{
	policy.Claude: "$CLAUDE_CONFIG_DIR/.credentials.json, else ~/.claude/.credentials.json",
	policy.Gemini: "~/.gemini/oauth_creds.json",
}

// CredentialFile is the credential file p's quota source reads, as people
// read it, or "" when the source reads none.
func CredentialFile(p policy.Provider) string { return credentialFiles[p] }

// CredentialNote says, for `usage` and `doctor`, whether p's quota source
// read (or reads, on each measurement) the CLI's credential file: "" for a
// source that reads none; that the file was not read when rep says the kill
// switch turned the source off; else which file it reads and how to stop
// it. rep may be nil (no report yet).
func CredentialNote(p policy.Provider, rep *policy.CapacityReport) string {
	file := credentialFiles[p]
	if file == "" {
		return ""
	}
	if rep != nil && rep.Snapshot.Reason == policy.CapacityReasonDisabled {
		return fmt.Sprintf("credential file not read: %s=0 turned the quota source off", KillSwitch(p))
	}
	return fmt.Sprintf("the quota source reads the %s CLI's own sign-in token from %s on each measurement, only to call its usage endpoint (never refreshed, copied or stored); %s=0 stops it",
		p, file, KillSwitch(p))
}
