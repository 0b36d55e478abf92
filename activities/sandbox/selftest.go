package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// Verification is what the self-test proved for one access mode's class.
type Verification struct {
	Mode policy.Access `json:"mode"`
	// Class is the mode's class when Verified, else UNVERIFIED.
	Class    providers.ContainmentClass `json:"class"`
	Verified bool                       `json:"verified"`
	// By names the mechanism that enforces it ("the kernel (Landlock ABI
	// 7)"); "" when unverified.
	By string `json:"by,omitempty"`
	// Why says what failed and Fix how to make the class verifiable
	// (both "" when Verified).
	Why string `json:"why,omitempty"`
	Fix string `json:"fix,omitempty"`
}

// String is one line for doctor and logs.
func (v Verification) String() string {
	if v.Verified {
		return fmt.Sprintf("%s verified by %s", v.Class, v.By)
	}
	return fmt.Sprintf("%s (%s; fix: %s)", v.Class, v.Why, v.Fix)
}

// Report is a self-test's outcome for both access modes.
type Report struct {
	ABI      int          `json:"abi"`
	ReadOnly Verification `json:"readOnly"`
	Writer   Verification `json:"writer"`
}

// For returns the verification of mode's class.
func (r Report) For(mode policy.Access) Verification {
	if mode == policy.IsolatedWrite {
		return r.Writer
	}
	return r.ReadOnly
}

// SelfTestOptions configure SelfTest.
type SelfTestOptions struct {
	// Exe is the launcher (the switchyard binary, or a test binary whose
	// TestMain calls Enter); "" uses os.Executable.
	Exe string
	// ABI reports the kernel's Landlock ABI; nil uses KernelABI. Tests
	// inject 0 to simulate a host without Landlock.
	ABI func() int
	// Timeout bounds each sandboxed child; 0 means 30s.
	Timeout time.Duration
}

// Unverified returns a report with both classes UNVERIFIED for why.
func Unverified(abi int, why, fix string) Report {
	v := func(m policy.Access) Verification {
		return Verification{Mode: m, Class: providers.ContainmentUnverified, Why: why, Fix: fix}
	}
	return Report{ABI: abi, ReadOnly: v(policy.ReadOnly), Writer: v(policy.IsolatedWrite)}
}

// fixKernel is the fix line for a host without a usable Landlock.
const fixKernel = "run the worker on Linux 6.12 or newer with Landlock enabled (CONFIG_SECURITY_LANDLOCK=y and landlock in the kernel's lsm= list), or pass --allow-unverified-containment P to run that provider unrestricted"

// SelfTest proves the sandbox on this host: for each access mode a
// sandboxed child (a re-exec of opts.Exe) must be refused by the kernel a
// write outside its writable paths and a TCP connect to a loopback
// listener that is not the proxy, must be refused by the proxy a request
// to a host off its allowlist, and must succeed in a write to its private
// directory and a request through the proxy to an allowed loopback
// stand-in; a writer additionally must write in its worktree and be
// refused in the worktree's .git. Any other outcome leaves the mode's
// class UNVERIFIED with the reason.
func SelfTest(ctx context.Context, opts SelfTestOptions) Report {
	abiOf := opts.ABI
	if abiOf == nil {
		abiOf = KernelABI
	}
	abi := abiOf()
	if !available {
		return Unverified(0, "no sandbox for "+runtime.GOOS+" (Landlock is Linux-only)", "run the worker on Linux 6.12 or newer, or pass --allow-unverified-containment P to run that provider unrestricted")
	}
	if abi == 0 {
		return Unverified(0, "Landlock is not available on this host (the kernel lacks it or it is not in the lsm= list)", fixKernel)
	}
	if abi < MinABI {
		return Unverified(abi, fmt.Sprintf("Landlock ABI %d is older than the %d containment needs", abi, MinABI), fixKernel)
	}
	exe := opts.Exe
	if exe == "" {
		var err error
		if exe, err = Executable(); err != nil {
			return Unverified(abi, "the switchyard binary's path is unknown: "+err.Error(), "run switchyard from a path the kernel can report")
		}
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	f, err := newFixture()
	if err != nil {
		return Unverified(abi, "self-test setup failed: "+err.Error(), "check that the temporary directory is writable")
	}
	defer f.close()
	r := Report{ABI: abi}
	r.ReadOnly = f.verify(ctx, exe, timeout, abi, policy.ReadOnly)
	r.Writer = f.verify(ctx, exe, timeout, abi, policy.IsolatedWrite)
	return r
}

// fixture is the self-test's world: a checkout, a worktree with .git, a
// private directory, an allowed stand-in, a forbidden listener and the
// proxy.
type fixture struct {
	root, checkout, worktree, private string
	standIn                           *http.Server
	standInAddr                       string
	forbidden                         net.Listener
	accepted                          atomic.Int64
	proxy                             *Proxy
}

func newFixture() (*fixture, error) {
	root, err := os.MkdirTemp("", "switchyard-sandbox-selftest-")
	if err != nil {
		return nil, err
	}
	f := &fixture{root: root, checkout: filepath.Join(root, "checkout"), worktree: filepath.Join(root, "worktree"), private: filepath.Join(root, "private")}
	for _, d := range []string{f.checkout, filepath.Join(f.worktree, "src"), filepath.Join(f.worktree, ".git"), f.private} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			f.close()
			return nil, err
		}
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		f.close()
		return nil, err
	}
	f.standInAddr = ln.Addr().String()
	f.standIn = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }), ReadHeaderTimeout: 10 * time.Second}
	go f.standIn.Serve(ln)
	if f.forbidden, err = net.Listen("tcp4", "127.0.0.1:0"); err != nil {
		f.close()
		return nil, err
	}
	go func() {
		for {
			c, err := f.forbidden.Accept()
			if err != nil {
				return
			}
			f.accepted.Add(1)
			c.Close()
		}
	}()
	if f.proxy, err = StartProxy([]string{f.standInAddr}, nil); err != nil {
		f.close()
		return nil, err
	}
	return f, nil
}

func (f *fixture) close() {
	if f.proxy != nil {
		f.proxy.Close()
	}
	if f.forbidden != nil {
		f.forbidden.Close()
	}
	if f.standIn != nil {
		f.standIn.Close()
	}
	os.RemoveAll(f.root)
}

// expectation is one probe and the outcome that proves the sandbox.
type expectation struct {
	probe   Probe
	allowed bool
	refusal string // who must refuse when !allowed
}

func (f *fixture) verify(ctx context.Context, exe string, timeout time.Duration, abi int, mode policy.Access) Verification {
	class := providers.ContainmentReadOnlyNoNetwork
	pol := Policy{Writable: []string{f.private}, ConnectPort: f.proxy.Port()}
	want := []expectation{
		{Probe{Kind: ProbeWrite, Target: filepath.Join(f.private, "ok")}, true, ""},
		{Probe{Kind: ProbeWrite, Target: filepath.Join(f.checkout, "planted")}, false, "kernel"},
		{Probe{Kind: ProbeConnect, Target: f.forbidden.Addr().String()}, false, "kernel"},
		{Probe{Kind: ProbeConnectMPTCP, Target: f.forbidden.Addr().String()}, false, "kernel"},
		{Probe{Kind: ProbeProxyGet, Target: f.standInAddr, Proxy: f.proxy.Addr()}, true, ""},
		{Probe{Kind: ProbeProxyConnect, Target: f.standInAddr, Proxy: f.proxy.Addr()}, true, ""},
		{Probe{Kind: ProbeProxyConnect, Target: f.forbidden.Addr().String(), Proxy: f.proxy.Addr()}, false, "proxy"},
	}
	if mode == policy.IsolatedWrite {
		class = providers.ContainmentWorkspaceWriteNoNetwork
		w, err := WorktreeWritable(f.worktree)
		if err != nil {
			return Unverified(abi, "self-test setup failed: "+err.Error(), "check that the temporary directory is writable").For(mode)
		}
		pol.Writable = append(pol.Writable, w...)
		want = append(want,
			expectation{Probe{Kind: ProbeWrite, Target: filepath.Join(f.worktree, "src", "edit.go")}, true, ""},
			expectation{Probe{Kind: ProbeWrite, Target: filepath.Join(f.worktree, ".git", "config")}, false, "kernel"})
	}
	fail := func(why string) Verification {
		return Verification{Mode: mode, Class: providers.ContainmentUnverified,
			Why: "the sandbox self-test failed: " + why, Fix: "report this with `switchyard doctor --json`; until fixed, pass --allow-unverified-containment P to run that provider unrestricted"}
	}
	before := f.accepted.Load()
	got, err := runSelfTestChild(ctx, exe, timeout, pol, want)
	if err != nil {
		return fail(err.Error())
	}
	if len(got) != len(want) {
		return fail(fmt.Sprintf("the child reported %d probes, not %d", len(got), len(want)))
	}
	for i, w := range want {
		g := got[i]
		if g.Allowed != w.allowed || (!w.allowed && g.Refusal != w.refusal) {
			return fail(fmt.Sprintf("%s %s: allowed=%t refused by %q (%s), want allowed=%t refused by %q",
				w.probe.Kind, w.probe.Target, g.Allowed, g.Refusal, g.Detail, w.allowed, w.refusal))
		}
	}
	if n := f.accepted.Load() - before; n != 0 {
		return fail(fmt.Sprintf("the forbidden listener accepted %d connections", n))
	}
	if _, err := os.Stat(filepath.Join(f.checkout, "planted")); err == nil {
		return fail("a write outside the writable paths reached the disk")
	}
	return Verification{Mode: mode, Class: class, Verified: true, By: mechanism(abi)}
}

func runSelfTestChild(ctx context.Context, exe string, timeout time.Duration, pol Policy, want []expectation) ([]ProbeResult, error) {
	probes := make([]Probe, len(want))
	for i, w := range want {
		probes[i] = w.probe
	}
	pb, err := json.Marshal(probes)
	if err != nil {
		return nil, err
	}
	// The child gets no policy: it is confined the way the runner
	// confines a CLI (StartConfined), and its probes test exactly that.
	env := []string{EnvProbe + "=" + string(pb)}
	// A launcher whose main does not call Enter (a test binary without
	// the dispatch) must not run its tests again: the flag makes it run
	// none, and its output then fails the self-test.
	argv := []string{exe, "-test.run=^$"}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	release, err := StartConfined(pol, cmd)
	if err != nil {
		return nil, fmt.Errorf("sandboxed child: %v", err)
	}
	err = cmd.Wait()
	release()
	if err != nil {
		return nil, fmt.Errorf("sandboxed child: %v: %s", err, strings.TrimSpace(errb.String()))
	}
	var got []ProbeResult
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		return nil, fmt.Errorf("sandboxed child output: %v", err)
	}
	return got, nil
}

var verified struct {
	sync.Mutex
	done map[string]Report
}

// EnvSwitch turns the sandbox off for a whole process when set to "off":
// every class is then UNVERIFIED (as on a host without Landlock), so
// attempts need a provider's own verified sandbox or the run's
// --allow-unverified-containment. For diagnosing a sandbox problem, and
// for tests that simulate such a host.
const EnvSwitch = "SWITCHYARD_SANDBOX"

// Executable is os.Executable, read once per process: it reads
// /proc/self/exe on every call, and the engine's gate asks at every
// decision and the runner at every attempt.
var Executable = sync.OnceValues(os.Executable)

// Verify is SelfTest for launcher exe ("" for this executable), run once
// per process and exe and remembered: a worker (or doctor, or the runner)
// calls it at start and every attempt reads the same report.
func Verify(exe string) Report {
	if os.Getenv(EnvSwitch) == "off" {
		return Unverified(KernelABI(), "the sandbox is turned off ("+EnvSwitch+"=off)", "unset "+EnvSwitch+" in the worker's environment")
	}
	if exe == "" {
		exe, _ = Executable()
	}
	verified.Lock()
	defer verified.Unlock()
	if r, ok := verified.done[exe]; ok {
		return r
	}
	r := SelfTest(context.Background(), SelfTestOptions{Exe: exe})
	if verified.done == nil {
		verified.done = map[string]Report{}
	}
	verified.done[exe] = r
	return r
}
