package providers

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// lastLine is an error message's final line.
func lastLine(err error) string {
	lines := strings.Split(err.Error(), "\n")
	return lines[len(lines)-1]
}

func TestLookupUnknownProviderIsTyped(t *testing.T) {
	t.Parallel()
	_, err := Lookup("copilot")
	var unknown *UnknownProviderError
	require.ErrorAs(t, err, &unknown)
	require.Equal(t, policy.Provider("copilot"), unknown.Provider)
	require.Equal(t, Names(), unknown.Known)
	require.Equal(t, "fix: use one of: claude, codex, grok, devin, cursor, antigravity, opencode, gemini", lastLine(err))
}

func TestDiscoverBinaryOverride(t *testing.T) {
	t.Parallel()
	codex := mustLookup(t, policy.Codex)
	pathDir, pinDir := t.TempDir(), t.TempDir()
	onPath := writeExec(t, pathDir, "codex", 0o755)
	pinned := writeExec(t, pinDir, "codex-0.155.1", 0o755)
	plain := writeExec(t, pinDir, "not-exec", 0o644)

	got, err := Discover(codex, map[string]string{"PATH": pathDir})
	require.NoError(t, err)
	require.Equal(t, onPath, got, "no override: PATH")

	got, err = Discover(codex, map[string]string{"PATH": pathDir, "SWITCHYARD_CODEX_BIN": pinned})
	require.NoError(t, err)
	require.Equal(t, pinned, got, "the override wins over PATH")

	got, err = Discover(codex, map[string]string{"SWITCHYARD_CODEX_BIN": pinned})
	require.NoError(t, err)
	require.Equal(t, pinned, got, "the override needs no PATH")

	_, err = Discover(mustLookup(t, policy.Claude), map[string]string{"SWITCHYARD_CODEX_BIN": pinned})
	require.Error(t, err, "another provider's override is not used")

	bad := map[string]string{
		"":                               "it is empty",
		"rel/pinned-cli":                 "it is not an absolute path",
		filepath.Join(pinDir, "missing"): "it does not exist or cannot be read",
		pinDir:                           "it is not a regular file",
		plain:                            "it is not executable",
	}
	for value, reason := range bad {
		_, err := Discover(codex, map[string]string{"PATH": pathDir, "SWITCHYARD_CODEX_BIN": value})
		var nf *BinaryNotFoundError
		require.ErrorAs(t, err, &nf, value)
		require.ErrorIs(t, err, ErrBinaryNotFound)
		require.True(t, nf.Override)
		require.Equal(t, reason, nf.Reason)
		require.Contains(t, err.Error(), "SWITCHYARD_CODEX_BIN is unusable: "+reason)
		if value != "" {
			require.NotContains(t, err.Error(), value, "the variable's value never reaches the message")
		}
		require.Equal(t, "fix: set SWITCHYARD_CODEX_BIN to the absolute path of an executable codex CLI, or unset it to search PATH", lastLine(err))
	}
}

func TestBinaryNotFoundFixLines(t *testing.T) {
	t.Parallel()
	want := map[policy.Provider]string{
		policy.Codex:  "fix: install the Codex CLI (npm i -g @openai/codex) or set SWITCHYARD_CODEX_BIN=/path/to/codex",
		policy.Claude: "fix: install Claude Code (npm i -g @anthropic-ai/claude-code) or set SWITCHYARD_CLAUDE_BIN=/path/to/claude",
		policy.Cursor: "fix: install the Cursor CLI (curl https://cursor.com/install -fsS | bash) or set SWITCHYARD_CURSOR_BIN=/path/to/cursor-agent",
	}
	for _, p := range Names() {
		_, err := Discover(mustLookup(t, p), map[string]string{"PATH": t.TempDir()})
		var nf *BinaryNotFoundError
		require.ErrorAs(t, err, &nf)
		require.False(t, nf.Override)
		require.True(t, strings.HasPrefix(lastLine(err), "fix: install "), "%s: %s", p, lastLine(err))
		require.Contains(t, lastLine(err), " or set SWITCHYARD_"+strings.ToUpper(string(p))+"_BIN=/path/to/")
		if w, ok := want[p]; ok {
			require.Equal(t, w, lastLine(err))
		}
	}
}

func TestUnsupportedVersionIsTyped(t *testing.T) {
	t.Parallel()
	for _, banner := range []string{"1.18.28\n", "3.0.0\n"} {
		_, _, err := ParseOpenCodeBanner(banner)
		var uv *UnsupportedVersionError
		require.ErrorAs(t, err, &uv, banner)
		require.ErrorIs(t, err, ErrVersion)
		require.Equal(t, policy.OpenCode, uv.Provider)
		require.Equal(t, strings.TrimSpace(banner), uv.Version)
		require.Equal(t, "fix: install OpenCode (npm i -g opencode-ai) at a supported version, or set SWITCHYARD_OPENCODE_BIN to a supported binary", lastLine(err))
	}
	_, _, err := ParseOpenCodeBanner("1.2.3-beta\n")
	require.False(t, errors.As(err, new(*UnsupportedVersionError)), "a malformed banner is not a version verdict")
}

// TestContainmentPerMode pins each spec's classes: only what a provider's
// invocation flags verifiably enforce is verified; everything else is
// UNVERIFIED with a reason.
func TestContainmentPerMode(t *testing.T) {
	t.Parallel()
	verified := map[policy.Provider][2]bool{ // read-only, isolated-write
		policy.Codex:  {true, true},
		policy.Claude: {false, true},
	}
	for _, p := range Names() {
		spec := mustLookup(t, p)
		require.Len(t, spec.Containment, 2, p)
		for i, mode := range []policy.Access{policy.ReadOnly, policy.IsolatedWrite} {
			c := ContainmentFor(spec, mode)
			require.NotEmpty(t, c.Reason, "%s %s names its reason", p, mode)
			err := CheckContainment(spec, mode)
			if verified[p][i] {
				require.NoError(t, err, "%s %s", p, mode)
				require.Equal(t, RequiredContainment(mode), c.Class)
				continue
			}
			require.Equal(t, ContainmentUnverified, c.Class, "%s %s", p, mode)
			var cu *ContainmentUnverifiedError
			require.ErrorAs(t, err, &cu)
			require.Equal(t, mode, cu.Mode)
			require.Equal(t, "fix: pass --allow-unverified-containment "+string(p)+" to accept an unrestricted "+string(mode)+
				" attempt, or route it to a provider with "+string(RequiredContainment(mode))+" containment", lastLine(err))
		}
	}
	require.Equal(t, ContainmentUnverified, ContainmentFor(&Spec{}, policy.ReadOnly).Class, "an absent mode is UNVERIFIED")
	require.True(t, strings.Contains(ContainmentFor(mustLookup(t, policy.Gemini), policy.IsolatedWrite).Reason, "without --sandbox"))
}

// TestResolve: one lookup answers the first problem of an attempt as a
// typed error, in order: unknown provider, unverified containment (unless
// allowed), missing binary.
func TestResolve(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	grok := writeExec(t, dir, "grok", 0o755)
	env := map[string]string{"PATH": dir}

	_, _, err := Resolve("gpt", policy.ReadOnly, env, false)
	require.ErrorAs(t, err, new(*UnknownProviderError))

	_, _, err = Resolve(policy.Grok, policy.IsolatedWrite, env, false)
	var cu *ContainmentUnverifiedError
	require.ErrorAs(t, err, &cu)
	require.Equal(t, ContainmentWorkspaceWriteNoNetwork, cu.Required)

	spec, exe, err := Resolve(policy.Grok, policy.IsolatedWrite, env, true)
	require.NoError(t, err)
	require.Equal(t, policy.Grok, spec.Provider)
	require.Equal(t, grok, exe)

	_, _, err = Resolve(policy.Codex, policy.IsolatedWrite, env, false)
	require.ErrorAs(t, err, new(*BinaryNotFoundError), "codex's containment is verified; its binary is missing")
}
