package sandbox_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-dev/switchyard/activities/sandbox"
)

func TestProxyForwardsOnlyTheAllowlist(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("api")) }))
	defer api.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		t.Error("the proxy forwarded to a host off its allowlist")
	}))
	defer other.Close()
	apiHost := strings.TrimPrefix(api.URL, "http://")
	otherHost := strings.TrimPrefix(other.URL, "http://")
	p, err := sandbox.StartProxy([]string{apiHost}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pu, _ := url.Parse(p.URL())
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}

	resp, err := c.Get(api.URL)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("allowed GET: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, err = c.Get(other.URL)
	if err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("denied GET: %v %v", resp, err)
	}
	resp.Body.Close()
	if code := connectStatus(t, p.Addr(), apiHost); code != http.StatusOK {
		t.Fatalf("allowed CONNECT: %d", code)
	}
	if code := connectStatus(t, p.Addr(), otherHost); code != http.StatusForbidden {
		t.Fatalf("denied CONNECT: %d", code)
	}
	want := []sandbox.Denial{
		{Method: "GET", Target: otherHost, Reason: "not on the provider's allowlist"},
		{Method: "CONNECT", Target: otherHost, Reason: "not on the provider's allowlist"},
	}
	if got := p.Denials(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("denials %v, want %v", got, want)
	}
}

func connectStatus(t *testing.T, proxy, target string) int {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode
}

// A policy the launcher cannot apply (a writable path that does not
// exist) stops the command before it runs: exit 125, no side effect.
func TestEnterFailsClosed(t *testing.T) {
	needLandlock(t)
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv, env, err := sandbox.Wrap(exe, sandbox.Policy{Writable: []string{filepath.Join(dir, "missing")}},
		[]string{"/bin/sh", "-c", "echo > " + marker}, []string{"PATH=/usr/bin:/bin"})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != sandbox.ExitSandboxFailed {
		t.Fatalf("exit %v, want %d: %s", err, sandbox.ExitSandboxFailed, out)
	}
	if !strings.Contains(string(out), "the command was not started") {
		t.Fatalf("output %q", out)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the command ran: %v", err)
	}
}

// Wrap drops a policy variable already in the child's environment: only
// the runner's policy reaches the launcher.
func TestWrapReplacesAnInheritedPolicy(t *testing.T) {
	_, env, err := sandbox.Wrap("/bin/launcher", sandbox.Policy{ConnectPort: 7},
		[]string{"/bin/true"}, []string{sandbox.EnvPolicy + `={"writable":["/"]}`, sandbox.EnvProbe + "=[]", "A=1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"A=1", sandbox.EnvPolicy + `={"writable":null,"connectPort":7}`}
	if fmt.Sprint(env) != fmt.Sprint(want) {
		t.Fatalf("env %q, want %q", env, want)
	}
}

// A tunnel whose 200 the client has read is one Close ends: the proxy
// records the tunnel before it answers, so a Close right after the answer
// cannot miss it (and leave the tunnel running past Close).
func TestProxyCloseEndsATunnelItJustAnswered(t *testing.T) {
	up, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	go func() {
		for {
			c, err := up.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(io.Discard, c); c.Close() }()
		}
	}()
	for i := range 200 {
		p, err := sandbox.StartProxy([]string{up.Addr().String()}, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", up.Addr(), up.Addr())
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("CONNECT %d: %v %v", i, resp, err)
		}
		p.Close()
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		if n, err := br.Read(make([]byte, 1)); err != io.EOF {
			t.Fatalf("round %d: after Close the tunnel read %d bytes, %v; want EOF (Close missed the tunnel)", i, n, err)
		}
		c.Close()
	}
}
