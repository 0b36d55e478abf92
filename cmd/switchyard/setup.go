package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// exitSetupNotWritten is setup's exit status when it proposed a change but
// did not write it (no confirmation: a "no" answer, or no terminal and no
// --yes).
const exitSetupNotWritten = 3

// setupOutput is `switchyard setup --json`.
type setupOutput struct {
	Sheet     string               `json:"sheet"`
	Exists    bool                 `json:"exists"`
	Parent    policy.Parent        `json:"parent"`
	Changed   bool                 `json:"changed"`
	Written   bool                 `json:"written"`
	Candidate string               `json:"candidate"`
	Diff      string               `json:"diff"`
	Notes     []string             `json:"notes"`
	Providers []setupProviderState `json:"providers"`
}

// setupProviderState is what discovery found for one provider.
type setupProviderState struct {
	Provider  policy.Provider `json:"provider"`
	Discovery string          `json:"discovery"`
	Proposed  []string        `json:"proposed"` // descriptors used in proposed rows
}

// setupFlags are setup's options.
type setupFlags struct {
	sheet, parent, apiSpend, funding, capacity, maxEffort string
	providers                                             []string
	yes, asJSON                                           bool
	timeout                                               time.Duration
}

// setupIO is what setup reads its confirmation from.
type setupIO struct {
	stdin io.Reader
	isTTY func() bool
}

var defaultSetupIO = setupIO{stdin: os.Stdin, isTTY: stdinIsTerminal}

// stdinIsTerminal reports whether stdin is a character device other than
// /dev/null (which is one too, and can never answer).
func stdinIsTerminal() bool {
	fi, err := os.Stdin.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}

func newSetupCmd(stdout, stderr io.Writer) *cobra.Command {
	return newSetupCmdIO(stdout, stderr, defaultSetupIO)
}

func newSetupCmdIO(stdout, stderr io.Writer, sio setupIO) *cobra.Command {
	var f setupFlags
	c := &cobra.Command{
		Use:   "setup --sheet F [--parent claude|codex] [--api-spend deny|approved] [--funding included|metered] [--max-effort E] [--yes] [--json]",
		Short: "Propose a model sheet (access facts and rows) for the provider CLIs installed here, show the diff, write it on confirmation",
		Long: `Discover the installed provider CLIs (as switchyard models does) and
propose a model sheet for them:

  access facts  one "# access:" line per external provider found, with the
                spending choice you give (--api-spend, default deny), the
                funding you confirm (--funding, default included) and
                provenance "user" (your confirmation is what authorizes it)
  rows          for a new sheet: every role row of the catalog, built from
                the first-run matrix families whose CLI is installed (grok
                only with --api-spend approved: under deny every grok
                attempt is blocked), at
                their default efforts (lowered to --max-effort when given,
                only to an effort the model supports; the change is shown);
                chains rotate the primaries, never repeat a provider and
                stop at three attempts; Why and Reflect rows keep the
                parent's aliases; a recommended "# fallback:" line is added
                and shown
  an existing   keeps every line as it is; only missing role rows and
  sheet         missing access facts are added, built from the providers
                the sheet already uses: setup never adds a provider you
                did not choose (installed CLIs the sheet does not use are
                listed in the notes only)

Optional providers (devin, cursor, antigravity, opencode) get access facts
and their discovered descriptors are listed in the notes: they never change
the default panel, so add them to a row by hand where you want them.

The candidate is checked with the same rules as
  switchyard policy validate --sheet F --parent P
and only a valid candidate is offered. The diff is shown, then the sheet
is written only after confirmation: --yes for scripts, or answering "y"
on a terminal. Without a terminal and without --yes nothing is written and
setup says how to write it (exit 3). --json prints the proposal (and
writes only with --yes).

Exit codes: 0 written or nothing to change; 3 proposed but not written;
1 discovery or validation failed; 64 usage error.`,
		Example: `  switchyard setup --sheet ~/.config/switchyard/models.sheet
  switchyard setup --sheet models.sheet --parent codex --yes
  switchyard setup --sheet models.sheet --api-spend approved --funding metered --yes
  switchyard setup --sheet models.sheet --max-effort high --json`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSetup(cmd, f, stdout, stderr, sio)
		},
	}
	c.Flags().StringVar(&f.sheet, "sheet", "", "the model sheet to create or complete (required)")
	c.Flags().StringVar(&f.parent, "parent", "claude", "the parent harness the sheet is for (claude or codex)")
	c.Flags().StringVar(&f.apiSpend, "api-spend", "deny", "spending choice saved in each proposed access fact (deny or approved)")
	c.Flags().StringVar(&f.funding, "funding", "included", "funding saved in each proposed access fact (included or metered; metered needs --api-spend approved)")
	c.Flags().StringVar(&f.capacity, "capacity", "unknown", "capacity saved in each proposed access fact (standard, high or unknown; advisory)")
	c.Flags().StringVar(&f.maxEffort, "max-effort", "", "an effort ceiling (low, medium, high, xhigh, max) for proposed rows")
	c.Flags().StringSliceVar(&f.providers, "provider", nil, "only these providers (repeatable; default every known provider)")
	c.Flags().BoolVar(&f.yes, "yes", false, "write without asking (for scripts)")
	c.Flags().BoolVar(&f.asJSON, "json", false, "print the proposal as JSON (schemaVersion "+fmt.Sprint(jsonSchemaVersion)+")")
	c.Flags().DurationVar(&f.timeout, "timeout", defaultModelsTimeout, "bound on each discovery probe")
	return wireCommand(c, stderr)
}

func runSetup(cmd *cobra.Command, f setupFlags, stdout, stderr io.Writer, sio setupIO) error {
	if f.sheet == "" {
		return usagef("--sheet is required: the model sheet to create or complete (for example --sheet models.sheet)")
	}
	parent, err := policy.ParseParent(f.parent)
	if err != nil {
		return usagef("--parent %q: want claude or codex", f.parent)
	}
	spend := policy.APISpend(f.apiSpend)
	if spend != policy.APISpendDeny && spend != policy.APISpendApproved {
		return usagef("--api-spend %q: want deny or approved", f.apiSpend)
	}
	funding := policy.Funding(f.funding)
	if funding != policy.FundingIncluded && funding != policy.FundingMetered {
		return usagef("--funding %q: want included or metered (unknown funding never authorizes a route)", f.funding)
	}
	if funding == policy.FundingMetered && spend != policy.APISpendApproved {
		return usagef("--funding metered needs --api-spend approved: a metered route runs only with approved spending")
	}
	if !slices.Contains([]string{"standard", "high", "unknown"}, f.capacity) {
		return usagef("--capacity %q: want standard, high or unknown", f.capacity)
	}
	var ceiling policy.Effort
	if f.maxEffort != "" {
		ceiling = policy.Effort(f.maxEffort)
		if effortRank(ceiling) < 0 {
			return usagef("--max-effort %q: want low, medium, high, xhigh or max", f.maxEffort)
		}
	}
	if f.timeout <= 0 {
		return usagef("--timeout %s: want a positive duration such as 20s", f.timeout)
	}
	want := providers.Names()
	if len(f.providers) > 0 {
		want = nil
		for _, name := range f.providers {
			p := policy.Provider(name)
			if _, err := providers.Lookup(p); err != nil {
				return usagef("--provider %q: unknown provider; known: %s", name, providerList())
			}
			want = append(want, p)
		}
	}
	path, err := filepath.Abs(f.sheet)
	if err != nil {
		return usagef("--sheet %q: %v", f.sheet, err)
	}
	old, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return failf("cannot read the sheet %s: %v", path, err)
	}
	var found []modelsProvider
	for _, p := range want {
		found = append(found, discoverModels(cmd.Context(), p, doctorEnv(), f.timeout))
	}
	prop, err := proposeSheet(proposal{parent: parent, spend: spend, funding: funding, capacity: f.capacity,
		ceiling: ceiling, found: found, old: old, exists: exists})
	if err != nil {
		return err
	}
	out := setupOutput{Sheet: path, Exists: exists, Parent: parent,
		Candidate: prop.text, Notes: prop.notes, Providers: prop.states}
	out.Changed = prop.text != string(old)
	out.Diff = lineDiff(string(old), prop.text)
	if !f.asJSON {
		printSetup(stdout, out)
	}
	if out.Changed {
		confirmed := f.yes
		if !f.yes && !f.asJSON && sio.isTTY() {
			fmt.Fprintf(stdout, "Write %s? [y/N] ", path)
			line, _ := bufio.NewReader(sio.stdin).ReadString('\n')
			confirmed = strings.EqualFold(strings.TrimSpace(line), "y") || strings.EqualFold(strings.TrimSpace(line), "yes")
		}
		if confirmed {
			if err := writeSheet(path, []byte(prop.text)); err != nil {
				return failf("cannot write the sheet %s: %v", path, err)
			}
			out.Written = true
		}
	}
	if f.asJSON {
		if err := writeDoc(stdout, out); err != nil {
			return err
		}
	}
	switch {
	case !out.Changed:
		if !f.asJSON {
			fmt.Fprintf(stdout, "%s already has everything setup would propose; nothing to write.\n", path)
		}
		return nil
	case out.Written:
		if !f.asJSON {
			fmt.Fprintf(stdout, "wrote %s; check it any time with: switchyard policy validate --sheet %s --parent %s\n", path, path, parent)
		}
		return nil
	}
	how := "not written: no confirmation"
	if !f.yes && (f.asJSON || !sio.isTTY()) {
		how = "not written: stdin is not a terminal, so setup cannot ask"
		if f.asJSON {
			how = "not written: --json never asks"
		}
	}
	fmt.Fprintf(stderr, "%s; to write it run: switchyard setup --sheet %s --parent %s --yes (with the same options)\n", how, f.sheet, parent)
	return &exitError{code: exitSetupNotWritten}
}

// writeSheet replaces the sheet atomically, keeping an existing file's mode.
func writeSheet(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".setup-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// proposal is setup's input.
type proposal struct {
	parent   policy.Parent
	spend    policy.APISpend
	funding  policy.Funding
	capacity string
	ceiling  policy.Effort
	found    []modelsProvider
	old      []byte
	exists   bool
}

// proposed is setup's candidate.
type proposed struct {
	text   string
	notes  []string
	states []setupProviderState
}

var effortOrder = []policy.Effort{policy.EffortLow, policy.EffortMedium, policy.EffortHigh, policy.EffortXHigh, policy.EffortMax}

func effortRank(e policy.Effort) int { return slices.Index(effortOrder, e) }

// proposeEffort lowers a family's default effort to the highest effort it
// supports at or below the ceiling; ok is false when it supports none.
func proposeEffort(f policy.Family, ceiling policy.Effort) (policy.Effort, bool) {
	if ceiling == "" || f.DefaultEffort == policy.EffortDefault || effortRank(f.DefaultEffort) <= effortRank(ceiling) {
		return f.DefaultEffort, true
	}
	best := policy.Effort("")
	for _, e := range f.Efforts {
		if r := effortRank(e); r >= 0 && r <= effortRank(ceiling) && (best == "" || r > effortRank(best)) {
			best = e
		}
	}
	return best, best != ""
}

// proposeSheet builds the candidate sheet and checks it.
func proposeSheet(in proposal) (proposed, error) {
	opt := policy.DefaultOptions()
	var out proposed
	installed := map[policy.Provider]bool{}
	for _, p := range in.found {
		installed[p.Provider] = p.Installed
		out.states = append(out.states, setupProviderState{Provider: p.Provider, Discovery: p.Discovery, Proposed: []string{}})
	}
	var sheet *policy.Sheet
	if in.exists {
		s, err := policy.ParseSheet(in.old, opt)
		if err != nil {
			var pe *policy.PolicyError
			if errors.As(err, &pe) {
				return out, failf("the existing sheet is invalid, so setup will not edit it:\n%s\nfix those lines (or move the file away to start a new sheet)", strings.Join(pe.Issues, "\n"))
			}
			return out, failf("the existing sheet is unreadable: %v", err)
		}
		sheet = s
	}

	// The chain pool. For an existing sheet: the families it already
	// uses, as it writes them, never a provider the user did not choose
	// (the seed: later runs derive the active family set from the sheet's
	// non-alias descriptors). For a new sheet: first-run families whose
	// CLI is installed, in matrix order, at their proposed effort.
	var pool []string
	if sheet != nil {
		pool = sheetFamilies(sheet)
		for _, d := range pool {
			p, _, _ := strings.Cut(d, ":")
			for i := range out.states {
				if out.states[i].Provider == policy.Provider(p) {
					out.states[i].Proposed = append(out.states[i].Proposed, d)
				}
			}
		}
	}
	for _, fam := range policy.FirstRunFamilies() {
		if sheet != nil {
			break
		}
		if !installed[fam.Provider] {
			continue
		}
		if fam.Provider == policy.Grok && in.spend == policy.APISpendDeny {
			// The seed: grok's login banner cannot prove subscription
			// routing, so every grok attempt is blocked under deny.
			out.notes = append(out.notes, "grok is left out: under apiSpend deny every grok attempt is blocked (its login cannot prove subscription routing); use --api-spend approved to include it")
			continue
		}
		e, ok := proposeEffort(fam, in.ceiling)
		if !ok {
			out.notes = append(out.notes, fmt.Sprintf("%s is left out: it supports no effort at or below --max-effort %s", fam.Descriptor(), in.ceiling))
			continue
		}
		d := string(fam.Provider) + ":" + fam.Model + "@" + string(e)
		if e != fam.DefaultEffort {
			out.notes = append(out.notes, fmt.Sprintf("effort lowered for the --max-effort ceiling: %s -> %s", fam.Descriptor(), d))
		}
		pool = append(pool, d)
		for i := range out.states {
			if out.states[i].Provider == fam.Provider {
				out.states[i].Proposed = append(out.states[i].Proposed, d)
			}
		}
	}
	switch {
	case sheet != nil && len(pool) == 0:
		out.notes = append(out.notes, "the sheet uses no provider descriptor: missing rows use the parent's own model (inherit-parent)")
	case sheet != nil:
		out.notes = append(out.notes, "the sheet exists: missing rows and access facts come only from the providers it already uses ("+strings.Join(pool, ", ")+")")
	case len(pool) == 0:
		out.notes = append(out.notes, "no first-run family's CLI (codex, grok, claude) is installed: rows use the parent's own model (inherit-parent)")
	}

	// Access facts: every external provider found, plus every provider a
	// row of the candidate uses, unless the sheet already has one.
	have := map[policy.Provider]bool{}
	if sheet != nil {
		for _, a := range sheet.Access {
			have[a.Provider] = true
		}
	}
	var access []string
	addAccess := func(p policy.Provider) {
		if have[p] {
			return
		}
		have[p] = true
		b, _ := json.Marshal(policy.AccessFact{Provider: p, Funding: in.funding, Capacity: in.capacity,
			APISpend: in.spend, Provenance: "user", Note: "proposed by switchyard setup"})
		access = append(access, "# access: "+string(b))
	}
	for _, d := range pool {
		p, _, _ := strings.Cut(d, ":")
		addAccess(policy.Provider(p))
	}
	for _, p := range in.found {
		if !p.Installed || p.Provider == policy.Gemini || (p.Provider == policy.Grok && in.spend == policy.APISpendDeny) {
			continue
		}
		if sheet == nil {
			addAccess(p.Provider)
		}
		if slices.Contains([]policy.Provider{policy.Devin, policy.Cursor, policy.Antigravity, policy.OpenCode}, p.Provider) && len(p.Models) > 0 {
			var ds []string
			for _, m := range p.Models {
				if m.Listed || m.InMatrix {
					ds = append(ds, m.Descriptor)
				}
			}
			if len(ds) > 8 {
				ds = append(ds[:8], fmt.Sprintf("… %d more (switchyard models --provider %s)", len(ds)-8, p.Provider))
			}
			if len(ds) > 0 {
				out.notes = append(out.notes, fmt.Sprintf("%s is installed; add one of its descriptors to a row by hand to use it: %s", p.Provider, strings.Join(ds, ", ")))
			}
		}
		if p.Provider == policy.OpenCode && in.spend != policy.APISpendApproved {
			out.notes = append(out.notes, "opencode's ordinary route runs only with apiSpend approved; with deny only its explicit ChatGPT-subscription attempts run")
		}
	}

	// Rows: the catalog rows the sheet lacks.
	var rows []string
	hasRow := map[int]bool{}
	if sheet != nil {
		for _, r := range sheet.Rows {
			hasRow[r.Catalog] = true
		}
	}
	for ci, cat := range opt.Catalog {
		if hasRow[ci] {
			continue
		}
		rows = append(rows, cat.Header+": "+proposeRow(cat, ci, pool))
	}

	var b strings.Builder
	if sheet == nil {
		b.WriteString("# Switchyard model sheet, proposed by `switchyard setup`.\n")
		b.WriteString("# Check it with: switchyard policy validate --sheet <this file> --parent " + string(in.parent) + "\n#\n")
		for _, a := range access {
			b.WriteString(a + "\n")
		}
		b.WriteString("# Recommended recovery: advance a chain on proven exhaustion or an unavailable route.\n")
		b.WriteString(`# fallback: {"on":["usage-exhausted","route-unavailable"]}` + "\n\n")
		for _, r := range rows {
			b.WriteString(r + "\n")
		}
	} else {
		b.Write(in.old)
		if len(in.old) > 0 && !strings.HasSuffix(string(in.old), "\n") {
			b.WriteString("\n")
		}
		if len(access) > 0 || len(rows) > 0 {
			b.WriteString("\n# Added by `switchyard setup`.\n")
		}
		for _, a := range access {
			b.WriteString(a + "\n")
		}
		for _, r := range rows {
			b.WriteString(r + "\n")
		}
	}
	out.text = b.String()
	if sheet != nil && len(access) == 0 && len(rows) == 0 {
		out.text = string(in.old)
	}
	cand, err := policy.ParseSheet([]byte(out.text), opt)
	if err == nil {
		_, err = policy.ValidateSheet(cand, in.parent, opt)
	}
	if err != nil {
		var pe *policy.PolicyError
		if errors.As(err, &pe) {
			return out, failf("the proposed sheet does not pass policy validate, so it is not offered:\n%s", strings.Join(pe.Issues, "\n"))
		}
		return out, failf("the proposed sheet does not pass policy validate: %v", err)
	}
	return out, nil
}

// sheetFamilies is the chain pool of an existing sheet: the first
// non-alias descriptor of each provider its rows use, normalized, in the
// order the sheet writes them (one per provider, so a proposed chain never
// repeats a provider).
func sheetFamilies(s *policy.Sheet) []string {
	var pool []string
	seen := map[policy.Provider]bool{}
	for _, r := range s.Rows {
		for _, seat := range r.Seats {
			for _, a := range seat.Attempts {
				a = policy.NormalizeAttempt(a)
				if a.Kind != policy.KindDescriptor || seen[a.Provider] {
					continue
				}
				seen[a.Provider] = true
				pool = append(pool, a.String())
			}
		}
	}
	return pool
}

// proposeRow is one catalog row's right-hand side from the pool.
func proposeRow(cat policy.RoleRow, ci int, pool []string) string {
	if cat.NativeOnly {
		if strings.HasPrefix(cat.Header, "why") {
			return "inherit-parent"
		}
		return "auto"
	}
	if len(pool) == 0 {
		if cat.Panel {
			seats := []string{"inherit-parent"}
			for len(seats) < cat.MinSeats {
				seats = append(seats, "auto")
			}
			return strings.Join(seats, ", ")
		}
		return "inherit-parent"
	}
	if cat.Panel {
		seats := slices.Clone(pool)
		for len(seats) < cat.MinSeats {
			seats = append(seats, "inherit-parent")
		}
		return strings.Join(seats, ", ")
	}
	// A chain: the pool rotated by the row's position, at most three
	// attempts, one per provider.
	var chain []string
	for i := range min(len(pool), 3) {
		chain = append(chain, pool[(ci+i)%len(pool)])
	}
	return strings.Join(chain, " -> ")
}

// printSetup is the text form: what was found, the notes and the diff.
func printSetup(w io.Writer, out setupOutput) {
	fmt.Fprintf(w, "sheet: %s (%s)\n", out.Sheet, map[bool]string{true: "exists", false: "new"}[out.Exists])
	for _, p := range out.Providers {
		line := fmt.Sprintf("  %-12s %s", p.Provider, p.Discovery)
		if len(p.Proposed) > 0 {
			line += "; proposed " + strings.Join(p.Proposed, ", ")
		}
		fmt.Fprintln(w, line)
	}
	for _, n := range out.Notes {
		fmt.Fprintln(w, "note: "+n)
	}
	if !out.Changed {
		return
	}
	fmt.Fprintln(w, "\nproposed change:")
	fmt.Fprint(w, out.Diff)
}

// lineDiff is a minimal line diff of a and b: unchanged lines prefixed
// "  ", removed "- ", added "+ ".
func lineDiff(a, b string) string {
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	}
	x, y := split(a), split(b)
	n, m := len(x), len(y)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			out.WriteString("  " + x[i] + "\n")
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			out.WriteString("+ " + y[j] + "\n")
			j++
		default:
			out.WriteString("- " + x[i] + "\n")
			i++
		}
	}
	return out.String()
}
