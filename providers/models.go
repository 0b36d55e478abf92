package providers

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// Model discovery (provider-dispatch.md, setup duties): each installed CLI's
// own listing, read fail-closed. A listing proves discovery only, never
// account access or entitlement; setup still probes every selected route.

// ModelsProbe is one provider's discovery command (argv after the binary)
// and its reader. Argv is nil for a provider without a listing command
// (Claude and Codex are checked by execution; the matrix is their guide).
type ModelsProbe struct {
	Argv []string
	Read func(stdout []byte) ([]string, error)
}

// ModelsProbeFor returns the provider's discovery probe (Spec.Models);
// the zero probe for a provider without a listing or without a spec.
func ModelsProbeFor(p policy.Provider) ModelsProbe {
	if s, err := Lookup(p); err == nil {
		return s.Models
	}
	return ModelsProbe{}
}

// ModelsOutputCap bounds a listing; a longer one is refused, not cut.
const ModelsOutputCap = 1 << 20

// modelToken is what a listed model ID may look like.
var modelToken = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:+/-]{0,199}$`)

// errListing is wrapped by every listing that does not have the expected
// shape: discovery then reports the format change instead of guessing.
var errListing = errors.New("unrecognized model listing")

func listingErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errListing, fmt.Sprintf(format, a...))
}

// readDevinModels reads `devin models list --format json`: the UIDs in
// families[].variants[].model_uid, in listing order.
func readDevinModels(stdout []byte) ([]string, error) {
	var doc struct {
		Families *[]struct {
			Variants *[]struct {
				ModelUID *string `json:"model_uid"`
			} `json:"variants"`
		} `json:"families"`
	}
	if err := json.Unmarshal(stdout, &doc); err != nil || doc.Families == nil {
		return nil, listingErr("devin models list --format json is not an object with families[]")
	}
	var out []string
	for i, f := range *doc.Families {
		if f.Variants == nil {
			return nil, listingErr("devin family %d has no variants[]", i+1)
		}
		for _, v := range *f.Variants {
			if v.ModelUID == nil || !modelToken.MatchString(*v.ModelUID) {
				return nil, listingErr("devin family %d has a variant without a usable model_uid", i+1)
			}
			out = append(out, *v.ModelUID)
		}
	}
	return out, nil
}

// readCursorModels reads `cursor-agent models`: "<slug> - <name>" lines.
// Cursor's auto selector is never a descriptor.
func readCursorModels(stdout []byte) ([]string, error) {
	var out []string
	for _, line := range nonEmptyLines(stripANSI(string(stdout))) {
		if strings.HasSuffix(line, ":") || strings.HasPrefix(strings.ToLower(line), "tip:") {
			continue // a heading ("Available models:") or a hint line
		}
		slug, _, ok := strings.Cut(line, " - ")
		slug = strings.TrimSpace(slug)
		if !ok || !modelToken.MatchString(slug) {
			return nil, listingErr("cursor-agent models line %q is not \"<slug> - <name>\"", CapText(line, 80))
		}
		if slug != "auto" {
			out = append(out, slug)
		}
	}
	return out, nil
}

// readAntigravityModels reads `agy models`: the slug is the first token of
// each line (the runner's preflight reads it the same way); auto is never
// a descriptor.
func readAntigravityModels(stdout []byte) ([]string, error) {
	var out []string
	for _, line := range nonEmptyLines(stripANSI(string(stdout))) {
		fields := strings.Fields(line)
		if strings.HasSuffix(line, ":") {
			continue
		}
		if !modelToken.MatchString(fields[0]) {
			return nil, listingErr("agy models line %q does not start with a model slug", CapText(line, 80))
		}
		if fields[0] != "auto" {
			out = append(out, fields[0])
		}
	}
	return out, nil
}

// readOpenCodeModels reads `opencode models`: one provider/model ID
// per line (extra path segments kept). A cold empty list is no evidence.
func readOpenCodeModels(stdout []byte) ([]string, error) {
	var out []string
	for _, line := range nonEmptyLines(stripANSI(string(stdout))) {
		id := strings.Fields(line)[0]
		provider, model, ok := strings.Cut(id, "/")
		if !ok || provider == "" || model == "" || strings.Contains(id, "//") || strings.HasSuffix(id, "/") || !modelToken.MatchString(id) {
			return nil, listingErr("opencode models line %q is not a provider/model ID", CapText(line, 80))
		}
		out = append(out, id)
	}
	return out, nil
}

// readGrokListing reads `grok models`: after the login banner, an
// "Available models:" heading and one indented model per line, optionally
// marked "(default)".
func readGrokListing(stdout []byte) ([]string, error) {
	lines := strings.Split(stripANSI(string(stdout)), "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.TrimSpace(l) == "Available models:" })
	if i < 0 {
		return nil, listingErr("grok models printed no \"Available models:\" section")
	}
	var out []string
	for _, line := range lines[i+1:] {
		if strings.TrimSpace(line) == "" {
			continue
		}
		fields := strings.Fields(line)
		if !strings.HasPrefix(line, " ") || !modelToken.MatchString(fields[0]) ||
			(len(fields) > 1 && (len(fields) > 2 || fields[1] != "(default)")) {
			return nil, listingErr("grok models line %q is not an indented model", CapText(line, 80))
		}
		out = append(out, fields[0])
	}
	return out, nil
}

var ansiSeq = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// stripANSI removes CSI styling; any other control byte stays and fails
// the token check.
func stripANSI(s string) string {
	return strings.ReplaceAll(ansiSeq.ReplaceAllString(s, ""), "\r\n", "\n")
}

// reasoningEfforts are the efforts offered for a listed model of a CLI
// that selects reasoning by effort (Spec.ListedEfforts).
var reasoningEfforts = []policy.Effort{policy.EffortLow, policy.EffortMedium, policy.EffortHigh, policy.EffortXHigh, policy.EffortMax}

// ModelChoice is one runnable descriptor: provider, exact model, the
// efforts the seed allows for it and the effort setup proposes.
type ModelChoice struct {
	Provider      policy.Provider `json:"provider"`
	Model         string          `json:"model"`
	Efforts       []policy.Effort `json:"efforts"`
	DefaultEffort policy.Effort   `json:"defaultEffort"`
	Descriptor    string          `json:"descriptor"` // at the default effort
	Family        string          `json:"family,omitempty"`
	InMatrix      bool            `json:"inMatrix"` // a model-matrix or optional-family row
	Listed        bool            `json:"listed"`   // the CLI's own listing names it
	CLIModel      string          `json:"cliModel"` // what the runner passes to --model at the default effort
}

// Choices turns a provider's listed IDs into descriptors with the efforts
// the seed allows, adds the matrix rows of that provider (listed or not),
// and marks which the matrix knows. Matrix rows come first, in matrix
// order, then the other listed IDs in listing order.
func Choices(p policy.Provider, listed []string) []ModelChoice {
	families := append(append([]policy.Family{}, policy.ModelMatrix...), policy.OptionalFamilies...)
	var out []ModelChoice
	seen := map[string]bool{}
	isListed := func(cli string) bool { return slices.Contains(listed, cli) }
	for _, f := range families {
		if f.Provider != p {
			continue
		}
		c := ModelChoice{Provider: p, Model: f.Model, Efforts: slices.Clone(f.Efforts), DefaultEffort: f.DefaultEffort,
			Descriptor: f.Descriptor(), Family: f.Name, InMatrix: true}
		c.CLIModel = f.Model
		if spec, err := Lookup(p); err == nil {
			if m, err := spec.CLIModel(f.Model, f.DefaultEffort); err == nil {
				c.CLIModel = m
			}
		}
		// Devin's legacy families are listed under their UIDs.
		for _, e := range f.Efforts {
			if spec, err := Lookup(p); err == nil {
				if m, err := spec.CLIModel(f.Model, e); err == nil {
					c.Listed = c.Listed || isListed(m)
					seen[m] = true
				}
			}
		}
		c.Listed = c.Listed || isListed(f.Model)
		seen[f.Model] = true
		out = append(out, c)
	}
	var listedEfforts []policy.Effort
	listedAuto := false
	if spec, err := Lookup(p); err == nil {
		listedEfforts, listedAuto = spec.ListedEfforts, spec.ListedAuto
	}
	for _, id := range listed {
		if seen[id] || (!listedAuto && id == "auto") {
			continue
		}
		seen[id] = true
		efforts := []policy.Effort{policy.EffortDefault}
		if len(listedEfforts) > 0 {
			efforts = slices.Clone(listedEfforts)
		}
		def := efforts[0]
		if len(efforts) > 1 {
			def = policy.EffortHigh
		}
		out = append(out, ModelChoice{Provider: p, Model: id, Efforts: efforts, DefaultEffort: def,
			Descriptor: string(p) + ":" + id + "@" + string(def), Listed: true, CLIModel: id})
	}
	return out
}
