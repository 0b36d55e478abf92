package runner

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// RunnerUsage is the help of `switchyard runner`, printed for --help and
// after every usage error.
const RunnerUsage = `Usage: switchyard runner --parent P --provider P --model M --effort E --mode M
         --prompt F --cwd D --output F --receipt F
         [--execution-id ID] [--timeout SECONDS] [--api-spend deny|approved]
         [--contract legacy|strict] [--progress F] [--stall-timeout D] [--allow-unverified-containment]
         [--opencode-chatgpt-subscription]
       switchyard runner status --progress F --receipt F [--progress F --receipt F ...] [--json]

Launch one provider CLI attempt under the billing and containment guard and
write a schema 2 receipt. The prompt file is prefixed with the worker
contract and sent to the CLI without a shell; the model is invoked exactly
once and never retried.

Options:
  --parent P         the parent harness: claude or codex
  --provider P       claude, codex, grok, devin, cursor, antigravity, opencode or gemini
  --model M          the real CLI model, as on the descriptor
  --effort E         low, medium, high, xhigh, max or default
  --mode M           read-only or isolated-write
  --prompt F         the task prompt file
  --cwd D            the repository or dedicated worktree the CLI runs in
  --output F         the final-response file; must not exist
  --receipt F        the receipt file; must not exist
  --execution-id ID  the parent-assigned execution id; default the receipt path
  --timeout SECONDS  one absolute deadline from runner entry; default none
  --api-spend S      deny or approved (antigravity requires it, opencode
                     requires approved); omitted means legacy
  --contract C       legacy (default) or strict (always unsupported: exit 79)
  --progress F       lifecycle snapshot file; must not exist
  --stall-timeout D  end the attempt timed-out (response_stalled) when the
                     CLI's stream shows no progress for D (90s, 5m, or
                     seconds); default none: no implicit watchdog
  --allow-unverified-containment
                     run the attempt even when its mode's containment is
                     UNVERIFIED (an unrestricted contract, recorded in the
                     receipt); without it such an attempt fails closed
                     with unsupported-capability (exit 79) before any CLI
                     starts. Every CLI runs inside the Landlock sandbox,
                     verified by its self-test (Linux 6.12+); where that
                     is unverified, codex's own sandbox still verifies
                     codex (docs/GUARANTEES.md).
  --opencode-chatgpt-subscription
                     run this one opencode attempt on OpenCode's own
                     ChatGPT login: requires --provider opencode
                     --api-spend deny --model openai/gpt-6.1-sol
                     --effort default; the CLI must list exactly one
                     OpenAI OAuth connection (V2: with its credential
                     method) or the attempt is billing-policy-blocked
                     before inference
  -h, --help         show this help

Output, receipt and progress are created exclusively (mode 0600, never
through a symlink). The receipt is printed as one JSON line on stdout when
the exit code is 0, else on stderr; the receipt file gets an indented copy.

Exit codes:
  0    complete, needs-parent-operation     75   usage-exhausted
  64   usage error (no receipt)             77   unauthenticated
  65   malformed-output                     78   billing-policy-blocked
  69   unavailable-cli, unavailable-model   79   unsupported-capability
  70   child-failed                         124  timed-out
  130  cancelled (SIGINT or SIGTERM)

Examples:
  switchyard runner --parent claude --provider codex --model gpt-5.5 \
    --effort high --mode read-only --prompt /tmp/lane1/prompt.md \
    --cwd "$PWD" --output /tmp/lane1/out.md --receipt /tmp/lane1/receipt.json \
    --api-spend deny --progress /tmp/lane1/progress.json

  switchyard runner --parent claude --provider opencode \
    --model openai/gpt-6.1-sol --effort default --mode read-only \
    --api-spend deny --opencode-chatgpt-subscription \
    --prompt /tmp/lane2/prompt.md --cwd "$PWD" --output /tmp/lane2/out.md \
    --receipt /tmp/lane2/receipt.json

  switchyard runner status --progress /tmp/lane1/progress.json \
    --receipt /tmp/lane1/receipt.json --json
`

// StatusUsage is the help of `switchyard runner status`.
const StatusUsage = `Usage: switchyard runner status --progress F --receipt F [--progress F --receipt F ...] [--json]

Read lanes' progress snapshots and receipts without changing anything. Each
--progress pairs with the --receipt at the same position. A lane is terminal
only when its receipt parses; otherwise it is active, interrupted or
unknown, none of which is a failure verdict. Report a lane again only when
its changeKey changes.

Options:
  --progress F   a lane's progress file (as given to the runner)
  --receipt F    the same lane's receipt file
  --json         print {"schemaVersion":1,"lanes":[...]} instead of one line per lane
  -h, --help     show this help

Examples:
  switchyard runner status --progress a/progress.json --receipt a/receipt.json \
    --progress b/progress.json --receipt b/receipt.json
`

// flagSet describes the flags one command accepts: value flags, boolean
// flags and which value flags may repeat.
type flagSet struct {
	values   map[string]bool // name -> may repeat
	booleans map[string]bool
}

// parsedArgs holds each value flag's values in order and the booleans set.
type parsedArgs struct {
	values   map[string][]string
	booleans map[string]bool
}

// parse reads args strictly: "--name value" or "--name=value", no
// positionals, no unknown or (unless allowed) repeated flags. A separate
// value that starts with "--" counts as missing. -h or --help anywhere wins
// and returns ErrHelp.
func (fs flagSet) parse(args []string) (parsedArgs, error) {
	for _, a := range args {
		if a == "-h" || a == "--help" {
			return parsedArgs{}, ErrHelp
		}
	}
	p := parsedArgs{values: map[string][]string{}, booleans: map[string]bool{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") || a == "--" {
			return p, usagef("", "unexpected argument %q (the runner takes no positional arguments)", a)
		}
		name, value, inline := strings.Cut(a[2:], "=")
		flag := "--" + name
		if fs.booleans[name] {
			if inline {
				return p, usagef(flag, "%s takes no value", flag)
			}
			if p.booleans[name] {
				return p, usagef(flag, "%s given more than once", flag)
			}
			p.booleans[name] = true
			continue
		}
		repeat, known := fs.values[name]
		if !known {
			return p, usagef(flag, "unknown flag %s", flag)
		}
		if !inline {
			if i+1 >= len(args) || strings.HasPrefix(args[i+1], "--") {
				return p, usagef(flag, "%s requires a value", flag)
			}
			i++
			value = args[i]
		}
		if !repeat && len(p.values[name]) > 0 {
			return p, usagef(flag, "%s given more than once", flag)
		}
		p.values[name] = append(p.values[name], value)
	}
	return p, nil
}

// one returns a flag's single value and whether it was given.
func (p parsedArgs) one(name string) (string, bool) {
	v := p.values[name]
	if len(v) == 0 {
		return "", false
	}
	return v[0], true
}

var runnerFlags = flagSet{values: map[string]bool{
	"parent": false, "provider": false, "model": false, "effort": false, "mode": false,
	"prompt": false, "cwd": false, "output": false, "receipt": false,
	"execution-id": false, "timeout": false, "api-spend": false, "contract": false, "progress": false,
	"stall-timeout": false,
}, booleans: map[string]bool{"allow-unverified-containment": true, "opencode-chatgpt-subscription": true}}

// requiredRunnerFlags are checked in this order so the first missing one is
// reported.
var requiredRunnerFlags = []string{"parent", "provider", "model", "effort", "mode",
	"prompt", "cwd", "output", "receipt"}

// parseRunnerFlags parses and checks a runner command line: presence,
// closed vocabularies and the timeout. Cross-field and filesystem checks
// come later (validate, resolvePaths).
func parseRunnerFlags(args []string) (Options, error) {
	p, err := runnerFlags.parse(args)
	if err != nil {
		return Options{}, err
	}
	for _, name := range requiredRunnerFlags {
		v, ok := p.one(name)
		if !ok {
			return Options{}, usagef("--"+name, "--%s is required", name)
		}
		if strings.TrimSpace(v) == "" {
			return Options{}, usagef("--"+name, "--%s must not be empty", name)
		}
	}
	o := Options{APISpend: policy.APISpendLegacy, Contract: policy.ContractLegacy}
	v, _ := p.one("parent")
	if o.Parent = policy.Parent(v); checkParent(o.Parent) != nil {
		return o, checkParent(o.Parent)
	}
	v, _ = p.one("provider")
	if o.Provider = policy.Provider(v); checkProvider(o.Provider) != nil {
		return o, checkProvider(o.Provider)
	}
	o.Model, _ = p.one("model")
	v, _ = p.one("effort")
	if o.Effort = policy.Effort(v); checkEffort(o.Effort) != nil {
		return o, checkEffort(o.Effort)
	}
	v, _ = p.one("mode")
	if o.Mode = policy.Access(v); checkMode(o.Mode) != nil {
		return o, checkMode(o.Mode)
	}
	o.Prompt, _ = p.one("prompt")
	o.Cwd, _ = p.one("cwd")
	o.Output, _ = p.one("output")
	o.Receipt, _ = p.one("receipt")
	if v, ok := p.one("execution-id"); ok {
		if strings.TrimSpace(v) == "" {
			return o, usagef("--execution-id", "--execution-id must not be blank")
		}
		o.ExecutionID = v
	}
	if v, ok := p.one("timeout"); ok {
		if o.Timeout, err = parseTimeout(v); err != nil {
			return o, err
		}
	}
	if v, ok := p.one("stall-timeout"); ok {
		if o.StallTimeout, err = parseStallTimeout(v); err != nil {
			return o, err
		}
	}
	if v, ok := p.one("api-spend"); ok {
		if o.APISpend = policy.APISpend(v); checkAPISpend(o.APISpend) != nil {
			return o, checkAPISpend(o.APISpend)
		}
	}
	if v, ok := p.one("contract"); ok {
		if o.Contract = policy.Contract(v); checkContract(o.Contract) != nil {
			return o, checkContract(o.Contract)
		}
	}
	if v, ok := p.one("progress"); ok {
		if strings.TrimSpace(v) == "" {
			return o, usagef("--progress", "--progress must not be empty")
		}
		o.Progress = v
	}
	o.AllowUnverifiedContainment = p.booleans["allow-unverified-containment"]
	o.OpenCodeChatGPTSubscription = p.booleans["opencode-chatgpt-subscription"]
	return o, nil
}

// checkParent, checkProvider, checkEffort, checkMode, checkAPISpend and
// checkContract are the closed vocabularies of the command line and of
// Options alike, with the command line's messages.
func checkParent(v policy.Parent) error {
	switch v {
	case policy.ParentClaude, policy.ParentCodex:
		return nil
	}
	return usagef("--parent", "--parent must be claude or codex, got %q", string(v))
}

// knownProvider reports whether p has a registered spec: the sheet's
// providers and the optional ones (Gemini).
func knownProvider(p policy.Provider) bool {
	_, err := providers.Lookup(p)
	return err == nil
}

func checkProvider(v policy.Provider) error {
	if knownProvider(v) {
		return nil
	}
	return usagef("--provider", "--provider must be one of claude, codex, grok, devin, cursor, antigravity, opencode, gemini; got %q", string(v))
}

func checkEffort(v policy.Effort) error {
	if v.Valid() {
		return nil
	}
	return usagef("--effort", "--effort must be one of low, medium, high, xhigh, max, default; got %q", string(v))
}

func checkMode(v policy.Access) error {
	switch v {
	case policy.ReadOnly, policy.IsolatedWrite:
		return nil
	}
	return usagef("--mode", "--mode must be read-only or isolated-write, got %q", string(v))
}

// checkAPISpend accepts what --api-spend accepts; Options may also leave
// the spend legacy.
func checkAPISpend(v policy.APISpend) error {
	switch v {
	case policy.APISpendDeny, policy.APISpendApproved:
		return nil
	}
	return usagef("--api-spend", "--api-spend must be deny or approved, got %q", string(v))
}

func checkContract(v policy.Contract) error {
	switch v {
	case policy.ContractLegacy, policy.ContractStrict:
		return nil
	}
	return usagef("--contract", "--contract must be legacy or strict, got %q", string(v))
}

// maxTimeout keeps the deadline representable as a time.Duration.
const maxTimeout = 100 * 365 * 24 * time.Hour

// parseTimeout reads --timeout: a positive decimal number of seconds
// ("90", "0.5"), at least one millisecond.
func parseTimeout(v string) (time.Duration, error) {
	secs, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(secs) || math.IsInf(secs, 0) || strings.ContainsAny(v, "xXpP_") {
		return 0, usagef("--timeout", "--timeout must be a number of seconds greater than zero, got %q", v)
	}
	if secs > maxTimeout.Seconds() {
		return 0, usagef("--timeout", "--timeout must be at most %d seconds, got %q", int64(maxTimeout.Seconds()), v)
	}
	d := time.Duration(math.Round(secs*1000)) * time.Millisecond
	if secs <= 0 || d < time.Millisecond {
		return 0, usagef("--timeout", "--timeout must be a number of seconds of at least 0.001, got %q", v)
	}
	return d, nil
}

// parseStallTimeout reads --stall-timeout: a Go duration ("90s", "5m") or
// a plain number of seconds, at least one millisecond and at most
// MaxStallTimeoutMS. There is no zero: omit the flag for no watchdog.
func parseStallTimeout(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		secs, ferr := strconv.ParseFloat(v, 64)
		if ferr != nil || math.IsNaN(secs) || math.IsInf(secs, 0) || strings.ContainsAny(v, "xXpP_") {
			return 0, usagef("--stall-timeout", "--stall-timeout must be a duration such as 90s or 5m (or seconds), got %q", v)
		}
		if secs > float64(MaxStallTimeoutMS/1000) {
			return 0, usagef("--stall-timeout", "--stall-timeout must be at most %d seconds, got %q", MaxStallTimeoutMS/1000, v)
		}
		d = time.Duration(math.Round(secs*1000)) * time.Millisecond
	}
	if d < time.Millisecond {
		return 0, usagef("--stall-timeout", "--stall-timeout must be at least 1ms (omit the flag for no watchdog), got %q", v)
	}
	if err := ValidateStallTimeoutMS(d.Milliseconds()); err != nil {
		return 0, usagef("--stall-timeout", "--stall-timeout: %v", err)
	}
	return d, nil
}
