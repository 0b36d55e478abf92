package machines

import (
	"fmt"
	"strings"

	"github.com/looplab/fsm"
)

// Mermaid renders the lane machine as a Mermaid state diagram: looplab/fsm's
// own rendering of a new lane (edges sorted by source state, then event),
// made valid Mermaid and closed with the final states. Mermaid state ids
// cannot contain '-', so such a state is declared with its name as label
// (state "awaiting-operation" as awaiting_operation). The output is
// deterministic; testdata/lane.mmd is its golden copy.
func Mermaid() string {
	raw, err := fsm.VisualizeWithType(newFSM(StateCreated), fsm.MermaidStateDiagram)
	if err != nil { // only for an unknown visualizer type
		panic(fmt.Sprintf("machines: render mermaid: %v", err))
	}
	var b strings.Builder
	for line := range strings.Lines(raw) {
		line = strings.TrimRight(line, "\n")
		if line == "stateDiagram-v2" {
			b.WriteString(line + "\n")
			for _, s := range States {
				if id := mermaidID(string(s)); id != string(s) {
					fmt.Fprintf(&b, "    state %q as %s\n", s, id)
				}
			}
			continue
		}
		// "    src --> dst: event" or "    [*] --> initial"
		arrow, label, hasLabel := strings.Cut(strings.TrimSpace(line), ": ")
		src, dst, ok := strings.Cut(arrow, " --> ")
		if !ok {
			panic(fmt.Sprintf("machines: unexpected mermaid line %q", line))
		}
		fmt.Fprintf(&b, "    %s --> %s", mermaidID(src), mermaidID(dst))
		if hasLabel {
			b.WriteString(": " + label)
		}
		b.WriteString("\n")
	}
	for _, s := range States {
		if s.Final() {
			fmt.Fprintf(&b, "    %s --> [*]\n", mermaidID(string(s)))
		}
	}
	return b.String()
}

func mermaidID(name string) string { return strings.ReplaceAll(name, "-", "_") }
