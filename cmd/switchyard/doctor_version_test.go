package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
	"github.com/switchyard-dev/switchyard/testdata/realcli"
)

// TestDoctorVersionVerification: a probed version is verified when it is
// one of the spec's known versions, "newer" when it is newer than every
// one (field by field, numerically, leading zeros allowed as in cursor's
// dates), and "other" when older, between them, not comparable or when no
// version is known.
func TestDoctorVersionVerification(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		version string
		known   []string
		want    string
	}{
		{"1.18.33", []string{"1.18.33"}, versionVerified},
		{"1.18.34", []string{"1.18.33"}, versionNewer},
		{"1.19.0", []string{"1.18.33"}, versionNewer},
		{"2.0.0", []string{"1.18.33"}, versionNewer},
		{"1.18.9", []string{"1.18.33"}, versionOther},
		{"1.18.32", []string{"1.18.33"}, versionOther},
		{"0.155.0", []string{"0.154.0", "0.155.1"}, versionOther},
		{"0.156.0", []string{"0.154.0", "0.155.1"}, versionNewer},
		{"2026.10.02", []string{"2026.09.02", "2026.10.01"}, versionNewer},
		{"2026.10.01", []string{"2026.09.02", "2026.10.01"}, versionVerified},
		{"1.2", []string{"1.1.0"}, versionOther},
		{"1.2.3", nil, versionOther},
	} {
		require.Equal(t, tc.want, verifyVersion(tc.version, tc.known), "%s against %v", tc.version, tc.known)
	}
}

// TestDoctorSaysNotVerified: with --probe against the simulated opencode,
// a banner newer than every known version (2.0.27 against 1.18.33) is
// "not verified: newer than every verified version", an older unlisted one
// (1.18.32) "not among the verified versions", both with the list, in the
// text and the JSON (known stays false, knownVersions stays the list).
// Without --sheet/--role the opencode probe is still prepared (with the
// subscription mode's model, said in the evidence) and runs to its
// configuration check.
func TestDoctorSaysNotVerified(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		scenario, version, verification, text string
	}{
		{"v2-success", "2.0.27", versionNewer, "(2.0.27, not verified: newer than every verified version: 1.18.33)"},
		{"success", "1.18.32", versionOther, "(1.18.32, not verified: not among the verified versions: 1.18.33)"},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			t.Parallel()
			s := newEngineSandbox(t, map[string]string{"opencode": tc.scenario}, doctorSheet)
			out := s.doctorJSON(t, 0, nil, "--provider", "opencode", "--probe")
			oc := doctorOf(t, out, policy.OpenCode)
			require.Equal(t, tc.version, oc.Binary.Version)
			require.NotNil(t, oc.Binary.Known)
			require.False(t, *oc.Binary.Known)
			require.Equal(t, []string{"1.18.33"}, oc.Binary.KnownVersions)
			require.Equal(t, tc.verification, oc.Binary.Verification)
			require.Equal(t, "passed", oc.SignIn.State, oc.SignIn.Evidence)
			require.Contains(t, oc.SignIn.Evidence, "probed with opencode:openai/gpt-6.1-sol@default (the model of Switchyard's OpenCode ChatGPT-subscription mode")
			require.Contains(t, oc.SignIn.Evidence, "configuration verified")

			r := s.run(t, 90*time.Second, "doctor", "--data-dir", s.data, "--provider", "opencode", "--probe")
			require.Equal(t, 0, r.code, r.stderr)
			require.Contains(t, r.stdout, "binary:       "+filepath.Join(s.bin, "opencode")+" "+tc.text)
		})
	}
}

// TestDoctorProbesTheRealCLIs: `switchyard doctor --probe --json` with a
// fresh HOME and the real CLIs (testdata/realcli) first on PATH prepares
// every installed provider's probe and runs it to that provider's answer:
// none ends "cannot prepare the probe", in an error or a timeout. Codex
// answers signed out, OpenCode (no login probe) verifies its private
// configuration rendered for the model doctor names, and the pinned
// opencode is a verified version.
func TestDoctorProbesTheRealCLIs(t *testing.T) {
	t.Parallel()
	bin := realcli.BinDir(t)
	root := t.TempDir()
	home := filepath.Join(root, "home")
	require.NoError(t, os.MkdirAll(home, 0o700))
	s := &engineSandbox{dir: root, data: filepath.Join(root, "data"), bin: bin}
	s.env = []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"), "LANG=C.UTF-8"}
	var names []string
	for _, c := range realcli.All {
		if c.Name != "srt" {
			names = append(names, c.Name)
		}
	}
	out := s.doctorJSON(t, 0, nil, "--provider", strings.Join(names, ","), "--probe")
	answers := []string{"passed", "signed_in", "signed_out", "failed", "no_probe"}
	for _, name := range names {
		d := doctorOf(t, out, policy.Provider(name))
		what := name + " " + realcli.Installed(t, name)
		require.Equal(t, filepath.Join(bin, name), d.Binary.Path, what)
		require.Equal(t, realcli.Installed(t, name), d.Binary.Version, what)
		require.NotContains(t, d.SignIn.Evidence, "cannot prepare", what)
		require.True(t, slices.Contains(answers, d.SignIn.State), "%s: sign-in %s: %s", what, d.SignIn.State, d.SignIn.Evidence)
	}
	codex := doctorOf(t, out, policy.Codex)
	require.Equal(t, "signed_out", codex.SignIn.State, codex.SignIn.Evidence)

	oc := doctorOf(t, out, policy.OpenCode)
	require.Equal(t, "passed", oc.SignIn.State, oc.SignIn.Evidence)
	require.Contains(t, oc.SignIn.Evidence, "probed with opencode:"+providers.OpenCodeChatGPTModel+"@default")
	require.Contains(t, oc.SignIn.Evidence, "opencode "+realcli.Installed(t, "opencode")+" selects the V1 contract")
	require.Contains(t, oc.SignIn.Evidence, "V1 configuration verified")
	if !realcli.Trying(t, "opencode") {
		require.Equal(t, versionVerified, oc.Binary.Verification, "the pinned opencode is a verified version")
	}
}
