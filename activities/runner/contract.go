package runner

import (
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// assignedTaskHeading separates the worker contract from the parent's task
// prompt in every prompt the runner sends.
const assignedTaskHeading = "Assigned task:"

// workerContract is Switchyard's wording of the seed's ownership rules
// ("Worker handoffs and parent operations"). Under the legacy contract it
// is guidance in the prompt, not an enforcement claim.
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

// readOnlyRules and writerRules are the mode-specific part.
const readOnlyRules = `
This is a read-only assignment: inspect, do not modify the checkout. Your
final response is your only deliverable; the runner saves it for the parent.
`

// nativeReadOnlyRules replace readOnlyRules on the native route: a native
// subagent has no runner to save its answer, so the parent assigns it a
// distinct output artifact (named in the assignment after the contract).
const nativeReadOnlyRules = `
This is a read-only assignment: inspect, do not modify the checkout. The
parent assigned you one output artifact, named in the assignment below;
you may create and write that file and nothing else. Your final response
is still your deliverable: the parent records it.
`

// The writer rules depend on whether the spec grants a shell
// (providers.WriterTools.Shell): a worker is never told to run checks with
// a tool its configuration denies.
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

// workerPrompt is the prompt the runner sends: the worker contract for the
// mode, the writer rules and tool guidance the spec's WriterTools grant,
// then "Assigned task:" and the task verbatim.
func workerPrompt(writer providers.WriterTools, mode policy.Access, task []byte) []byte {
	var b strings.Builder
	b.Grow(len(workerContract) + len(writerRules) + len(finishingRules) + len(task) + 256)
	b.WriteString(workerContract)
	if mode == policy.IsolatedWrite {
		if writer.Shell {
			b.WriteString(writerRules)
		} else {
			b.WriteString(writerRulesNoShell)
		}
		if writer.Guidance != "" {
			b.WriteString("\n" + writer.Guidance + "\n")
		}
	} else {
		b.WriteString(readOnlyRules)
	}
	b.WriteString(finishingRules)
	b.WriteString("\n" + assignedTaskHeading + "\n")
	b.Write(task)
	return []byte(b.String())
}

// NativeContract is the prepared worker contract of a native lane (route
// native, contract legacy; the seed's "prepare --route native"): the same
// ownership rules, writer rules and finishing rules the runner prepends to
// every external prompt, from the same text, for a native subagent in
// mode. A native writer uses its inherited host tools, which include a
// shell, so it gets the rules for running checks; a native read-only lane
// may write its parent-assigned artifact. The strict contract has no
// native route (no native route proves its boundary), so there is no
// strict text: callers end a strict native lane unsupported instead.
func NativeContract(mode policy.Access) string {
	var b strings.Builder
	b.WriteString(workerContract)
	if mode == policy.IsolatedWrite {
		b.WriteString(writerRules)
	} else {
		b.WriteString(nativeReadOnlyRules)
	}
	b.WriteString(finishingRules)
	return b.String()
}

// AssignedTaskHeading separates the worker contract (and the native
// assignment) from the task in every prompt.
const AssignedTaskHeading = assignedTaskHeading
