package providers

import (
	"fmt"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// The typed lookup errors below are what the registry answers when a
// provider cannot be used as asked. Each message ends in one line that
// starts with "fix: " and names exactly what to install or which flag or
// variable to set (rfc-provider-registry.md "Explicit selection, hard
// error"); callers match them with errors.As. Messages name variables and
// paths the user chose, never environment values of anything else.

// FixPrefix starts the last line of every typed lookup error.
const FixPrefix = "fix: "

// UnknownProviderError: no spec is registered for the provider.
type UnknownProviderError struct {
	Provider policy.Provider
	Known    []policy.Provider
}

func (e *UnknownProviderError) Error() string {
	known := make([]string, 0, len(e.Known))
	for _, p := range e.Known {
		known = append(known, string(p))
	}
	return fmt.Sprintf("no provider spec for %q (known: %s)\n%suse one of: %s",
		e.Provider, strings.Join(known, ", "), FixPrefix, strings.Join(known, ", "))
}

// BinaryNotFoundError: the provider's CLI is not installed where discovery
// looks. Override is set when SWITCHYARD_<PROVIDER>_BIN was set and is
// unusable (Reason says why); the message names the variable, never its
// value. It wraps ErrBinaryNotFound.
type BinaryNotFoundError struct {
	Provider policy.Provider
	Tried    []string // binary names searched on PATH
	Override bool     // the override variable was set (and is unusable)
	Reason   string   // why the override is unusable
	Install  string   // the spec's install hint
}

func (e *BinaryNotFoundError) Error() string {
	v := BinEnvVar(e.Provider)
	if e.Override {
		return fmt.Sprintf("%s CLI override %s is unusable: %s\n%sset %s to the absolute path of an executable %s CLI, or unset it to search PATH",
			e.Provider, v, e.Reason, FixPrefix, v, e.Provider)
	}
	return fmt.Sprintf("%s CLI not found on PATH (tried %s)\n%s%s or set %s=/path/to/%s",
		e.Provider, strings.Join(e.Tried, ", "), FixPrefix, e.Install, v, firstOr(e.Tried, string(e.Provider)))
}

// Unwrap lets errors.Is(err, ErrBinaryNotFound) keep working.
func (e *BinaryNotFoundError) Unwrap() error { return ErrBinaryNotFound }

// UnsupportedVersionError: the installed CLI's version is outside what the
// spec supports (a floor or an unknown major). It wraps ErrVersion.
type UnsupportedVersionError struct {
	Provider policy.Provider
	Version  string // the version found
	Reason   string // what is supported
	Install  string // the spec's install hint
}

func (e *UnsupportedVersionError) Error() string {
	return fmt.Sprintf("%s %s is unsupported: %s\n%s%s at a supported version, or set %s to a supported binary",
		e.Provider, e.Version, e.Reason, FixPrefix, e.Install, BinEnvVar(e.Provider))
}

// Unwrap lets errors.Is(err, ErrVersion) keep working.
func (e *UnsupportedVersionError) Unwrap() error { return ErrVersion }

// ContainmentUnverifiedError: an attempt's access mode needs a verified
// containment class the provider's spec does not declare (provider-contract.md
// "Autonomous isolation").
type ContainmentUnverifiedError struct {
	Provider    policy.Provider
	Mode        policy.Access
	Required    ContainmentClass
	Containment Containment // what the spec declares for the mode
}

func (e *ContainmentUnverifiedError) Error() string {
	return fmt.Sprintf("%s %s containment is %s, not the required %s (%s)\n%spass --allow-unverified-containment %s to accept an unrestricted %s attempt, or route it to a provider with %s containment",
		e.Provider, e.Mode, e.Containment.Class, e.Required, e.Containment.Reason,
		FixPrefix, e.Provider, e.Mode, e.Required)
}

// BinEnvVar is the per-provider binary override variable:
// SWITCHYARD_<PROVIDER>_BIN (SWITCHYARD_CODEX_BIN).
func BinEnvVar(p policy.Provider) string {
	return "SWITCHYARD_" + strings.ToUpper(string(p)) + "_BIN"
}

func firstOr(list []string, def string) string {
	if len(list) > 0 {
		return list[0]
	}
	return def
}

// RequiredContainment is the class an access mode needs: writers need
// WORKSPACE_WRITE_NO_NETWORK, read-only attempts READ_ONLY_NO_NETWORK.
func RequiredContainment(mode policy.Access) ContainmentClass {
	if mode == policy.IsolatedWrite {
		return ContainmentWorkspaceWriteNoNetwork
	}
	return ContainmentReadOnlyNoNetwork
}

// ContainmentFor is the spec's containment for a mode; a mode absent from
// the spec is UNVERIFIED.
func ContainmentFor(spec *Spec, mode policy.Access) Containment {
	if c, ok := spec.Containment[mode]; ok {
		return c
	}
	return Containment{Class: ContainmentUnverified, Reason: "the spec declares no containment for " + string(mode)}
}

// CheckContainment returns a *ContainmentUnverifiedError when the spec's
// containment for mode is not the class the mode requires, else nil.
func CheckContainment(spec *Spec, mode policy.Access) error {
	c, want := ContainmentFor(spec, mode), RequiredContainment(mode)
	if c.Class == want {
		return nil
	}
	return &ContainmentUnverifiedError{Provider: spec.Provider, Mode: mode, Required: want, Containment: c}
}

// Resolve is the registry's lookup for one attempt: the spec, the mode's
// containment check (skipped when allowUnverified: an explicit unrestricted
// contract) and the binary from env (Discover). It answers the first
// problem as a typed error: *UnknownProviderError,
// *ContainmentUnverifiedError or *BinaryNotFoundError.
func Resolve(p policy.Provider, mode policy.Access, env map[string]string, allowUnverified bool) (*Spec, string, error) {
	spec, err := Lookup(p)
	if err != nil {
		return nil, "", err
	}
	if !allowUnverified {
		if err := CheckContainment(spec, mode); err != nil {
			return spec, "", err
		}
	}
	exe, err := Discover(spec, env)
	if err != nil {
		return spec, "", err
	}
	return spec, exe, nil
}
