package runner

import (
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// workerPrompt is the prompt the runner sends: the worker contract for the
// mode with the writer rules and tool guidance the spec's WriterTools
// grant, ending with "Assigned task:", then the task verbatim. The contract
// text has one source, providers.ContractText, which `switchyard contract
// prepare --route external` prints too.
func workerPrompt(writer providers.WriterTools, mode policy.Access, task []byte) []byte {
	text := providers.ContractText(writer, mode, false)
	out := make([]byte, 0, len(text)+len(task))
	out = append(out, text...)
	return append(out, task...)
}
