package providers

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// Transcript fixtures live in testdata/parse/<provider>/<name>.stdout,
// <name>.stderr and, for Devin, <name>.export.json (the ATIF export). They
// are written from PROVIDER-PROTOCOLS.md's observed lines and RUNNER.md's
// rules; a missing stream is empty.

// testReceipt is the receipt path every fixture request uses (Antigravity
// fixtures name the agent derived from it).
const testReceipt = "/work/lane/receipt.json"

// signalled marks a row whose child was ended by a signal.
const signalled = -1

// parseCase is one transcript row: the fixture, how the child exited and
// what parsing plus classification must conclude.
type parseCase struct {
	name    string
	fixture string // defaults to name
	exit    int
	model   string        // requested model; defaults to the provider's
	mode    policy.Access // defaults to read-only

	status   policy.ReceiptStatus
	quota    string
	success  bool   // Parsed.TerminalSuccess
	final    string // substring of the final response; "" means none expected
	session  string
	reported string // Classification.ReportedModel; "" means nil
	verified bool
	evidence policy.ModelEvidence // "" means nil
	protocol string               // substring of Parsed.ProtocolError
	terminal string               // substring of Parsed.TerminalError
	denial   string               // ToolDenial evidence code
	check    func(t *testing.T, p Parsed, c Classification)
}

func testRequest(provider policy.Provider, model string, mode policy.Access) Request {
	if mode == "" {
		mode = policy.ReadOnly
	}
	return Request{
		Parent:   policy.ParentClaude,
		Provider: provider,
		Model:    model,
		CLIModel: model,
		Effort:   policy.EffortHigh,
		Mode:     mode,
		Cwd:      "/work/repo",
		Output:   "/work/lane/output.md",
		Receipt:  testReceipt,
	}
}

// readFixture returns a fixture file, nil when it does not exist.
func readFixture(t testing.TB, provider policy.Provider, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "parse", string(provider), file))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	return b
}

func fixtureCapture(t testing.TB, provider policy.Provider, req Request, name string, exit int) Capture {
	t.Helper()
	c := Capture{
		Stdout: readFixture(t, provider, name+".stdout"),
		Stderr: readFixture(t, provider, name+".stderr"),
		Files:  map[string][]byte{},
	}
	if export := readFixture(t, provider, name+".export.json"); export != nil {
		c.Files[devinExportPath(req)] = export
	}
	require.True(t, c.Stdout != nil || c.Stderr != nil || len(c.Files) > 0, "fixture %s/%s has no files", provider, name)
	if exit == signalled {
		c.Signal = "SIGKILL"
	} else {
		code := exit
		c.ExitCode = &code
	}
	return c
}

func runParseCases(t *testing.T, provider policy.Provider, defaultModel string, parse func(Request, Capture) Parsed, cases []parseCase) {
	t.Helper()
	spec := &Spec{Provider: provider, Parse: parse}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			model := tc.model
			if model == "" {
				model = defaultModel
			}
			fixture := tc.fixture
			if fixture == "" {
				fixture = tc.name
			}
			req := testRequest(provider, model, tc.mode)
			c := fixtureCapture(t, provider, req, fixture, tc.exit)
			p := parse(req, c)
			got := Classify(spec, req, c, p)

			require.Equal(t, tc.status, got.Status, "status; error: %+v", got.Error)
			require.Equal(t, tc.quota, got.QuotaCode, "quota code")
			require.Equal(t, tc.success, p.TerminalSuccess, "terminal success")
			if tc.final == "" {
				require.Empty(t, p.FinalText, "final text")
			} else {
				require.Contains(t, p.FinalText, tc.final)
			}
			if tc.session != "" {
				require.NotNil(t, p.SessionID)
				require.Equal(t, tc.session, *p.SessionID)
			}
			if tc.reported == "" {
				require.Nil(t, got.ReportedModel, "reported model")
			} else {
				require.NotNil(t, got.ReportedModel, "reported model")
				require.Equal(t, tc.reported, *got.ReportedModel)
			}
			require.Equal(t, tc.verified, got.ModelVerified, "model verified")
			if tc.evidence == "" {
				require.Nil(t, got.ModelEvidence)
			} else {
				require.NotNil(t, got.ModelEvidence)
				require.Equal(t, tc.evidence, *got.ModelEvidence)
			}
			if tc.protocol == "" {
				require.NoError(t, p.ProtocolError)
			} else {
				require.ErrorContains(t, p.ProtocolError, tc.protocol)
			}
			if tc.terminal == "" {
				require.Empty(t, p.TerminalError)
			} else {
				require.Contains(t, p.TerminalError, tc.terminal)
			}
			if tc.denial == "" {
				require.Nil(t, p.ToolDenial)
			} else {
				require.NotNil(t, p.ToolDenial)
				require.Equal(t, tc.denial, p.ToolDenial.Evidence) // rows assert Verified and Cause
			}
			requireClassificationShape(t, got)
			requireParsedCaps(t, p)
			if tc.check != nil {
				tc.check(t, p, got)
			}
		})
	}
}

// requireClassificationShape checks the invariants every classification
// keeps, whatever the input.
func requireClassificationShape(t testing.TB, c Classification) {
	t.Helper()
	require.True(t, c.Status.Valid(), "status %q", c.Status)
	switch c.Status {
	case policy.StatusComplete, policy.StatusNeedsParentOperation:
		require.Nil(t, c.Error)
		require.Empty(t, c.Phase)
		require.Nil(t, c.TerminalSuccess)
		require.NotNil(t, c.ModelEvidence)
		require.Equal(t, c.Status == policy.StatusNeedsParentOperation, c.Handoff != nil)
	default:
		require.NotNil(t, c.Error)
		require.NotEmpty(t, c.Phase)
		require.LessOrEqual(t, runeLen(c.Error.Message), FieldCap)
		require.LessOrEqual(t, runeLen(c.Error.Evidence), EvidenceCap)
		require.NotEmpty(t, strings.TrimSpace(c.Error.Evidence))
		require.Nil(t, c.Handoff)
		require.False(t, c.ModelVerified)
	}
	require.Equal(t, c.Status == policy.StatusUsageExhausted, c.QuotaCode != "")
	if c.HandoffMalformed {
		require.Equal(t, policy.StatusMalformedOutput, c.Status)
	}
}

// requireParsedCaps checks what a parser may return for any input.
func requireParsedCaps(t testing.TB, p Parsed) {
	t.Helper()
	require.LessOrEqual(t, runeLen(p.TerminalError), FieldCap)
	require.GreaterOrEqual(t, p.Events, 0)
	require.GreaterOrEqual(t, p.Lines, 0)
	for _, s := range []*string{p.SessionID, p.ReportedModel} {
		if s != nil {
			require.NotEmpty(t, strings.TrimSpace(*s))
			require.LessOrEqual(t, runeLen(*s), FieldCap)
		}
	}
	if p.ProtocolError != nil {
		require.Empty(t, p.FinalText, "a rejected output delivers no final text")
	}
	if p.ToolDenial != nil {
		require.False(t, p.TerminalSuccess, "a delivered run records no denial")
	}
}

// fixtureSeeds lists a provider's fixture names.
func fixtureSeeds(t testing.TB, provider policy.Provider) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("testdata", "parse", string(provider)))
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		for _, ext := range []string{".stdout", ".stderr", ".export.json"} {
			if base, ok := strings.CutSuffix(name, ext); ok {
				seen[base] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	require.NotEmpty(t, out)
	return out
}

// fuzzParser seeds a fuzz target from a provider's fixtures (run in plain
// go test) and checks that parsing and classification never panic and
// keep their caps.
func fuzzParser(f *testing.F, provider policy.Provider, model string, parse func(Request, Capture) Parsed) {
	for _, name := range fixtureSeeds(f, provider) {
		req := testRequest(provider, model, policy.ReadOnly)
		for _, exit := range []int{0, 1} {
			c := fixtureCapture(f, provider, req, name, exit)
			f.Add(c.Stdout, c.Stderr, c.Files[devinExportPath(req)], exit)
		}
	}
	spec := &Spec{Provider: provider, Parse: parse}
	f.Fuzz(func(t *testing.T, stdout, stderr, export []byte, exit int) {
		req := testRequest(provider, model, policy.ReadOnly)
		c := Capture{Stdout: stdout, Stderr: stderr, Files: map[string][]byte{devinExportPath(req): export}}
		if exit < 0 {
			c.Signal = "SIGTERM"
		} else {
			c.ExitCode = &exit
		}
		p := parse(req, c)
		requireParsedCaps(t, p)
		got := Classify(spec, req, c, p)
		requireClassificationShape(t, got)
		if got.Status == policy.StatusComplete || got.Status == policy.StatusNeedsParentOperation {
			require.NotEmpty(t, strings.TrimSpace(p.FinalText))
			require.True(t, p.TerminalSuccess)
			require.Equal(t, 0, exit)
		}
		for _, f := range TerminalFields(spec, req, c) {
			require.LessOrEqual(t, runeLen(f.Value), FieldCap)
		}
	})
}
