package runner

import (
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
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

const writerRules = `
This is a writing assignment in a dedicated worktree:
- After editing, run the local checks that fit the change. When a check
  fails because of your edit, fix it and run the affected check again.
- A failing test is something to repair. A denied tool is not: when a tool
  or permission is refused, stop that line of work, say exactly what was
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

// providerGuidance is per-provider tool guidance for writers: how the
// configured tool surface does edits and checks.
var providerGuidance = map[policy.Provider]string{
	policy.Devin:       "Tools: make edits and run checks through the sandboxed exec tool.",
	policy.OpenCode:    "Tools: edit with the file tools; run checks with the sandboxed shell.",
	policy.Antigravity: "Tools: edit with the direct file tools and run checks as sandboxed commands; collect each command's result before you deliver.",
}

// workerPrompt is the prompt the runner sends: the worker contract for the
// mode, provider guidance, then "Assigned task:" and the task verbatim.
func workerPrompt(provider policy.Provider, mode policy.Access, task []byte) []byte {
	var b strings.Builder
	b.Grow(len(workerContract) + len(writerRules) + len(finishingRules) + len(task) + 256)
	b.WriteString(workerContract)
	if mode == policy.IsolatedWrite {
		b.WriteString(writerRules)
		if g := providerGuidance[provider]; g != "" {
			b.WriteString("\n" + g + "\n")
		}
	} else {
		b.WriteString(readOnlyRules)
	}
	b.WriteString(finishingRules)
	b.WriteString("\n" + assignedTaskHeading + "\n")
	b.Write(task)
	return []byte(b.String())
}
