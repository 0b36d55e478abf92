package providers

import (
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// preflightStatuses are the only statuses a preflight verdict may carry;
// "" is a pass.
var preflightStatuses = []policy.ReceiptStatus{"", policy.StatusUnauthenticated, policy.StatusUnavailableCLI,
	policy.StatusUnavailableModel, policy.StatusBillingPolicyBlocked}

// maxVerdictEvidence bounds a verdict's evidence: launcher-authored text,
// quoting at most a clipped CLI value, however large the probe's output.
const maxVerdictEvidence = 1000

// FuzzReadPreflight feeds arbitrary probe output (stdout, stderr, exit code
// or signal) to every provider's ReadPreflight, for each probe it runs,
// read-only or writer, spend denied or approved. It proves: reading never
// panics; the verdict's status is one a preflight may give; a retry is only
// asked for a sign-in failure; a probe that did not exit 0 never passes;
// evidence is present and bounded however large the output.
func FuzzReadPreflight(f *testing.F) {
	names := Names()
	index := map[policy.Provider]uint8{}
	for i, p := range names {
		index[p] = uint8(i)
	}
	openCode := baseRequest(policy.OpenCode)
	config, err := openCodeV1Config(openCode)
	require.NoError(f, err)
	seeds := []struct {
		p      policy.Provider
		probe  uint8
		stdout string
		stderr string
		exit   int
	}{
		{policy.Claude, 0, "2.1.285 (Claude Code)\n", "", 0},
		{policy.Claude, 0, "2.2.0-beta.1 (Claude Code)\n", "", 0},
		{policy.Codex, 0, "", "Logged in using ChatGPT\n", 0},
		{policy.Codex, 0, "", "Logged in using an API key - sk-proj-***ABCDE\n", 0},
		{policy.Codex, 0, "", "Not logged in\n", 1},
		{policy.Grok, 0, "Logged in as dev@example.com\nAvailable models:\n  grok-4.7\n  grok-4.7-fast\n", "", 0},
		{policy.Grok, 0, "Not logged in. Run grok interactively to authenticate.\n", "", 1},
		{policy.Devin, 0, "Devin CLI\nLogged in\n", "", 0},
		{policy.Cursor, 0, "{\n  \"status\": \"authenticated\",\n  \"isAuthenticated\": true\n}\n", "", 0},
		{policy.Cursor, 0, `{"isAuthenticated":"true"}`, "", 0},
		{policy.Antigravity, 0, "gemini-3.1-flash  Gemini 3.1 Flash\ngemini-3.1-pro-high  Gemini 3.1 Pro (High)\n", "", 0},
		{policy.Antigravity, 0, "", "Error: not authenticated\n", 1},
		{policy.OpenCode, 0, "opencode v1.18.40\n", "", 0},
		{policy.OpenCode, 0, "opencode v2.0.27\n", "", 0},
		{policy.OpenCode, 1, string(config), "", 0},
		{policy.OpenCode, 1, string(config) + string(config), "", 0},
		{policy.OpenCode, 1, string(config) + " ]", "", 0},
		{policy.Gemini, 0, "0.6.1\n", "", 0},
		{policy.Gemini, 0, "", "node: not found\n", -1},
	}
	for _, s := range seeds {
		for _, flags := range []uint8{0, 1, 2, 7} {
			f.Add(index[s.p], s.probe, flags, []byte(s.stdout), []byte(s.stderr), s.exit)
		}
	}
	f.Fuzz(func(t *testing.T, provider, probe, flags uint8, stdout, stderr []byte, exit int) {
		p := names[int(provider)%len(names)]
		spec, err := Lookup(p)
		require.NoError(t, err)
		req := baseRequest(p)
		if flags&1 != 0 {
			req.Mode = policy.IsolatedWrite
		}
		if flags&2 != 0 {
			req.APISpend = policy.APISpendDeny
		}
		if flags&4 != 0 {
			req.ParentEnv = map[string]string{"CURSOR_API_KEY": "key_abc"}
		}
		probes := spec.Preflight(req)
		n := int(probe) % (len(probes) + 1) // one past the last: an unknown probe
		c := Capture{Stdout: stdout, Stderr: stderr}
		if exit < 0 {
			c.Signal = "SIGKILL"
		} else {
			c.ExitCode = &exit
		}
		v := spec.ReadPreflight(req, n, c)
		require.Contains(t, preflightStatuses, v.Status, "evidence: %s", v.Evidence)
		require.NotEmpty(t, v.Evidence)
		require.LessOrEqual(t, len(v.Evidence), maxVerdictEvidence, "evidence is launcher-authored and bounded")
		if v.Retry {
			require.Equal(t, policy.StatusUnauthenticated, v.Status, "only a sign-in failure is retried")
		}
		if v.Status == "" {
			require.True(t, exited0(c), "a probe that did not exit 0 passed: %s", v.Evidence)
			require.Less(t, n, len(probes), "an unknown probe passed")
		}
	})
}

// FuzzParseVersion feeds arbitrary `--version` output to every version
// reader (ParseVersion, Claude's, OpenCode's banner, the bare readers). It
// proves: none panics; every refusal wraps ErrVersion; an accepted version
// is exactly the text it was read from, and a banner's contract follows its
// major version.
func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"1.2.3", "0.6.1\n", "2.1.285 (Claude Code)\n", "2.1.285 (Claude Code)\r\n",
		"opencode v1.18.40\n", "opencode v2.0.27", "1.18.28", "3.0.0", "01.2.3", "1.2.3-beta", "1.2.3+b",
		"v1.2.3", " 1.2.3", "1.2", "1.2.3.4", "1..3", "999999999.0.0", "1000000000.0.0", "1.2.3\n\n",
		"ƒ.2.3", "1.2.٣", "2026.10.01-0a1b2c3\n", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out string) {
		check := func(v Version, err error, text string) {
			t.Helper()
			if err != nil {
				require.ErrorIs(t, err, ErrVersion)
				return
			}
			require.Equal(t, text, v.String(), "an accepted version is its own text")
		}
		v, err := ParseVersion(out)
		check(v, err, out)

		line := strings.TrimSuffix(strings.TrimSuffix(out, "\n"), "\r")
		v, err = parseBareVersion(out)
		check(v, err, line)
		v, err = parseClaudeVersion(out)
		check(v, err, strings.TrimSuffix(line, " (Claude Code)"))

		v, contract, err := ParseOpenCodeBanner(out)
		if err != nil {
			require.ErrorIs(t, err, ErrVersion)
			require.Zero(t, contract)
			return
		}
		require.Equal(t, strings.TrimPrefix(line, "opencode v"), v.String())
		switch contract {
		case OpenCodeV1:
			require.Equal(t, 1, v.Major)
			require.True(t, v.AtLeast(openCodeV1Floor))
		case OpenCodeV2:
			require.Equal(t, 2, v.Major)
		default:
			t.Fatalf("contract %d", contract)
		}
	})
}

// FuzzDecodeOrdered feeds arbitrary bytes to decodeOrdered, which reads
// `opencode debug config` output to compare with the private
// configuration. It proves: decoding never panics (nor overflows the stack);
// what it accepts is exactly one JSON value, which re-renders (members,
// duplicates and order kept) to bytes that decode and render the same.
func FuzzDecodeOrdered(f *testing.F) {
	config, err := openCodeV1Config(baseRequest(policy.OpenCode))
	require.NoError(f, err)
	for _, s := range []string{string(config), string(config) + string(config), "{} x", "{}}", "[] ]", " {\"a\":1,\"a\":2}\n",
		"[1,[2,[3,{\"b\":null}]]]", "\"s\"", "1e400", "", "  ", strings.Repeat("[", 64)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeOrdered(b)
		if err != nil {
			require.Nil(t, v)
			return
		}
		require.True(t, json.Valid(b), "accepted %q, which is not one JSON value", b)
		out, err := json.Marshal(v)
		require.NoError(t, err)
		again, err := decodeOrdered(out)
		require.NoError(t, err, "re-decode %s", out)
		twice, err := json.Marshal(again)
		require.NoError(t, err)
		require.Equal(t, string(out), string(twice), "rendering is a fixed point: members and their order are kept")
	})
}

// TestDecodeOrderedRefusesDeepNesting proves output nested past
// maxOrderedDepth is refused with an error instead of recursing: before the
// limit, 8 MiB of "[" from a broken or hostile CLI overflowed the runner's
// stack (a fatal error no recover can catch).
func TestDecodeOrderedRefusesDeepNesting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   string
		ok   bool
	}{
		{"at the limit", strings.Repeat("[", maxOrderedDepth) + strings.Repeat("]", maxOrderedDepth), true},
		{"one past the limit", strings.Repeat("[", maxOrderedDepth+1) + strings.Repeat("]", maxOrderedDepth+1), false},
		{"8 MiB of open arrays", strings.Repeat("[", 8<<20), false},
		{"8 MiB of open objects", strings.Repeat(`{"a":`, 8<<20/5), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := decodeOrdered([]byte(tc.in))
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
		})
	}
}

// FuzzUserProviderConfig feeds arbitrary bytes as the user's Cursor
// configuration and Antigravity settings, which the runner reads before an
// attempt. It proves: neither reader panics; Cursor's refusal wraps
// ErrUserConfig and a setting is only returned from a JSON object holding a
// boolean network.useHttp1ForAgent; Antigravity names only the settings
// file or a routing key.
func FuzzUserProviderConfig(f *testing.F) {
	for _, s := range []string{contractUserCursorConfig, `{}`, `{"network":null}`, `{"network":{"useHttp1ForAgent":"yes"}}`,
		`{"network":[]}`, `[]`, `null`, `{"modelProvider":"x"}`, `{"a":[{"modelConfigOverrides":{}}]}`, `{`, ``} {
		f.Add([]byte(s))
	}
	req := baseRequest(policy.Cursor)
	req.Home = "/home/dev"
	f.Fuzz(func(t *testing.T, b []byte) {
		read := func(string) ([]byte, error) { return b, nil }
		http1, err := cursorUserHTTP1(req, read)
		if err != nil {
			require.ErrorIs(t, err, ErrUserConfig)
			require.Nil(t, http1)
		} else if http1 != nil {
			var doc struct {
				Network struct {
					UseHTTP1ForAgent *bool `json:"useHttp1ForAgent"`
				} `json:"network"`
			}
			require.NoError(t, json.Unmarshal(b, &doc))
			require.NotNil(t, doc.Network.UseHTTP1ForAgent)
		}
		for _, name := range antigravitySettingsNames(req, read) {
			require.True(t, strings.HasPrefix(name, "~/"+antigravitySettings), "%q", name)
		}
		missing := func(string) ([]byte, error) { return nil, fs.ErrNotExist }
		http1, err = cursorUserHTTP1(req, missing)
		require.NoError(t, err)
		require.Nil(t, http1)
		require.Empty(t, antigravitySettingsNames(req, missing))
		_, err = cursorUserHTTP1(req, func(string) ([]byte, error) { return nil, errors.New("EIO") })
		require.ErrorIs(t, err, ErrUserConfig)
	})
}
