package runner

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchyard-dev/switchyard/activities/sandbox"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// containment is how one attempt is contained: its class, what verified
// it, and when the sandbox applies, the policy every child runs under and
// the egress proxy it may reach.
type containment struct {
	class        providers.ContainmentClass
	by           string
	unrestricted bool
	policy       *sandbox.Policy // nil: children start unsandboxed
	proxy        *sandbox.Proxy
	env          []string // proxy variables and TMPDIR for every child
}

// ContainmentOf is what an attempt of spec in mode runs under given the
// host's sandbox report: the kernel's verified class; else the
// provider's own verified sandbox (codex); else UNVERIFIED with why and
// the fix (the sandbox report's when it has one).
func ContainmentOf(rep sandbox.Report, spec *providers.Spec, mode policy.Access) (class providers.ContainmentClass, by, why, fix string) {
	v := rep.For(mode)
	if v.Verified {
		return v.Class, v.By, "", ""
	}
	if providers.CheckContainment(spec, mode) == nil {
		c := providers.ContainmentFor(spec, mode)
		return c.Class, "the provider's own sandbox (" + c.Reason + ")", "", ""
	}
	c := providers.ContainmentFor(spec, mode)
	return providers.ContainmentUnverified, "", "the sandbox is unverified on this host: " + v.Why + "; " + string(spec.Provider) + "'s own: " + c.Reason, v.Fix
}

// decideContainment settles the attempt's containment before anything
// starts. A mode without its verified class fails closed
// (unsupported-capability) unless --allow-unverified-containment accepts
// an unrestricted attempt. It reports whether the attempt was refused.
func (a *attempt) decideContainment() bool {
	rep := a.r.cfg.Containment()
	class, by, why, fix := ContainmentOf(rep, a.spec, a.o.Mode)
	want := providers.RequiredContainment(a.o.Mode)
	switch {
	case class == want && rep.For(a.o.Mode).Verified:
		a.cont = &containment{class: class, by: by, policy: &sandbox.Policy{}}
	case class == want:
		a.cont = &containment{class: class, by: by}
	case a.o.AllowUnverifiedContainment:
		a.cont = &containment{class: providers.ContainmentUnverified, unrestricted: true}
	default:
		a.cont = &containment{class: providers.ContainmentUnverified}
		a.failPreflight(policy.StatusUnsupportedCapability, policy.PreflightNotRun,
			fmt.Sprintf("%s %s containment is %s, not the required %s; fix: %s, or pass --allow-unverified-containment to accept an unrestricted contract (run --allow-unverified-containment %s), or route the lane to a provider with %s containment",
				a.o.Provider, a.o.Mode, class, want, fix, a.o.Provider, want),
			"containment "+string(class)+": "+why+"; no CLI was started")
		return true
	}
	return false
}

// prepareSandbox fills the sandbox policy once the private directory
// exists: writable are the private directory (with the private TMPDIR in
// it), the CLI's state directories and, for a writer, its worktree
// except .git; TCP connect reaches only the attempt's egress proxy,
// which forwards only to the provider's API hosts.
func (a *attempt) prepareSandbox() error {
	if a.cont == nil || a.cont.policy == nil {
		return nil
	}
	// The private TMPDIR is a fresh 0700 directory under /tmp, not in the
	// private directory (some specs check that it holds exactly their
	// files) and not beside it: a Unix socket path holds at most 107
	// bytes, and a CLI that makes sockets in TMPDIR (the sandbox runtime
	// srt: "Failed to create bridge sockets") fails under a long one. It
	// is removed with the private area.
	tmp, err := a.area.tempDir()
	if err != nil {
		return err
	}
	writable := []string{a.area.dir, tmp}
	if a.spec.StateDirs != nil {
		for _, d := range a.spec.StateDirs(a.req.Home, a.r.cfg.Env) {
			d = filepath.Clean(d)
			st, err := os.Lstat(d)
			switch {
			case errors.Is(err, os.ErrNotExist):
				if filepath.Ext(d) == ".json" {
					continue // a state file the CLI has not written yet stays unwritable
				}
				if err := os.MkdirAll(d, 0o700); err != nil {
					return fmt.Errorf("create state directory %s: %w", d, err)
				}
			case err != nil:
				return err
			case st.Mode()&os.ModeSymlink != 0:
				// A symlinked state directory is granted where it points.
				if d, err = filepath.EvalSymlinks(d); err != nil {
					return err
				}
			}
			writable = append(writable, d)
		}
	}
	extra, err := extraWritable(a.r.cfg.Env[EnvSandboxWritable])
	if err != nil {
		return err
	}
	writable = append(writable, extra...)
	if a.o.Mode == policy.IsolatedWrite {
		w, err := sandbox.WorktreeWritable(a.req.Cwd)
		if err != nil {
			return err
		}
		writable = append(writable, w...)
	}
	p, err := sandbox.StartProxy(a.spec.APIHosts, nil)
	if err != nil {
		return err
	}
	a.cont.proxy = p
	a.cont.policy.Writable = writable
	a.cont.policy.ConnectPort = p.Port()
	a.cont.env = append(p.Env(), "TMPDIR="+tmp, "TMP="+tmp, "TEMP="+tmp)
	return nil
}

// allowCapture lets a contained CLI write a capture file the runner reads
// after the workload (Devin's export): its directory, which must be one
// the attempt created, becomes writable.
func (a *attempt) allowCapture(p string) error {
	if a.cont == nil || a.cont.policy == nil {
		return nil
	}
	d := filepath.Dir(p)
	if !slices.Contains(a.area.dirs, d) && !a.area.owns(d) {
		return fmt.Errorf("capture directory %s is not one the attempt created", d)
	}
	if !slices.Contains(a.cont.policy.Writable, d) {
		a.cont.policy.Writable = append(a.cont.policy.Writable, d)
	}
	return nil
}

// EnvSandboxWritable names extra directories every contained attempt may
// write, colon-separated absolute paths of existing directories (a shared
// build cache; the simulated CLIs' log directory in tests). Each widens
// the containment; an unusable entry fails the attempt closed.
const EnvSandboxWritable = "SWITCHYARD_SANDBOX_WRITABLE"

func extraWritable(v string) ([]string, error) {
	var out []string
	for _, d := range strings.Split(v, ":") {
		if d == "" {
			continue
		}
		if !filepath.IsAbs(d) || filepath.Clean(d) != d {
			return nil, fmt.Errorf("%s entry %q is not a clean absolute path", EnvSandboxWritable, d)
		}
		if err := realDir(d); err != nil {
			return nil, fmt.Errorf("%s entry: %w", EnvSandboxWritable, err)
		}
		out = append(out, d)
	}
	return out, nil
}

// sandboxed returns a child's environment with the containment's
// variables and the function that starts it confined, or the environment
// unchanged and a nil start when the attempt runs unsandboxed.
func (a *attempt) sandboxed(env []string) ([]string, func(*exec.Cmd) (func(), error), error) {
	if a.cont == nil || a.cont.policy == nil {
		return env, nil, nil
	}
	if a.cont.proxy == nil {
		return nil, nil, errors.New("the sandbox was not prepared")
	}
	override := func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.ContainsFunc(a.cont.env, func(o string) bool { return strings.HasPrefix(o, name+"=") })
	}
	env = append(slices.DeleteFunc(slices.Clone(env), override), a.cont.env...)
	// A variable that would hand a child a policy is never passed on.
	env = slices.DeleteFunc(env, sandbox.IsSandboxVar)
	pol := *a.cont.policy
	return env, func(cmd *exec.Cmd) (func(), error) { return sandbox.StartConfined(pol, cmd) }, nil
}

// closeContainment stops the proxy and records the containment and what
// the proxy refused in the receipt.
func (a *attempt) closeContainment() {
	if a.cont == nil {
		return
	}
	rc := &policy.ReceiptContainment{Class: string(a.cont.class), By: a.cont.by, Unrestricted: a.cont.unrestricted}
	if a.cont.proxy != nil {
		a.cont.proxy.Close()
		for _, d := range a.cont.proxy.Denials() {
			rc.Denied = append(rc.Denied, "egress proxy refused "+d.String())
		}
	}
	a.rc.Containment = rc
}
