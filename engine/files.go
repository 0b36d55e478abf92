package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/switchyard-dev/switchyard/events"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// Files on disk. Directories are 0700 and files 0600; every file and
// execution directory is created exclusively, so nothing is created twice
// or written through a symlink.
const (
	runsDir      = "runs"
	worktreesDir = "worktrees"
	promptFile   = "prompt.md"
	artifactFile = "artifact.md"
	outputFile   = "output.md"
	receiptFile  = "receipt.json"
	progressFile = "progress.json"
	frozenPrompt = "prompt"
	// maxPromptBytes caps a run's prompt; it is copied once per attempt.
	// It matches the runner's own prompt limit.
	maxPromptBytes = 16 << 20
	// promptLimit and receiptLimit name the limits in errors.
	promptLimit  = "16 MiB prompt"
	receiptLimit = "policy.MaxReceiptBytes receipt"
)

// runDir is <DataDir>/runs/<run>.
func (e *Engine) runDir(run string) string { return filepath.Join(e.cfg.DataDir, runsDir, run) }

// executionDir is <DataDir>/runs/<run>/L<lane>/<execution>.
func (e *Engine) executionDir(run string, lane int, id string) string {
	return filepath.Join(e.runDir(run), events.LaneToken(lane), id)
}

// worktreeDir is <DataDir>/worktrees/<run>/L<lane>/<execution>.
func (e *Engine) worktreeDir(run string, lane int, id string) string {
	return filepath.Join(e.cfg.DataDir, worktreesDir, run, events.LaneToken(lane), id)
}

// freezePrompt writes the run's prompt once, exclusively, to
// <DataDir>/runs/<run>/prompt and returns its path, and whether this call
// created it (false: the same prompt was there already).
func (e *Engine) freezePrompt(run string, prompt []byte) (string, bool, error) {
	dir := e.runDir(run)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", false, fmt.Errorf("create run directory: %w", err)
	}
	path := filepath.Join(dir, frozenPrompt)
	err := publishExclusive(path, prompt)
	if errors.Is(err, fs.ErrExist) {
		// A Submit of the same run id that died before recording
		// run-created: the same prompt may be reused, never replaced.
		if prev, rerr := readLimited(path, maxPromptBytes, promptLimit); rerr == nil && bytes.Equal(prev, prompt) {
			return path, false, nil
		}
	}
	if err != nil {
		return "", false, fmt.Errorf("freeze prompt: %w", err)
	}
	return path, true, nil
}

// unfreezeStray removes the prompt Submit froze at path for run when the
// run turned out to be recorded already with another prompt (its files
// pruned, so nothing stopped the write): left there, it would sit beside
// that run's log as if it were its prompt. A recorded run whose prompt is
// this one keeps it (a racing Submit of the same prompt may have recorded
// it), and so does a run that cannot be read now.
func (e *Engine) unfreezeStray(ctx context.Context, run, path, digest string) {
	first, err := e.cfg.Store.Load(ctx, run, events.RunLane)
	if err != nil || len(first) == 0 {
		return
	}
	if c, ok := first[0].Payload.(events.RunCreated); !ok || c.PromptDigest == digest {
		return
	}
	if err := os.Remove(path); err == nil {
		_ = os.Remove(filepath.Dir(path)) // only when empty: the pruned run's own directory
	}
}

// launchSpec is what prepare needs to know about the attempt beyond the
// run: its route and provider (a native prompt carries the prepared worker
// contract) and the verdict whose reviewed state a writer's worktree
// starts from (nil: the checkout's HEAD).
type launchSpec struct {
	route policy.Route
	// provider is the attempt's provider (the parent's own for an alias).
	provider policy.Provider
	// reviewed is the lane's latest clear verdict when it names the
	// reviewed state the next writer starts from; nil otherwise.
	reviewed *events.Verdict
}

// prepare creates execution id's private directory with a verified copy of
// the run's frozen prompt, and for a writer its fresh worktree, and returns
// the execution's paths. Output, receipt and progress are only named: the
// runner creates them exclusively. A continue decision's prepared
// execution supplies the output, receipt and workspace it names.
//
// A continuation's prompt copy ends with a note naming the parent's
// correction and the snapshot it continues from (continuationNote).
//
// A native attempt has no runner to prepend the worker contract, so its
// prompt copy is the prepared contract (providers.PrepareContract: route
// native, the run's mode, contract legacy), the assignment (working
// directory and, for a read-only lane, its distinct output artifact), then
// the task. An external attempt's copy is the task alone: the runner
// prepends the same contract.
//
// A fresh writer worktree starts from the reviewed state the lane's clear
// verdict named, else from the checkout's HEAD, resolved to its commit
// first; the returned base says which (nil for read-only lanes and
// continuations).
func (e *Engine) prepare(ctx context.Context, c *events.RunCreated, run string, lane int, id string, prepared *policy.ExecutionIdentity, note string, spec launchSpec) (events.Paths, *events.WorktreeBase, error) {
	dir := e.executionDir(run, lane, id)
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return events.Paths{}, nil, err
	}
	err := os.Mkdir(dir, 0o700)
	if prepared != nil && errors.Is(err, fs.ErrExist) {
		// A continuation's id is fixed by its recorded recovery: an engine
		// that died after preparing it and before recording the continue
		// left this directory, in which nothing ran (the job is published
		// only after the continue is recorded). Prepare it afresh.
		if err = clearUnlaunched(dir); err == nil {
			err = os.Mkdir(dir, 0o700)
		}
	}
	if err != nil {
		return events.Paths{}, nil, fmt.Errorf("execution directory: %w", err)
	}
	prompt, err := readLimited(c.PromptPath, maxPromptBytes, promptLimit)
	if err != nil {
		return events.Paths{}, nil, fmt.Errorf("read frozen prompt: %w", err)
	}
	if got := events.Digest(prompt); got != c.PromptDigest {
		return events.Paths{}, nil, fmt.Errorf("frozen prompt %s changed: digest %s, run-created recorded %s", c.PromptPath, got, c.PromptDigest)
	}
	p := events.Paths{
		Prompt: filepath.Join(dir, promptFile), Output: filepath.Join(dir, outputFile),
		Receipt: filepath.Join(dir, receiptFile), Progress: filepath.Join(dir, progressFile), Cwd: c.Cwd,
	}
	switch {
	case prepared != nil:
		p.Output, p.Receipt, p.Cwd = prepared.OutputPath, prepared.ReceiptPath, prepared.WorkspacePath
		if c.Access == policy.IsolatedWrite {
			p.Worktree = prepared.WorkspacePath // prepared by the recover
		}
	case c.Access == policy.IsolatedWrite:
		p.Worktree = e.worktreeDir(run, lane, id)
		p.Cwd = p.Worktree
	}
	if spec.route == policy.RouteNative && c.Access == policy.ReadOnly {
		p.Artifact = filepath.Join(dir, artifactFile)
	}
	if note != "" {
		prompt = append(append(prompt[:len(prompt):len(prompt)], "\n\n"...), note...)
	}
	if spec.route == policy.RouteNative {
		if prompt, err = nativePrompt(c, spec.provider, p, prompt); err != nil {
			return events.Paths{}, nil, err
		}
	}
	if err := writeExclusive(p.Prompt, prompt); err != nil {
		return events.Paths{}, nil, err
	}
	if prepared != nil || c.Access != policy.IsolatedWrite {
		return p, nil, nil
	}
	base := &events.WorktreeBase{Source: events.BaseCheckoutHead, Ref: "HEAD"}
	if v := spec.reviewed; v != nil && v.FromCommit != "" {
		base = &events.WorktreeBase{Source: events.BaseReviewed, Ref: v.FromRef, Commit: v.FromCommit}
	} else {
		head, err := resolveCommit(ctx, c.Cwd, "HEAD")
		if err != nil {
			return events.Paths{}, nil, fmt.Errorf("resolve the checkout's HEAD: %w", err)
		}
		base.Commit = head
	}
	if err := e.addWorktreeAt(ctx, c.Cwd, p.Worktree, base.Commit); err != nil {
		return events.Paths{}, nil, err
	}
	return p, base, nil
}

// nativePrompt is a native attempt's prompt: the prepared worker contract
// (providers.PrepareContract, route native: the one source `switchyard
// contract prepare` prints, ending with "Assigned task:"), then the
// assignment the parent passes in the Agent prompt (the seed: access mode,
// working directory, and the unique output location), then the task. A
// strict contract has no native text (the lane ends unsupported and is
// never handed out), so its copy is the task alone.
func nativePrompt(c *events.RunCreated, provider policy.Provider, p events.Paths, task []byte) ([]byte, error) {
	contract, err := providers.PrepareContract(providers.ContractRequest{
		Parent: c.Parent, Provider: provider, Route: providers.RouteNative, Mode: c.Access, Contract: c.Options.Contract,
	})
	if errors.Is(err, providers.ErrStrictUnsupported) {
		return task, nil
	}
	if err != nil {
		return nil, fmt.Errorf("prepare the native worker contract: %w", err)
	}
	var b strings.Builder
	b.WriteString(contract)
	b.WriteString("Access mode: " + string(c.Access) + "\n")
	if c.Access == policy.IsolatedWrite {
		b.WriteString("Working directory: " + p.Cwd + " (your dedicated worktree; edit files only here)\n")
	} else {
		b.WriteString("Checkout to inspect (do not modify it): " + p.Cwd + "\n")
		b.WriteString("Output artifact (the only file you may write): " + p.Artifact + "\n")
	}
	b.WriteString("\n")
	b.Write(task)
	return []byte(b.String()), nil
}

// addWorktreeAt adds a fresh detached git worktree of repo's commit rev at
// path. Earlier attempts' worktrees are never touched.
func (e *Engine) addWorktreeAt(ctx context.Context, repo, path, rev string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	e.gitMu.Lock()
	defer e.gitMu.Unlock()
	if _, err := git(ctx, repo, "worktree", "add", "--detach", "--quiet", path, rev+"^{commit}"); err != nil {
		return fmt.Errorf("git worktree add %s %s: %w", path, rev, err)
	}
	return nil
}

// resolveCommit resolves ref to the full id of the commit it names in the
// repository at dir (git rev-parse --verify <ref>^{commit}). A ref that
// names no commit there is an invalid request naming it.
func resolveCommit(ctx context.Context, dir, ref string) (string, error) {
	if strings.TrimSpace(ref) == "" || strings.HasPrefix(ref, "-") || strings.ContainsAny(ref, "\x00\n\r") {
		return "", invalidf("--from %q is not a commit or snapshot ref; name the reviewed commit (a full or short id) or a ref such as refs/snapshots/lane0", ref)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", invalidf("--from %q cannot be resolved here: the run's repository %s is not a directory on this host; run inspect where the checkout is", ref, dir)
	}
	out, err := git(ctx, dir, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return "", invalidf("--from %q names no commit in %s (git rev-parse --verify %s^{commit} fails); name the commit or snapshot ref you reviewed, as it exists in that repository", ref, dir, ref)
	}
	commit := strings.TrimSpace(out)
	if events.ValidateCommit("commit", commit) != nil {
		return "", fmt.Errorf("git rev-parse %s^{commit} in %s printed %q, not a commit id", ref, dir, commit)
	}
	return commit, nil
}

// checkWorkTree reports whether dir is inside a git work tree with a HEAD
// commit, which writer runs need for their worktrees.
func checkWorkTree(ctx context.Context, dir string) error {
	out, err := git(ctx, dir, "rev-parse", "--is-inside-work-tree", "--verify", "HEAD")
	if err != nil {
		return err
	}
	if !strings.HasPrefix(out, "true") {
		return fmt.Errorf("%s is not inside a git work tree", dir)
	}
	return nil
}

// git runs git -C dir args and returns its stdout; stderr goes into the
// error.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// writeExclusive creates path (which must not exist; a symlink there is
// refused too) with mode 0600 and writes b.
func writeExclusive(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// publishExclusive is writeExclusive for a file that others may read while
// it is made (the frozen prompt, which racing submissions of one run id
// compare): b is written to a temporary file beside path and linked there,
// so path holds all of b or does not exist, also after a crash. Linking
// fails when path exists, a symlink included.
func publishExclusive(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Link(tmp, path)
}

// readLimited reads at most limit bytes of a regular file, refusing a larger
// one (with an error naming the limit, name) and a final symlink.
func readLimited(path string, limit int64, name string) ([]byte, error) {
	f, err := openNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	// Sized from the file (os.ReadFile's way): one read for its bytes and
	// one for the end, not a buffer grown from 512 bytes.
	b := make([]byte, 0, min(st.Size(), limit)+1)
	b, err = readAllInto(io.LimitReader(f, limit+1), b)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is over the %s limit (%d bytes)", path, name, limit)
	}
	return b, nil
}

// readAllInto appends r's bytes to b until EOF (io.ReadAll into a buffer
// the caller sized).
func readAllInto(r io.Reader, b []byte) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// openNoFollow opens path for reading, refusing a final symlink.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
}

// removeUnlaunched removes what an engine prepared for executions it never
// launched: it died between preparing an attempt's files and recording the
// launch, and the restarted engine decided again under a fresh id. Called
// once every lane is final, so no launch of this run can still be in
// flight. Nothing ran there, so an execution directory holds the prompt
// copy alone (or nothing, when the engine died before writing it) and a
// writer's worktree is unmodified; anything else is left in place and
// logged. Failures are logged: they never hold up run-final.
func (d *driver) removeUnlaunched(ctx context.Context) {
	e := d.e
	for i := range d.r.Lanes {
		lane := events.LaneToken(i)
		for _, id := range d.unlaunched(filepath.Join(e.runDir(d.run), lane)) {
			dir := e.executionDir(d.run, i, id)
			if err := clearUnlaunched(dir); err != nil {
				d.log.Warn("cannot remove an execution directory never launched", "lane", i, "execution", id, "err", err)
				continue
			}
			d.log.Info("removed an execution directory prepared but never launched", "lane", i, "execution", id)
		}
		for _, id := range d.unlaunched(filepath.Join(e.cfg.DataDir, worktreesDir, d.run, lane)) {
			path := e.worktreeDir(d.run, i, id)
			e.gitMu.Lock()
			// Without --force: git refuses a worktree with changes.
			_, err := git(ctx, d.r.Created.Cwd, "worktree", "remove", path)
			e.gitMu.Unlock()
			if err != nil {
				d.log.Warn("cannot remove a worktree never launched; left in place", "lane", i, "execution", id, "err", err)
				continue
			}
			d.log.Info("removed a worktree prepared but never launched", "lane", i, "execution", id)
		}
	}
}

// unlaunched lists the entries of dir (if it exists) that name no launched
// execution.
func (d *driver) unlaunched(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			d.log.Warn("cannot list prepared executions", "dir", dir, "err", err)
		}
		return nil
	}
	var ids []string
	for _, ent := range entries {
		if !d.launched[ent.Name()] {
			ids = append(ids, ent.Name())
		}
	}
	return ids
}

// clearUnlaunched removes an execution directory that was prepared but
// never launched: empty (the engine died before writing the prompt copy)
// or holding the prompt copy alone. Anything else is refused.
func clearUnlaunched(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) > 1 || (len(entries) == 1 && (entries[0].Name() != promptFile || !entries[0].Type().IsRegular())) {
		return fmt.Errorf("%s holds more than its prompt copy; left in place", dir)
	}
	if len(entries) == 1 {
		if err := os.Remove(filepath.Join(dir, promptFile)); err != nil {
			return err
		}
	}
	return os.Remove(dir)
}
