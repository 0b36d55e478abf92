package policy

// Family is one row of the model matrix: recommended defaults and effort
// guidance, not an allowlist.
type Family struct {
	Name          string   // family name, e.g. "opus"
	Upstream      string   // upstream pstack choice, "" where the portable build added it
	Provider      Provider // provider CLI
	Model         string   // model pin passed to the CLI
	DefaultEffort Effort   // effort used on first run
	Efforts       []Effort // selectable efforts
	ClaudeStem    string   // Claude-native agent stem ("" when none); agent is pstack-<stem>-<effort>
	FirstRun      bool     // active on first run
}

// Descriptor renders the family at its default effort.
func (f Family) Descriptor() string {
	return string(f.Provider) + ":" + f.Model + "@" + string(f.DefaultEffort)
}

var matrixEfforts = []Effort{EffortLow, EffortMedium, EffortHigh, EffortXHigh, EffortMax}

// ModelMatrix is the seed's model matrix, in matrix order.
var ModelMatrix = []Family{
	{Name: "fable", Provider: Claude, Model: "fable", DefaultEffort: EffortMax, Efforts: matrixEfforts, ClaudeStem: "fable"},
	{Name: "sol", Upstream: "gpt-5.6-sol-max", Provider: Codex, Model: "gpt-5.6-sol", DefaultEffort: EffortMax, Efforts: matrixEfforts, FirstRun: true},
	{Name: "grok", Upstream: "grok-4.7-xhigh-fast", Provider: Grok, Model: "grok-4.7", DefaultEffort: EffortXHigh, Efforts: matrixEfforts, FirstRun: true},
	{Name: "opus", Upstream: "claude-opus-5-5-max", Provider: Claude, Model: "opus", DefaultEffort: EffortMax, Efforts: matrixEfforts, ClaudeStem: "opus", FirstRun: true},
	{Name: "sonnet", Provider: Claude, Model: "sonnet", DefaultEffort: EffortHigh, Efforts: matrixEfforts, ClaudeStem: "sonnet"},
	{Name: "astra", Provider: Codex, Model: "gpt-6-astra", DefaultEffort: EffortHigh, Efforts: matrixEfforts},
	{Name: "luna", Provider: Codex, Model: "gpt-5.6-luna", DefaultEffort: EffortHigh, Efforts: matrixEfforts},
	{Name: "terra", Provider: Codex, Model: "gpt-5.6-terra", DefaultEffort: EffortHigh, Efforts: matrixEfforts},
}

// OptionalFamilies are the opt-in Devin families; they never change the
// default panel.
var OptionalFamilies = []Family{
	{Name: "swe-2", Provider: Devin, Model: "swe-2", DefaultEffort: EffortHigh, Efforts: []Effort{EffortMedium, EffortHigh, EffortMax}},
	{Name: "swe-1.6", Provider: Devin, Model: "swe-1.6", DefaultEffort: EffortDefault, Efforts: []Effort{EffortDefault}},
}

// FirstRunFamilies returns the families active on a first run, in matrix
// order, each to be used at its default effort.
func FirstRunFamilies() []Family {
	var out []Family
	for _, f := range ModelMatrix {
		if f.FirstRun {
			out = append(out, f)
		}
	}
	return out
}

// NativeAgent is one Claude-native agent: a model alias and effort that a
// shipped agent definition covers.
type NativeAgent struct {
	Model  string
	Effort Effort
}

// DefaultClaudeNative is the built-in Claude-native coverage: every
// Claude-native stem of the matrix at its default effort, plus fable@max
// and opus@xhigh.
func DefaultClaudeNative() []NativeAgent {
	var out []NativeAgent
	for _, f := range ModelMatrix {
		if f.ClaudeStem != "" {
			out = append(out, NativeAgent{Model: f.ClaudeStem, Effort: f.DefaultEffort})
		}
	}
	return append(out, NativeAgent{Model: "fable", Effort: EffortMax}, NativeAgent{Model: "opus", Effort: EffortXHigh})
}
