package main_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/switchyard-dev/switchyard/testdata/simcli/simconfig"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simenv"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// replyWait bounds waiting for one app-server line on a busy machine.
const replyWait = 30 * time.Second

// appServerProc is a running simulated `codex app-server`.
type appServerProc struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string // stdout lines; closed at EOF
	done  chan struct{}
}

func startAppServer(t *testing.T, bin string) *appServerProc {
	t.Helper()
	cmd := exec.Command(simenv.Binary(t, bin, "codex"), "app-server")
	cmd.Env = append(minimalEnv(t, bin), "CODEX_HOME=/nonexistent/codex-home")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &appServerProc{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 64), done: make(chan struct{})}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		for range p.lines {
		}
		_ = cmd.Wait()
	})
	return p
}

func (p *appServerProc) send(line string) {
	p.t.Helper()
	_, err := io.WriteString(p.stdin, line+"\n")
	require.NoError(p.t, err)
}

// next returns the next stdout line as a decoded object and its raw text.
func (p *appServerProc) next() (map[string]json.RawMessage, string) {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		require.True(p.t, ok, "app-server closed stdout")
		var m map[string]json.RawMessage
		require.NoError(p.t, json.Unmarshal([]byte(line), &m), line)
		_, hasJSONRPC := m["jsonrpc"]
		assert.False(p.t, hasJSONRPC, "the app-server omits the jsonrpc member: %s", line)
		return m, line
	case <-time.After(replyWait):
		p.t.Fatalf("no app-server line within %s", replyWait)
		return nil, ""
	}
}

// exit closes stdin and returns the exit code.
func (p *appServerProc) exit() int {
	p.t.Helper()
	require.NoError(p.t, p.stdin.Close())
	for range p.lines {
		p.t.Errorf("unexpected line after stdin closed")
	}
	err := p.cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		p.t.Fatalf("wait: %v", err)
	}
	return p.cmd.ProcessState.ExitCode()
}

type rpcErr struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func errorOf(t *testing.T, m map[string]json.RawMessage) rpcErr {
	t.Helper()
	require.Contains(t, m, "error")
	var e rpcErr
	require.NoError(t, json.Unmarshal(m["error"], &e))
	return e
}

const initializeLine = `{"method":"initialize","id":0,"params":{"clientInfo":{"name":"switchyard","title":"Switchyard","version":"0.1.0"},"capabilities":{"experimentalApi":false}}}`

// TestAppServerSpeaksTheRealFraming drives the default (success) scenario
// through the whole session QUOTA-PROTOCOLS §1 records.
func TestAppServerSpeaksTheRealFraming(t *testing.T) {
	t.Parallel()
	bin := simenv.Install(t, "", simenv.Config{})
	p := startAppServer(t, bin)

	p.send(`{"method":"account/rateLimits/read","id":7}`)
	m, _ := p.next()
	assert.JSONEq(t, `7`, string(m["id"]))
	assert.Equal(t, rpcErr{Code: -32600, Message: "Not initialized"}, errorOf(t, m))

	p.send(initializeLine)
	m, _ = p.next()
	assert.JSONEq(t, `0`, string(m["id"]))
	var init struct{ UserAgent, CodexHome, PlatformFamily, PlatformOs string }
	require.NoError(t, json.Unmarshal(m["result"], &init))
	assert.Equal(t, "/nonexistent/codex-home", init.CodexHome, "CODEX_HOME picks the login home")
	assert.Equal(t, "unix", init.PlatformFamily)

	p.send(initializeLine)
	m, _ = p.next()
	assert.Equal(t, rpcErr{Code: -32600, Message: "Already initialized"}, errorOf(t, m))

	p.send(`{"method":"initialized"}`)
	m, _ = p.next()
	assert.JSONEq(t, `"account/updated"`, string(m["method"]), "notifications follow initialized")
	m, _ = p.next()
	assert.JSONEq(t, `"account/rateLimits/updated"`, string(m["method"]))

	p.send(`{"method":"account/read","id":1,"params":{"refreshToken":false}}`)
	m, _ = p.next()
	assert.JSONEq(t, `1`, string(m["id"]))
	var acct struct {
		Account struct{ Type string } `json:"account"`
	}
	require.NoError(t, json.Unmarshal(m["result"], &acct))
	assert.Equal(t, "chatgpt", acct.Account.Type)

	before := time.Now()
	p.send(`{"method":"account/rateLimits/read","id":2}`)
	m, line := p.next()
	assert.True(t, strings.HasPrefix(line, `{"id":2,"result":{`), "one compact line: %.80s", line)
	var rl struct {
		OrdinaryUsageAllowed *bool `json:"ordinaryUsageAllowed"`
		RateLimits           struct {
			Primary struct {
				UsedPercent        int   `json:"usedPercent"`
				WindowDurationMins int   `json:"windowDurationMins"`
				ResetsAt           int64 `json:"resetsAt"`
			} `json:"primary"`
			Credits struct{ HasCredits bool } `json:"credits"`
		} `json:"rateLimits"`
	}
	require.NoError(t, json.Unmarshal(m["result"], &rl))
	require.NotNil(t, rl.OrdinaryUsageAllowed)
	assert.True(t, *rl.OrdinaryUsageAllowed)
	assert.False(t, rl.RateLimits.Credits.HasCredits)
	assert.Equal(t, 300, rl.RateLimits.Primary.WindowDurationMins)
	reset := time.Unix(rl.RateLimits.Primary.ResetsAt, 0)
	assert.WithinDuration(t, before.Add(5*time.Hour), reset, time.Minute, "resets are relative to the invocation")

	p.send(`{"method":"account/read","id":3}`)
	m, _ = p.next()
	assert.Equal(t, -32602, errorOf(t, m).Code, "account/read takes a params object")
	p.send(`{"method":"account/rateLimitResetCredit/consume","id":4,"params":{}}`)
	m, _ = p.next()
	assert.Equal(t, -32601, errorOf(t, m).Code)
	p.send(`not json`)
	m, _ = p.next()
	assert.Equal(t, -32700, errorOf(t, m).Code)

	assert.Equal(t, 0, p.exit(), "stdin EOF ends the server")

	invs := simenv.Invocations(t, bin)
	require.Len(t, invs, 1)
	assert.Equal(t, simlog.KindAppServer, invs[0].Kind)
	assert.Equal(t, "success", invs[0].Scenario)
	assert.True(t, strings.HasSuffix(invs[0].TranscriptDir, filepath.FromSlash("codex/_preflight/app-server")), invs[0].TranscriptDir)
	assert.Contains(t, invs[0].Env, "CODEX_HOME")

	rpcs, err := simlog.ReadRPC(filepath.Join(bin, simconfig.RPCLog))
	require.NoError(t, err)
	var got []string
	for _, r := range rpcs {
		got = append(got, r.Method+"|"+r.Answer)
	}
	assert.Equal(t, []string{"account/rateLimits/read|-32600", "initialize|result", "initialize|-32600", "initialized|",
		"account/read|result", "account/rateLimits/read|result", "account/read|-32602",
		"account/rateLimitResetCredit/consume|-32601", "|-32700"}, got)
	assert.False(t, rpcs[5].HasParams, "the rate-limits request was logged without params")
}

// TestAppServerScenarios checks each quota scenario's answer to
// account/rateLimits/read (and account/read) after a proper handshake.
func TestAppServerScenarios(t *testing.T) {
	t.Parallel()
	type want struct {
		account string // account type, "" for null
		check   func(t *testing.T, result map[string]any)
		err     *rpcErr
	}
	bucket := func(r map[string]any) map[string]any { return r["rateLimits"].(map[string]any) }
	rows := map[string]want{
		"success": {account: "chatgpt", check: func(t *testing.T, r map[string]any) {
			assert.Equal(t, true, r["ordinaryUsageAllowed"])
			assert.Equal(t, false, bucket(r)["credits"].(map[string]any)["hasCredits"])
		}},
		"credits-present": {account: "chatgpt", check: func(t *testing.T, r map[string]any) {
			assert.Equal(t, true, bucket(r)["credits"].(map[string]any)["hasCredits"])
		}},
		"quota-exhausted": {account: "chatgpt", check: func(t *testing.T, r map[string]any) {
			assert.Equal(t, "rate_limit_reached", bucket(r)["rateLimitReachedType"])
			assert.Equal(t, 100.0, bucket(r)["primary"].(map[string]any)["usedPercent"])
		}},
		"unverified": {account: "chatgpt", check: func(t *testing.T, r map[string]any) {
			assert.NotContains(t, r, "ordinaryUsageAllowed", "the v0.145 shape")
		}},
		"logged-out":      {err: &rpcErr{-32600, "codex account authentication required to read rate limits"}},
		"unauthenticated": {err: &rpcErr{-32600, "codex account authentication required to read rate limits"}},
		"api-key-login":   {account: "apiKey", err: &rpcErr{-32600, "chatgpt authentication required to read rate limits"}},
		"backend-error":   {account: "chatgpt", err: &rpcErr{Code: -32603}},
	}
	for scenario, w := range rows {
		t.Run(scenario, func(t *testing.T) {
			t.Parallel()
			bin := simenv.Install(t, "", simenv.Scenarios(map[string]string{"codex": scenario}))
			p := startAppServer(t, bin)
			p.send(initializeLine)
			p.next()
			p.send(`{"method":"account/read","id":1,"params":{"refreshToken":false}}`)
			m, _ := p.next()
			var acct struct {
				Account *struct{ Type string } `json:"account"`
			}
			require.NoError(t, json.Unmarshal(m["result"], &acct))
			if w.account == "" {
				assert.Nil(t, acct.Account)
			} else {
				require.NotNil(t, acct.Account)
				assert.Equal(t, w.account, acct.Account.Type)
			}
			p.send(`{"method":"account/rateLimits/read","id":2}`)
			m, _ = p.next()
			if w.err != nil {
				e := errorOf(t, m)
				assert.Equal(t, w.err.Code, e.Code)
				if w.err.Message != "" {
					assert.Equal(t, w.err.Message, e.Message)
				}
			} else {
				var r map[string]any
				require.NoError(t, json.Unmarshal(m["result"], &r))
				w.check(t, r)
			}
			assert.Equal(t, 0, p.exit())
			invs := simenv.Invocations(t, bin)
			require.Len(t, invs, 1)
			assert.Equal(t, scenario, invs[0].Scenario)
		})
	}
}

// TestAppServerHangAnswersNothing: the hang scenario never answers, not
// even initialize, and ignores stdin EOF; only a signal ends it.
func TestAppServerHangAnswersNothing(t *testing.T) {
	t.Parallel()
	bin := simenv.Install(t, "", simenv.Scenarios(map[string]string{"codex": "app-server-hang"}))
	p := startAppServer(t, bin)
	p.send(initializeLine)
	require.NoError(t, p.stdin.Close())
	deadline := time.Now().Add(replyWait)
	for len(simenv.Invocations(t, bin)) == 0 {
		require.True(t, time.Now().Before(deadline), "no invocation logged")
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case line, ok := <-p.lines:
		if ok {
			t.Fatalf("the hanging server wrote %q", line)
		}
		t.Fatal("the hanging server exited on stdin EOF")
	case <-time.After(200 * time.Millisecond): // still silent and alive
	}
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	for line := range p.lines {
		t.Errorf("the hanging server wrote %q", line)
	}
	err := p.cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 143, ee.ExitCode())
	assert.Equal(t, simlog.KindAppServer, simenv.Invocations(t, bin)[0].Kind)
}

// TestAppServerRefusesOversizedFrames: a line over 1 MiB ends the session.
func TestAppServerRefusesOversizedFrames(t *testing.T) {
	t.Parallel()
	bin := simenv.Install(t, "", simenv.Config{})
	p := startAppServer(t, bin)
	go func() {
		_, _ = io.WriteString(p.stdin, `{"method":"initialize","id":0,"params":"`+strings.Repeat("x", 1<<20)+`"}`+"\n")
	}()
	for line := range p.lines {
		t.Errorf("answered an oversized frame: %.80s", line)
	}
	err := p.cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 1, ee.ExitCode())
}
