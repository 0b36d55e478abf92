package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/policy"
)

// policyHelp is the full help of `switchyard policy`, printed for --help and
// after every usage error.
const policyHelp = `Usage: switchyard policy <command> [options]

Decide model routing from a frozen model sheet. A drop-in for the reference
pstack-model-policy helper: same commands, options, exit codes and JSON.
It parses and decides; it never probes providers or launches anything.

Commands:
  validate   --sheet F --parent P
             Check a complete candidate sheet for setup.
  resolve    --sheet F --role R --parent P
             Print a role's lanes and their attempt chains.
  next       --sheet F --role R --parent P --state F [--lane N]
             Decide a lane's next step from its lane-state file.
  normalize  --sheet F --role R --parent P [--lane N] [--attempt I]
             --receipt F --mode M [--contract C]
             Turn a runner receipt into a lane-state event.

Options:
  --sheet F      the frozen model sheet
  --role R       a row header or a unique leaf role, e.g. "swarm workers"
  --parent P     the top-level harness: claude or codex
  --state F      lane state: {"events":[...],"exhaustedGroups":[...],"access":"read-only"}
  --lane N       zero-based lane (seat) index; default 0
  --attempt I    zero-based attempt index within the lane; default 0
  --receipt F    the runner receipt of that attempt
  --mode M       the attempt's access mode: read-only or isolated-write
  --contract C   the expected worker contract: legacy or strict
  -h, --help     show this help; "switchyard policy <command> --help"
                 shows a command's examples

A value that starts with "--" counts as missing; an empty value ("") is a
value. Files larger than 4 MiB are refused.

Exit codes:
  0   success, including {"status":"unconfigured",...}
  64  usage, state or history error: "error: <msg>" and this help on stderr
  65  invalid sheet, missing or ambiguous role, rejected receipt:
      "invalid model sheet:" and one issue per line on stderr
`

// Shared option declarations, so every subcommand describes them alike.
var (
	optSheet    = flagSpec{name: "sheet", arg: "F", required: true, help: "the frozen model sheet"}
	optRole     = flagSpec{name: "role", arg: "R", required: true, help: `a row header or a unique leaf role, e.g. "swarm workers"`}
	optParent   = flagSpec{name: "parent", arg: "P", required: true, help: "the top-level harness: claude or codex"}
	optState    = flagSpec{name: "state", arg: "F", required: true, help: "the lane-state JSON file"}
	optLane     = flagSpec{name: "lane", arg: "N", help: "zero-based lane (seat) index; default 0"}
	optAttempt  = flagSpec{name: "attempt", arg: "I", help: "zero-based attempt index within the lane; default 0"}
	optReceipt  = flagSpec{name: "receipt", arg: "F", required: true, help: "the runner receipt; the event records this path as given"}
	optMode     = flagSpec{name: "mode", arg: "M", required: true, help: "the attempt's access mode: read-only or isolated-write"}
	optContract = flagSpec{name: "contract", arg: "C", help: "the expected worker contract: legacy or strict"}
)

// policySub describes one `switchyard policy` subcommand.
type policySub struct {
	name    string
	short   string
	long    string
	example string
	flags   []flagSpec
	run     func(ctx context.Context, f parsedFlags) (output, error)
}

// help renders the subcommand's --help text.
func (s policySub) help() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: switchyard policy %s %s\n\n", s.name, synopsis(s.flags))
	b.WriteString(strings.TrimSpace(s.long))
	b.WriteString("\n\nOptions:\n")
	b.WriteString(flagUsage(s.flags))
	b.WriteString("\nExamples:\n")
	b.WriteString(s.example)
	b.WriteString("\nExit codes: 0 success (including \"unconfigured\"), 64 usage, state or\nhistory error, 65 invalid sheet, role or receipt. See \"switchyard policy --help\".\n")
	return b.String()
}

// newPolicyCmd builds `switchyard policy` and its subcommands. Flag parsing
// is the contract's own (parsePolicyFlags), not pflag's, so errors and help
// take exactly the contract's forms.
func newPolicyCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:                "policy <command> [options]",
		Short:              "Validate, resolve, decide and normalize against a model sheet",
		Long:               policyHelp,
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			switch {
			case len(args) == 0 || args[0] == "--help" || args[0] == "-h":
				_, err := io.WriteString(stdout, policyHelp)
				return err
			default:
				return report(stdout, stderr, nil, policy.Usagef(
					"unknown command %q; expected validate, resolve, next or normalize", args[0]))
			}
		},
	}
	cmd.SetHelpFunc(func(*cobra.Command, []string) { io.WriteString(stdout, policyHelp) })
	for _, s := range []policySub{validateSub(), resolveSub(), nextSub(), normalizeSub()} {
		cmd.AddCommand(s.command(stdout, stderr))
	}
	return cmd
}

// command wires a policySub into cobra.
func (s policySub) command(stdout, stderr io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:                s.name + " " + synopsis(s.flags),
		Short:              s.short,
		Long:               strings.TrimSpace(s.long),
		Example:            s.example,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			f, help, err := parsePolicyFlags(s.flags, args)
			if help {
				_, err := io.WriteString(stdout, s.help())
				return err
			}
			if err != nil {
				return report(stdout, stderr, nil, err)
			}
			out, err := s.run(cmd.Context(), f)
			return report(stdout, stderr, out, err)
		},
	}
	c.SetHelpFunc(func(*cobra.Command, []string) { io.WriteString(stdout, s.help()) })
	return c
}

// report prints a command's result in the contract's form and returns the
// *exitError for a failure: a *policy.PolicyError exits 65 with its issues,
// anything else exits 64 with "error: <msg>" and the full help.
func report(stdout, stderr io.Writer, out output, err error) error {
	if err == nil {
		if werr := writeOutput(stdout, out); werr != nil {
			fmt.Fprintf(stderr, "error: write output: %v\n", werr)
			return &exitError{code: exitGeneric}
		}
		return nil
	}
	var pe *policy.PolicyError
	if errors.As(err, &pe) {
		fmt.Fprintf(stderr, "invalid model sheet:\n%s\n", strings.Join(pe.Issues, "\n"))
		return &exitError{code: exitPolicy}
	}
	fmt.Fprintf(stderr, "error: %s\n\n%s", err, policyHelp)
	return &exitError{code: exitUsage}
}

// parseParent reads --parent.
func parseParent(f parsedFlags) (policy.Parent, error) {
	return policy.ParseParent(f["parent"])
}

// loadSheet reads and parses --sheet. A missing file returns a nil sheet
// and no error, so the caller can answer "unconfigured"; any other read
// failure is a usage error.
func loadSheet(path string) (*policy.Sheet, error) {
	src, err := readInput(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, policy.Usagef("cannot read sheet %s: %v", path, err)
	}
	return policy.ParseSheet(src, policy.DefaultOptions())
}

// sheetNotFound is the unconfigured answer for a missing sheet.
func sheetNotFound(role, path string) unconfiguredOutput {
	return unconfiguredOutput{Status: statusUnconfigured, Role: role, Reason: "sheet not found: " + path}
}

// resolveRole loads the sheet and resolves role for parent. When the role is
// unconfigured (no sheet, or a legacy sheet without the row) it returns the
// unconfigured answer instead of a policy.
func resolveRole(path, role string, parent policy.Parent) (*policy.RolePolicy, *unconfiguredOutput, error) {
	s, err := loadSheet(path)
	if err != nil {
		return nil, nil, err
	}
	if s == nil {
		u := sheetNotFound(role, path)
		return nil, &u, nil
	}
	rp, err := policy.Resolve(s, role, parent, policy.DefaultOptions())
	if errors.Is(err, policy.ErrUnconfigured) {
		return nil, &unconfiguredOutput{Status: statusUnconfigured, Role: role}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return rp, nil, nil
}

// laneAt picks lane n of rp, or says which lanes exist.
func laneAt(rp *policy.RolePolicy, n int) (policy.LanePolicy, error) {
	if n >= len(rp.Lanes) {
		return policy.LanePolicy{}, policy.Usagef("--lane %d is out of range: role %q has %d lane(s), 0 to %d",
			n, rp.Role, len(rp.Lanes), len(rp.Lanes)-1)
	}
	return rp.Lanes[n], nil
}
