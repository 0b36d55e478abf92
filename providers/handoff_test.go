package providers

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

const validHandoffJSON = `{"task":"issue-57","checkpoint":"cp-1","operation":"commit-checkpoint","files":["providers/classify.go","docs/a.md"],"checks":["go test ./providers"],"summary":"commit the checkpoint"}`

func TestParseHandoff(t *testing.T) {
	t.Parallel()
	block := func(payload string) string { return "```pstack-handoff\n" + payload + "\n```" }
	tests := []struct {
		name    string
		final   string
		present bool
		err     string // substring; "" when valid or absent
		check   func(t *testing.T, h *policy.ReceiptHandoff)
	}{
		{name: "ordinary response", final: "Edited the parser and ran the tests."},
		{name: "empty response", final: ""},
		{name: "other fences", final: "Run:\n```sh\ngo test ./...\n```\n"},
		{name: "similar word is not a marker", final: "```pstack-handoffs\n{}\n```"},
		{name: "valid block ends the response", final: "Work preserved.\n" + block(validHandoffJSON), present: true,
			check: func(t *testing.T, h *policy.ReceiptHandoff) {
				require.Equal(t, policy.ReceiptHandoff{Task: "issue-57", Checkpoint: "cp-1", Operation: policy.OpCommitCheckpoint,
					Files: []string{"providers/classify.go", "docs/a.md"}, Checks: []string{"go test ./providers"},
					Summary: "commit the checkpoint"}, *h)
			}},
		{name: "block alone with trailing whitespace", final: block(validHandoffJSON) + "\n\n  \n", present: true},
		{name: "pretty-printed payload and CRLF", final: "Done.\r\n```pstack-handoff  \r\n{\r\n  \"task\": \"t\",\r\n  \"checkpoint\": \"c\",\r\n  \"operation\": \"run-checks\",\r\n  \"files\": [],\r\n  \"checks\": [],\r\n  \"summary\": \"run the checks\"\r\n}\r\n```\r\n", present: true,
			check: func(t *testing.T, h *policy.ReceiptHandoff) {
				require.Equal(t, policy.OpRunChecks, h.Operation)
				require.NotNil(t, h.Files)
				require.Empty(t, h.Files)
				require.NotNil(t, h.Checks)
			}},
		{name: "repeated", final: block(validHandoffJSON) + "\n" + block(validHandoffJSON), present: true, err: "2 pstack-handoff markers"},
		{name: "quoted marker before a block", final: "I will end with ```pstack-handoff as asked.\n" + block(validHandoffJSON), present: true, err: "2 pstack-handoff markers"},
		{name: "marker mid-line", final: "see ```pstack-handoff\n" + validHandoffJSON + "\n```", present: true, err: "does not start a line"},
		{name: "truncated after the fence", final: "Done.\n```pstack-handoff", present: true, err: "truncated after its fence"},
		{name: "truncated payload", final: "Done.\n```pstack-handoff\n{\"task\":\"t\",", present: true, err: "no closing fence"},
		{name: "text after the block", final: block(validHandoffJSON) + "\nThanks!", present: true, err: "does not end the final response"},
		{name: "info string suffix", final: "```pstack-handoff-v2\n" + validHandoffJSON + "\n```", present: true, err: "extra text"},
		{name: "not JSON", final: block("nope"), present: true, err: "not JSON"},
		{name: "array payload", final: block("[]"), present: true, err: "not a JSON object"},
		{name: "unknown key", final: block(strings.Replace(validHandoffJSON, `"summary"`, `"command":"rm -rf /","summary"`, 1)), present: true, err: `unknown member "command"`},
		{name: "duplicate key", final: block(strings.Replace(validHandoffJSON, `"summary"`, `"task":"again","summary"`, 1)), present: true, err: `duplicate member "task"`},
		{name: "trailing data", final: block(validHandoffJSON + " {}"), present: true, err: "trailing data"},
		{name: "missing key", final: block(`{"task":"t","checkpoint":"c","operation":"run-checks","files":[],"checks":[]}`), present: true, err: `missing "summary"`},
		{name: "wrong case key", final: block(strings.Replace(validHandoffJSON, `"task"`, `"Task"`, 1)), present: true, err: `unknown member "Task"`},
		{name: "bad operation", final: block(strings.Replace(validHandoffJSON, "commit-checkpoint", "push", 1)), present: true, err: `"operation" must be`},
		{name: "blank task", final: block(strings.Replace(validHandoffJSON, `"issue-57"`, `"  "`, 1)), present: true, err: `"task" must be non-blank`},
		{name: "task not a string", final: block(strings.Replace(validHandoffJSON, `"issue-57"`, `57`, 1)), present: true, err: `"task" must be a string`},
		{name: "overlong summary", final: block(strings.Replace(validHandoffJSON, `"commit the checkpoint"`, `"`+strings.Repeat("s", 1001)+`"`, 1)), present: true, err: "at most 1000"},
		{name: "files null", final: block(strings.Replace(validHandoffJSON, `["providers/classify.go","docs/a.md"]`, `null`, 1)), present: true, err: `"files" must be an array`},
		{name: "files not strings", final: block(strings.Replace(validHandoffJSON, `["providers/classify.go","docs/a.md"]`, `[1]`, 1)), present: true, err: `"files" must be an array`},
		{name: "absolute file", final: block(strings.Replace(validHandoffJSON, `"docs/a.md"`, `"/etc/passwd"`, 1)), present: true, err: "not a repository-relative path"},
		{name: "traversing file", final: block(strings.Replace(validHandoffJSON, `"docs/a.md"`, `"docs/../../x"`, 1)), present: true, err: "not a repository-relative path"},
		{name: "git metadata file", final: block(strings.Replace(validHandoffJSON, `"docs/a.md"`, `".git/config"`, 1)), present: true, err: "not a repository-relative path"},
		{name: "option-like file", final: block(strings.Replace(validHandoffJSON, `"docs/a.md"`, `"--force"`, 1)), present: true, err: "not a repository-relative path"},
		{name: "drive path", final: block(strings.Replace(validHandoffJSON, `"docs/a.md"`, `"C:/x"`, 1)), present: true, err: "not a repository-relative path"},
		{name: "backslash path", final: block(strings.Replace(validHandoffJSON, `"docs/a.md"`, `"docs\\a.md"`, 1)), present: true, err: "not a repository-relative path"},
		{name: "multi-line check", final: block(strings.Replace(validHandoffJSON, `"go test ./providers"`, `"go test\nrm -rf /"`, 1)), present: true, err: `"checks" entries`},
		{name: "too many checks", final: block(strings.Replace(validHandoffJSON, `["go test ./providers"]`, `[`+strings.TrimSuffix(strings.Repeat(`"c",`, 51), ",")+`]`, 1)), present: true, err: "more than 50"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, present, err := ParseHandoff(tc.final)
			require.Equal(t, tc.present, present)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				require.Nil(t, h)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.present, h != nil)
			if tc.check != nil {
				tc.check(t, h)
			}
		})
	}
}

func FuzzParseHandoff(f *testing.F) {
	f.Add("")
	f.Add("Done.\n```pstack-handoff\n" + validHandoffJSON + "\n```\n")
	f.Add("```pstack-handoff\n{\"operation\":\"rm -rf /\"}\n```")
	f.Add("```pstack-handoff")
	f.Add("a ```pstack-handoff b\n```pstack-handoff\n{}\n```")
	for _, name := range []string{"handoff", "handoff-malformed"} {
		req := testRequest(policy.Claude, "opus", policy.ReadOnly)
		c := fixtureCapture(f, policy.Claude, req, name, 0)
		f.Add(parseClaude(req, c).FinalText)
	}
	f.Fuzz(func(t *testing.T, final string) {
		h, present, err := ParseHandoff(final)
		if !present {
			require.Nil(t, h)
			require.NoError(t, err)
			require.NotContains(t, final, handoffFence+"\n")
			return
		}
		if err != nil {
			require.Nil(t, h)
			return
		}
		require.NotNil(t, h)
		require.True(t, h.Operation == policy.OpCommitCheckpoint || h.Operation == policy.OpRunChecks)
		require.NotEmpty(t, strings.TrimSpace(h.Task))
		require.NotEmpty(t, strings.TrimSpace(h.Checkpoint))
		require.NotEmpty(t, strings.TrimSpace(h.Summary))
		require.NotNil(t, h.Files)
		require.NotNil(t, h.Checks)
		require.Len(t, handoffMarkers(final), 1)
		for _, p := range h.Files {
			require.True(t, relativeRepoPath(p))
		}
	})
}
