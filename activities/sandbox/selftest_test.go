package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/switchyard-dev/switchyard/activities/sandbox"
	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// needLandlock skips without a usable Landlock (the unavailable path has
// its own test).
func needLandlock(t *testing.T) int {
	t.Helper()
	abi := sandbox.KernelABI()
	if abi < sandbox.MinABI {
		t.Skipf("Landlock ABI %d < %d on this host", abi, sandbox.MinABI)
	}
	return abi
}

func TestSelfTestVerifiesBothClassesByTheKernel(t *testing.T) {
	abi := needLandlock(t)
	r := sandbox.SelfTest(context.Background(), sandbox.SelfTestOptions{})
	by := fmt.Sprintf("the kernel (Landlock ABI %d)", abi)
	for _, c := range []struct {
		v    sandbox.Verification
		mode policy.Access
		cls  providers.ContainmentClass
	}{{r.ReadOnly, policy.ReadOnly, providers.ContainmentReadOnlyNoNetwork}, {r.Writer, policy.IsolatedWrite, providers.ContainmentWorkspaceWriteNoNetwork}} {
		if !c.v.Verified || c.v.Class != c.cls || c.v.By != by || c.v.Mode != c.mode {
			t.Fatalf("%s: got %+v, want %s verified by %s", c.mode, c.v, c.cls, by)
		}
	}
	if r.ABI != abi {
		t.Fatalf("ABI %d, want %d", r.ABI, abi)
	}
}

func TestSelfTestWithoutLandlockIsUnverifiedWithAFix(t *testing.T) {
	for _, abi := range []int{0, sandbox.MinABI - 1} {
		r := sandbox.SelfTest(context.Background(), sandbox.SelfTestOptions{ABI: func() int { return abi }})
		for _, v := range []sandbox.Verification{r.ReadOnly, r.Writer} {
			if v.Verified || v.Class != providers.ContainmentUnverified || v.By != "" {
				t.Fatalf("ABI %d: %+v is not UNVERIFIED", abi, v)
			}
			if v.Why == "" || !strings.Contains(v.Fix, "Linux 6.12") || !strings.Contains(v.Fix, "--allow-unverified-containment") {
				t.Fatalf("ABI %d: why %q fix %q", abi, v.Why, v.Fix)
			}
		}
	}
}

// A launcher that cannot apply the policy (here: the self-test child is
// not a sandbox launcher at all) leaves both classes unverified.
func TestSelfTestWithABrokenLauncherIsUnverified(t *testing.T) {
	needLandlock(t)
	r := sandbox.SelfTest(context.Background(), sandbox.SelfTestOptions{Exe: "/bin/true"})
	for _, v := range []sandbox.Verification{r.ReadOnly, r.Writer} {
		if v.Verified || v.Class != providers.ContainmentUnverified || !strings.Contains(v.Why, "self-test failed") {
			t.Fatalf("%+v", v)
		}
	}
}

// TestExecutableIsThisProcess: the once-read path is the one the kernel
// reports for this process.
func TestExecutableIsThisProcess(t *testing.T) {
	want, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		got, err := sandbox.Executable()
		if err != nil || got != want {
			t.Fatalf("Executable() = %q, %v; want %q", got, err, want)
		}
	}
}

// BenchmarkVerifyRemembered measures Verify("") once the self-test is
// remembered, what the engine's gate pays at every decision:
//
//	go test -run '^$' -bench BenchmarkVerifyRemembered ./activities/sandbox
func BenchmarkVerifyRemembered(b *testing.B) {
	sandbox.Verify("")
	for b.Loop() {
		sandbox.Verify("")
	}
}
