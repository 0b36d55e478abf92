package providers

import (
	"errors"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// This file is the one source of the worker contract (provider-dispatch.md
// "Worker handoffs and parent operations" and "Native lanes"): the runner
// prepends it to every external prompt and `switchyard contract prepare`
// prints it for native lanes and for parents that launch workers
// themselves.

// AssignedTaskHeading separates the worker contract from the parent's task
// in every prepared prompt.
const AssignedTaskHeading = "Assigned task:"

// Route is how a parent dispatches a lane: through its own native subagent
// primitive or through the external runner.
type Route string

// Routes.
const (
	RouteNative   Route = "native"
	RouteExternal Route = "external"
)

// ErrStrictUnsupported is the answer to every strict-contract request: no
// current native or external route has live proof of the strict boundary.
var ErrStrictUnsupported = errors.New("the strict worker contract is unsupported: no native or external route has live proof that file edits stay possible while Git metadata, shell descendants and authenticated remote mutation stay blocked")

// workerContract is Switchyard's wording of the seed's ownership rules.
// Under the legacy contract it is guidance in the prompt, not an
// enforcement claim.
const workerContract = `## Worker contract

You are a worker launched by a parent session. The parent owns the
repository you were given; you own only the assigned work.

What belongs to the parent:
- Git state. Do not stage, commit, amend, reset, restore, rebase, merge,
  cherry-pick, stash, tag, branch, fetch, pull or push, and do not run any
  git command that writes. Never create, edit or delete anything in the Git
  metadata: the .git directory or .git file, its config, hooks, refs, index,
  objects and worktree records. Avoid tools (package managers, formatters,
  hook installers) that write there as a side effect.
- Anything that changes an account or a remote: publishing, releases,
  issues, pull requests, deployments.
- Read-only Git inspection (status, diff, log, show) is fine where your
  tools allow it; it never licenses a write.

Where you may write:
- Only inside the assigned working directory, or a path the task assigns
  explicitly. A throwaway fixture repository for tests is allowed only when
  the task asks for one; it must live inside the working directory and must
  never point at this repository's Git metadata.
`

// readOnlyRules is the external read-only part: the runner saves the final
// response as the lane's output.
const readOnlyRules = `
This is a read-only assignment: inspect, do not modify the checkout. Your
final response is your only deliverable; the runner saves it for the parent.
`

// nativeReadOnlyRules is the native read-only part: a native lane has a
// distinct parent-assigned output artifact, the only file it may write.
const nativeReadOnlyRules = `
This is a read-only assignment: inspect, do not modify the checkout. The
task names a unique output location assigned by the parent; you may write
that artifact and nothing else.
`

// The writer rules depend on whether the configuration grants a shell
// (WriterTools.Shell): a worker is never told to run checks with a tool its
// configuration denies.
const writerRules = `
This is a writing assignment in a dedicated worktree:
- After editing, run the local checks that fit the change. When a check
  fails because of your edit, fix it and run the affected check again.
- A failing test is something to repair. A denied tool is not: when a tool
  or permission is refused, stop that line of work, say exactly what was
  refused, and do not retry it, work around it or ask for more access.
`

const writerRulesNoShell = `
This is a writing assignment in a dedicated worktree:
- Your tools cannot run commands, so do not try to run checks. In your
  final response, name the local checks that fit the change so the parent
  can run them.
- A denied tool is not something to work around: when a tool or
  permission is refused, stop that line of work, say exactly what was
  refused, and do not retry it, work around it or ask for more access.
`

// nativeWriterTools is what a native worker is told about its tools: it
// uses the permitted tools it inherits from the host, with no enforcement
// promise.
var nativeWriterTools = WriterTools{
	Shell:    true,
	Guidance: "Use the file and command tools your host session permits; nothing in this contract is enforced for you.",
}

// finishingRules explain the final response and the handoff block.
const finishingRules = `
Finishing:
- End with an ordinary final response: what you changed, the commands you
  actually ran and what they printed, and which checks you could not run.
  Without a handoff block that response closes the task.
- If finishing needs something only the parent may do, end the response
  with exactly one fenced block and nothing after it:
  ` + "```pstack-handoff" + `
  {"task":"<task id>","checkpoint":"<checkpoint id>","operation":"commit-checkpoint","files":["<repo-relative path>"],"checks":["<check id>"],"summary":"<what the parent should do and why>"}
  ` + "```" + `
  operation is "commit-checkpoint" or "run-checks"; files are paths
  relative to the repository root; checks are check identifiers, never
  shell commands. The block is a request the parent verifies and carries
  out with its own arguments. It grants nothing, and you must not claim
  the operation has already happened.
`

// ContractRequest names one lane's worker contract.
type ContractRequest struct {
	Parent   policy.Parent
	Provider policy.Provider
	Route    Route
	Mode     policy.Access
	Contract policy.Contract
}

// PrepareContract returns the instructions to prepend to a task prompt:
// the worker contract for the request's route and mode, ending with the
// "Assigned task:" heading, so the prepared text followed by the task is
// exactly the prompt the worker receives. The external route's text is
// byte for byte what the runner sends (writer rules from the provider's
// spec). A strict contract returns ErrStrictUnsupported; a native route
// the parent does not have (a Claude parent has native lanes only for
// claude:*, a Codex parent only for codex:*) is a usage error.
func PrepareContract(r ContractRequest) (string, error) {
	if _, err := policy.ParseParent(string(r.Parent)); err != nil {
		return "", err
	}
	spec, err := Lookup(r.Provider)
	if err != nil {
		return "", policy.Usagef("--provider %q: want one of %s", r.Provider, providerList())
	}
	if _, err := policy.ParseAccess(string(r.Mode)); err != nil {
		return "", err
	}
	switch r.Contract {
	case policy.ContractLegacy:
	case policy.ContractStrict:
		return "", ErrStrictUnsupported
	default:
		return "", policy.Usagef("--contract must be legacy or strict, got %q", r.Contract)
	}
	switch r.Route {
	case RouteExternal:
		return ContractText(spec.Writer, r.Mode, false), nil
	case RouteNative:
		if string(r.Parent) != string(r.Provider) {
			return "", policy.Usagef("a %s parent has no native route to %s workers: use --route external", r.Parent, r.Provider)
		}
		return ContractText(nativeWriterTools, r.Mode, true), nil
	}
	return "", policy.Usagef("--route must be native or external, got %q", r.Route)
}

// ContractText renders the legacy worker contract for mode with writer's
// tool surface, ending with the "Assigned task:" heading line.
func ContractText(writer WriterTools, mode policy.Access, native bool) string {
	var b strings.Builder
	b.Grow(len(workerContract) + len(writerRules) + len(finishingRules) + 256)
	b.WriteString(workerContract)
	switch {
	case mode == policy.IsolatedWrite:
		if writer.Shell {
			b.WriteString(writerRules)
		} else {
			b.WriteString(writerRulesNoShell)
		}
		if writer.Guidance != "" {
			b.WriteString("\n" + writer.Guidance + "\n")
		}
	case native:
		b.WriteString(nativeReadOnlyRules)
	default:
		b.WriteString(readOnlyRules)
	}
	b.WriteString(finishingRules)
	b.WriteString("\n" + AssignedTaskHeading + "\n")
	return b.String()
}

func providerList() string {
	names := Names()
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = string(n)
	}
	return strings.Join(out, ", ")
}

// RepoRelativePath reports whether p is a path the handoff parser accepts
// in "files": clean, repository-relative, no "..", "." or ".git" segment.
func RepoRelativePath(p string) bool { return relativeRepoPath(p) }
