package runner

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/policy"
)

// envHostile carries the hostile stand-in's targets (hostileTargets as
// JSON) to the fake CLI.
const envHostile = "SY_HOSTILE"

// hostileTargets are what the hostile stand-in attacks.
type hostileTargets struct {
	Checkout string `json:"checkout"` // a file to plant in the checkout
	Git      string `json:"git"`      // a hook to plant in the checkout's .git
	Home     string `json:"home"`     // a file to plant in $HOME
	Shell    string `json:"shell"`    // a file a spawned shell plants in the checkout
	Listener string `json:"listener"` // a loopback listener that is not the proxy
	OffList  string `json:"offList"`  // a host:port off the allowlist, through the proxy
	Allowed  string `json:"allowed"`  // a file it may write (the writer's worktree), "" for none
}

// hostileCalls is the hostile stand-in: it tries each attack and reports
// one line per attempt, "denied <what>: <error>" or "ALLOWED <what>".
func hostileCalls() string {
	var t hostileTargets
	if err := json.Unmarshal([]byte(os.Getenv(envHostile)), &t); err != nil {
		return "bad targets: " + err.Error()
	}
	var lines []string
	note := func(what string, err error) {
		if err != nil {
			lines = append(lines, fmt.Sprintf("denied %s: %v", what, err))
		} else {
			lines = append(lines, "ALLOWED "+what)
		}
	}
	note("write checkout", os.WriteFile(t.Checkout, []byte("planted"), 0o644))
	note("write .git hook", os.WriteFile(t.Git, []byte("#!/bin/sh\necho owned\n"), 0o755))
	note("write home", os.WriteFile(t.Home, []byte("planted"), 0o644))
	note("shell write checkout", exec.Command("/bin/sh", "-c", "echo planted > "+t.Shell).Run())
	c, err := net.DialTimeout("tcp", t.Listener, 5*time.Second)
	if err == nil {
		c.Close()
	}
	note("connect loopback listener", err)
	d := net.Dialer{Timeout: 5 * time.Second}
	d.SetMultipathTCP(true)
	if c, err = d.Dial("tcp", t.Listener); err == nil {
		c.Close()
	}
	note("mptcp connect loopback listener", err)
	note("proxy CONNECT "+t.OffList, proxyConnect(os.Getenv("HTTPS_PROXY"), t.OffList))
	if t.Allowed != "" {
		note("write worktree", os.WriteFile(t.Allowed, []byte("edited"), 0o644))
	}
	return strings.Join(lines, "\n")
}

func proxyConnect(proxyURL, target string) error {
	host := strings.TrimPrefix(proxyURL, "http://")
	if host == "" {
		return fmt.Errorf("no HTTPS_PROXY")
	}
	c, err := net.DialTimeout("tcp", host, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("proxy answered %s", resp.Status)
	}
	return nil
}

// TestRunnerHostileStandInIsContained: a CLI whose tool calls write into
// the checkout, its .git, $HOME and (through a spawned shell) the
// checkout again, connect to a loopback listener that is not the proxy
// (over TCP and Multipath TCP) and ask the proxy for a host off the
// allowlist is refused every time, by the kernel or the proxy: no file
// appears, the listener accepts nothing, and the receipt names the
// kernel's containment and the proxy's denial. A writer may write its
// worktree but not its .git.
func TestRunnerHostileStandInIsContained(t *testing.T) {
	t.Parallel()
	abi := needLandlock(t)
	for _, mode := range []policy.Access{policy.ReadOnly, policy.IsolatedWrite} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			l := newLane(t, "hostile")
			ln, err := net.Listen("tcp4", "127.0.0.1:0")
			require.NoError(t, err)
			defer ln.Close()
			var accepted atomic.Int64
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					accepted.Add(1)
					c.Close()
				}
			}()
			require.NoError(t, os.MkdirAll(filepath.Join(l.cwd, ".git", "hooks"), 0o755))
			require.NoError(t, os.MkdirAll(filepath.Join(l.cwd, "src"), 0o755))
			tg := hostileTargets{
				Checkout: filepath.Join(l.cwd, "planted.txt"),
				Git:      filepath.Join(l.cwd, ".git", "hooks", "post-checkout"),
				Home:     filepath.Join(l.dir, ".bashrc-planted"),
				Shell:    filepath.Join(l.cwd, "from-shell.txt"),
				Listener: ln.Addr().String(),
				OffList:  "exfil.invalid:443",
			}
			if mode == policy.IsolatedWrite {
				tg.Allowed = filepath.Join(l.cwd, "src", "edit.go")
			}
			b, _ := json.Marshal(tg)
			l.fake.Env = map[string]string{envHostile: string(b)}
			var code int
			if mode == policy.IsolatedWrite {
				code = l.write(nil)
			} else {
				code = l.run(nil)
			}
			require.Equal(t, 0, code, "stderr: %s", l.stderr)
			out, err := os.ReadFile(l.output)
			require.NoError(t, err)
			report := string(out)
			for _, what := range []string{"write checkout", "write .git hook", "write home", "shell write checkout",
				"connect loopback listener", "mptcp connect loopback listener"} {
				require.Contains(t, report, "denied "+what+": ", "report:\n%s", report)
			}
			require.Contains(t, report, "permission denied")
			require.Contains(t, report, "denied proxy CONNECT exfil.invalid:443: proxy answered 403 Forbidden")
			for _, p := range []string{tg.Checkout, tg.Git, tg.Home, tg.Shell} {
				requireGone(t, p)
			}
			require.Zero(t, accepted.Load(), "the listener accepted a connection")
			if mode == policy.IsolatedWrite {
				require.Contains(t, report, "ALLOWED write worktree")
				got, err := os.ReadFile(tg.Allowed)
				require.NoError(t, err)
				require.Equal(t, "edited", string(got))
			}
			rc := l.receiptFile()
			require.Equal(t, &policy.ReceiptContainment{Class: requiredClass(mode),
				By:     fmt.Sprintf("the kernel (Landlock ABI %d)", abi),
				Denied: []string{"egress proxy refused CONNECT exfil.invalid:443: not on the provider's allowlist"}}, rc.Containment)
		})
	}
}
