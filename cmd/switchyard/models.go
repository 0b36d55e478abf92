package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// defaultModelsTimeout bounds each discovery probe.
const defaultModelsTimeout = 20 * time.Second

// exitModelsFailed is models' exit code when an installed CLI's discovery
// failed (timed out, exited nonzero, or printed a listing it could not
// read); exitModelsUnavailable when a provider --provider names is not
// installed.
const (
	exitModelsFailed      = 1
	exitModelsUnavailable = 69
)

// modelsOutput is `switchyard models --json`.
type modelsOutput struct {
	Providers []modelsProvider `json:"providers"`
}

// modelsProvider is one provider's discovery.
type modelsProvider struct {
	Provider   policy.Provider `json:"provider"`
	Installed  bool            `json:"installed"`
	Executable string          `json:"executable,omitempty"`
	// Discovery: listed (the listing was read), no-listing (the CLI has
	// no listing command; the matrix rows are shown), not-installed,
	// timed-out, failed (nonzero exit), unrecognized (the listing's format
	// is not the known one; nothing is guessed).
	Discovery string                  `json:"discovery"`
	Probe     []string                `json:"probe,omitempty"` // argv after the binary
	Detail    string                  `json:"detail,omitempty"`
	Fix       string                  `json:"fix,omitempty"`
	Models    []providers.ModelChoice `json:"models"`
}

// Discovery states.
const (
	discoveryListed       = "listed"
	discoveryNoListing    = "no-listing"
	discoveryNotInstalled = "not-installed"
	discoveryTimedOut     = "timed-out"
	discoveryFailed       = "failed"
	discoveryUnrecognized = "unrecognized"
)

func newModelsCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		provider string
		asJSON   bool
		timeout  time.Duration
	)
	c := &cobra.Command{
		Use:   "models [--provider P,...] [--json] [--timeout D]",
		Short: "List the models each installed provider CLI offers, as descriptors with their allowed efforts",
		Long: `Ask each installed provider CLI which models it can run and print them as
descriptors (provider:model@effort) with the efforts the provider allows,
marking which the model matrix knows.

Discovery probes (each bounded by --timeout, run with the environment the
runner would give the CLI, stdin closed):

  devin        devin models list --format json   (families[].variants[].model_uid)
  cursor       cursor-agent models               ("<slug> - <name>"; auto is never a descriptor)
  opencode     opencode models                   (provider/model per line)
  antigravity  agy models                        (slug first on each line; auto is never a descriptor)
  grok         grok models                       (the "Available models:" section)
  claude, codex, gemini: no listing command; the matrix rows are shown and
               a real attempt proves access.

Efforts: matrix rows keep their selectable efforts; cursor, antigravity and
opencode models take only "default" (the slug carries any variant); a
listed Devin UID takes "default" (the effort is part of the UID), while the
legacy swe-2 family maps medium/high/max to its UIDs.

A listing proves discovery only: it never proves the account can run a
model. A listing whose format is not the known one is reported as
"unrecognized" and nothing is guessed.

Exit codes: 0 when every installed CLI's discovery worked; 1 when one
failed, timed out or was unrecognized; 69 when a provider --provider
names is not installed; 64 on a usage error.`,
		Example: `  switchyard models
  switchyard models --provider devin
  switchyard models --provider antigravity --json | jq -r '.providers[0].models[].descriptor'
  switchyard models --timeout 60s`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if timeout <= 0 {
				return usagef("--timeout %s: want a positive duration such as 20s", timeout)
			}
			want, err := modelsProviders(provider)
			if err != nil {
				return err
			}
			out := modelsOutput{}
			for _, p := range want {
				out.Providers = append(out.Providers, discoverModels(cmd.Context(), p, doctorEnv(), timeout))
			}
			if asJSON {
				if err := writeDoc(stdout, out); err != nil {
					return err
				}
			} else {
				printModels(stdout, out)
			}
			return modelsExit(out, provider != "")
		},
	}
	c.Flags().StringVar(&provider, "provider", "", "only these providers, comma-separated ("+providerList()+")")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON (schemaVersion "+fmt.Sprint(jsonSchemaVersion)+", documented in docs/SHEETS.md)")
	c.Flags().DurationVar(&timeout, "timeout", defaultModelsTimeout, "bound on each discovery probe")
	return wireCommand(c, stderr)
}

// modelsProviders parses models' --provider: a comma list of providers
// (as every command takes), or "" for every known provider.
func modelsProviders(flag string) ([]policy.Provider, error) {
	if flag == "" {
		return providers.Names(), nil
	}
	var want []policy.Provider
	for _, name := range strings.Split(flag, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		p := policy.Provider(name)
		if _, err := providers.Lookup(p); err != nil {
			return nil, usagef("--provider %q: unknown provider; known: %s", name, providerList())
		}
		if slices.Contains(want, p) {
			return nil, usagef("--provider lists %q twice", name)
		}
		want = append(want, p)
	}
	if len(want) == 0 {
		return nil, usagef("--provider %q names no provider; for example --provider devin,cursor", flag)
	}
	return want, nil
}

func providerList() string {
	var names []string
	for _, p := range providers.Names() {
		names = append(names, string(p))
	}
	return strings.Join(names, ", ")
}

// modelsExit is the exit status of a finished discovery; asked is whether
// --provider named the providers.
func modelsExit(out modelsOutput, asked bool) error {
	for _, p := range out.Providers {
		switch p.Discovery {
		case discoveryNotInstalled:
			if asked {
				return &exitError{code: exitModelsUnavailable}
			}
		case discoveryTimedOut, discoveryFailed, discoveryUnrecognized:
			return &exitError{code: exitModelsFailed}
		}
	}
	return nil
}

// discoverModels runs one provider's discovery.
func discoverModels(ctx context.Context, p policy.Provider, env map[string]string, timeout time.Duration) modelsProvider {
	spec, _ := providers.Lookup(p)
	out := modelsProvider{Provider: p, Models: []providers.ModelChoice{}}
	exe, err := providers.Discover(spec, env)
	if err != nil {
		out.Discovery = discoveryNotInstalled
		out.Fix = spec.Install
		return out
	}
	out.Installed, out.Executable = true, exe
	probe := providers.ModelsProbeFor(p)
	if probe.Argv == nil {
		out.Discovery = discoveryNoListing
		out.Detail = "the " + string(p) + " CLI has no model listing; a real attempt proves which models the account can run"
		out.Models = nonNil(providers.Choices(p, nil))
		return out
	}
	out.Probe = probe.Argv
	home := env["HOME"]
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	req := providers.Request{Provider: p, Home: home, APISpend: policy.APISpendLegacy, ParentEnv: env}
	res := runBoundedProbe(ctx, append([]string{exe}, probe.Argv...), providers.ChildEnv(spec, env, req, nil), timeout)
	probeText := filepath.Base(exe) + " " + strings.Join(probe.Argv, " ")
	switch {
	case res.timedOut:
		out.Discovery = discoveryTimedOut
		out.Detail = fmt.Sprintf("%s did not answer within %s", probeText, timeout)
		out.Fix = "run `" + probeText + "` by hand, or raise --timeout"
		return out
	case res.err != nil:
		out.Discovery = discoveryFailed
		out.Detail = probeText + " could not start"
		return out
	case res.signal != "" || res.exit != 0:
		out.Discovery = discoveryFailed
		how := fmt.Sprintf("exit %d", res.exit)
		if res.signal != "" {
			how = "signal " + res.signal
		}
		out.Detail = fmt.Sprintf("%s failed (%s)", probeText, how)
		out.Fix = "run `" + probeText + "` by hand; sign in to the " + string(p) + " CLI if it asks"
		return out
	case res.overflow:
		out.Discovery = discoveryUnrecognized
		out.Detail = fmt.Sprintf("%s printed more than %d bytes; refused rather than cut", probeText, providers.ModelsOutputCap)
		return out
	}
	ids, err := probe.Read(res.stdout)
	if err != nil {
		out.Discovery = discoveryUnrecognized
		out.Detail = err.Error()
		out.Fix = "the CLI's listing format changed; pick an exact model by hand and let a real attempt prove it"
		return out
	}
	out.Discovery = discoveryListed
	if len(ids) == 0 {
		out.Detail = "the listing is empty (for opencode a cold registry lists nothing; it is no access evidence)"
	}
	out.Models = nonNil(providers.Choices(p, ids))
	return out
}

func nonNil(c []providers.ModelChoice) []providers.ModelChoice {
	if c == nil {
		return []providers.ModelChoice{}
	}
	return c
}

// boundedResult is one discovery probe's outcome.
type boundedResult struct {
	stdout             []byte
	exit               int
	signal             string
	timedOut, overflow bool
	err                error
}

// runBoundedProbe runs argv with env and stdin /dev/null, bounded by
// timeout; the process group is killed on timeout. Stdout beyond
// providers.ModelsOutputCap marks overflow.
func runBoundedProbe(ctx context.Context, argv, env []string, timeout time.Duration) boundedResult {
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(pctx, argv[0], argv[1:]...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	var stdout bytes.Buffer
	lim := &limitWriter{b: &stdout, max: providers.ModelsOutputCap}
	cmd.Stdout, cmd.Stderr = lim, io.Discard
	err := cmd.Run()
	res := boundedResult{stdout: stdout.Bytes(), overflow: lim.over}
	if pctx.Err() != nil && ctx.Err() == nil {
		res.timedOut = true
		return res
	}
	res.exit, res.signal, res.err = exitOf(err)
	return res
}

// limitWriter keeps the first max bytes and notes any beyond them.
type limitWriter struct {
	b     *bytes.Buffer
	max   int
	total int
	over  bool
}

func (w *limitWriter) Write(p []byte) (int, error) {
	if room := w.max - w.b.Len(); room > 0 {
		w.b.Write(p[:min(len(p), room)])
	}
	w.total += len(p)
	w.over = w.total > w.max
	return len(p), nil
}

// printModels is the text form: one block per provider.
func printModels(w io.Writer, out modelsOutput) {
	for i, p := range out.Providers {
		if i > 0 {
			fmt.Fprintln(w)
		}
		head := fmt.Sprintf("%s: %s", p.Provider, p.Discovery)
		if p.Executable != "" {
			head += " (" + p.Executable + ")"
		}
		fmt.Fprintln(w, head)
		if p.Detail != "" {
			fmt.Fprintln(w, "  "+p.Detail)
		}
		if p.Fix != "" {
			fmt.Fprintln(w, "  fix: "+p.Fix)
		}
		for _, m := range p.Models {
			var marks []string
			if m.InMatrix {
				marks = append(marks, "matrix:"+m.Family)
			}
			if m.Listed {
				marks = append(marks, "listed")
			}
			efforts := make([]string, len(m.Efforts))
			for j, e := range m.Efforts {
				efforts[j] = string(e)
				if e == m.DefaultEffort {
					efforts[j] += "*"
				}
			}
			fmt.Fprintf(w, "  %-48s efforts %-32s %s\n", m.Descriptor, strings.Join(efforts, ","), strings.Join(marks, " "))
		}
	}
	fmt.Fprintln(w, "\n* default effort. A listing proves discovery, not account access: a real attempt (or switchyard doctor --probe) proves that.")
}
