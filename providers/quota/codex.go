package quota

import (
	"bufio"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/switchyard-dev/switchyard/policy"
	"github.com/switchyard-dev/switchyard/providers"
)

// This file acquires Codex's report from a live `codex app-server`
// session on stdio (QUOTA-PROTOCOLS.md §1): initialize, the initialized
// notification, account/read, then account/rateLimits/read with params
// omitted. The child is a real process in its own process group with a
// constructed environment; it is killed and reaped on every path, its
// stderr goes to /dev/null and nothing it prints is ever surfaced.

// codexMaxLine bounds one line of the app-server's stdout.
const codexMaxLine = 1 << 20

// codexExitGrace is how long a finished session waits for the server to
// exit on stdin EOF before the group is killed (never beyond the deadline).
const codexExitGrace = time.Second

// Request ids of one session.
const (
	codexInitializeID = 0
	codexAccountID    = 1
	codexRateLimitsID = 2
)

// The client's request lines. account/read gets a params object (no token
// refresh); account/rateLimits/read omits params, safe on every version.
const (
	codexInitializeLine  = `{"method":"initialize","id":0,"params":{"clientInfo":{"name":"switchyard","title":"Switchyard","version":"1"},"capabilities":{"experimentalApi":false}}}` + "\n"
	codexInitializedLine = `{"method":"initialized"}` + "\n"
	codexAccountLine     = `{"method":"account/read","id":1,"params":{"refreshToken":false}}` + "\n"
	codexRateLimitsLine  = `{"method":"account/rateLimits/read","id":2}` + "\n"
)

// errCodexFrame is a line over codexMaxLine.
var errCodexFrame = errors.New("app-server line exceeds the size limit")

// acquireCodex runs one app-server session and returns the report. It
// never fails: a missing binary, a timeout (cfg.Timeout or ctx), a child
// that dies or speaks something else are unknown snapshots with unknown
// eligibility (collector_failed).
func acquireCodex(ctx context.Context, cfg Config) policy.CapacityReport {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	fail := func(reason policy.CapacityReason) policy.CapacityReport {
		return codexReport(codexFailure(reason, nil, now()))
	}
	parent := codexEnvMap(cfg.Env)
	bin, ok := codexResolve(cfg.Binary, parent)
	if !ok {
		return fail(policy.CapacityReasonBinaryMissing)
	}
	env, err := codexChildEnv(parent)
	if err != nil {
		return fail(policy.CapacityReasonBackendError)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	srv, err := startCodexServer(ctx, bin, env)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, exec.ErrNotFound) {
			return fail(policy.CapacityReasonBinaryMissing)
		}
		return fail(policy.CapacityReasonBackendError)
	}
	account, rateLimits, reason := srv.session()
	srv.stop(ctx)
	if reason != "" {
		if ctx.Err() != nil {
			reason = policy.CapacityReasonTimeout
		}
		return fail(reason)
	}
	return ParseCodexReplies(account, rateLimits, now())
}

// codexServer is one running app-server child.
type codexServer struct {
	cmd    *exec.Cmd
	stdin  *os.File // our write end; deadlines apply
	stdout *os.File // our read end; deadlines apply
	out    *bufio.Reader
	stopAF func() bool
}

// startCodexServer starts `<bin> app-server` in its own process group with
// env, stdin and stdout on pipes bounded by ctx's deadline, stderr on
// /dev/null, working directory /.
func startCodexServer(ctx context.Context, bin string, env []string) (*codexServer, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd := exec.Command(bin, "app-server")
	cmd.Env = env
	cmd.Dir = "/"
	cmd.Stdin = inR
	cmd.Stdout = outW
	cmd.Stderr = nil // /dev/null: its logs are never read, let alone surfaced
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	s := &codexServer{cmd: cmd, stdin: inW, stdout: outR, out: bufio.NewReaderSize(outR, 64<<10)}
	if dl, ok := ctx.Deadline(); ok {
		_ = inW.SetWriteDeadline(dl)
		_ = outR.SetReadDeadline(dl)
	}
	// A cancelled parent context ends any blocked read or write at once.
	s.stopAF = context.AfterFunc(ctx, func() {
		_ = inW.SetWriteDeadline(time.Unix(1, 0))
		_ = outR.SetReadDeadline(time.Unix(1, 0))
	})
	return s, nil
}

// session speaks the handshake and both reads. It returns the raw
// account/read response line (nil when it was not a response) and the
// rate-limits response line, or a failure reason.
func (s *codexServer) session() (account, rateLimits []byte, reason policy.CapacityReason) {
	if err := s.write(codexInitializeLine); err != nil {
		return nil, nil, policy.CapacityReasonBackendError
	}
	// The initialize result (user agent, home path) is not used.
	_, m, reason := s.await(codexInitializeID)
	if reason != "" {
		return nil, nil, reason
	}
	if m.Err != nil {
		return nil, nil, policy.CapacityReasonBackendError
	}
	if err := s.write(codexInitializedLine + codexAccountLine); err != nil {
		return nil, nil, policy.CapacityReasonBackendError
	}
	account, _, reason = s.await(codexAccountID)
	if reason != "" {
		return nil, nil, reason
	}
	if err := s.write(codexRateLimitsLine); err != nil {
		return nil, nil, policy.CapacityReasonBackendError
	}
	rateLimits, _, reason = s.await(codexRateLimitsID)
	if reason != "" {
		return nil, nil, reason
	}
	return account, rateLimits, ""
}

// write sends request lines; a deadline or a dead child fails it.
func (s *codexServer) write(lines string) error {
	_, err := io.WriteString(s.stdin, lines)
	return err
}

// await reads lines until the response to id, skipping notifications,
// requests of the server and responses to other ids. A line that is not
// a message is unparseable; the end of stdout is a backend failure; a
// deadline is a timeout (the caller checks the context).
func (s *codexServer) await(id int64) ([]byte, codexMessage, policy.CapacityReason) {
	for {
		line, err := codexReadLine(s.out)
		if err != nil {
			switch {
			case errors.Is(err, errCodexFrame):
				return nil, codexMessage{}, policy.CapacityReasonUnparseable
			case errors.Is(err, os.ErrDeadlineExceeded):
				return nil, codexMessage{}, policy.CapacityReasonTimeout
			default:
				return nil, codexMessage{}, policy.CapacityReasonBackendError
			}
		}
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		m, err := decodeCodexMessage(line)
		if err != nil {
			return nil, codexMessage{}, policy.CapacityReasonUnparseable
		}
		if m.Method != "" || !m.HasID || m.IDText || m.ID != id {
			continue
		}
		return line, m, ""
	}
}

// stop ends the session: stdin closed so the server can exit by itself,
// stdout drained until it closes (at most codexExitGrace, never beyond the
// deadline), then the whole process group killed and the child reaped.
// The group is killed before the reap, so its id cannot have been reused.
func (s *codexServer) stop(ctx context.Context) {
	s.stopAF()
	_ = s.stdin.Close()
	grace := time.Now().Add(codexExitGrace)
	if dl, ok := ctx.Deadline(); ok && dl.Before(grace) {
		grace = dl
	}
	if ctx.Err() == nil {
		_ = s.stdout.SetReadDeadline(grace)
		_, _ = io.Copy(io.Discard, io.LimitReader(s.out, 16*codexMaxLine))
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	_ = s.stdout.Close()
	_ = s.cmd.Wait()
}

// codexReadLine reads one line without its newline, refusing lines over
// codexMaxLine. A final line without a newline is returned as a line.
func codexReadLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > codexMaxLine+1 {
			return nil, errCodexFrame
		}
		line = append(line, chunk...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, io.EOF) && len(line) > 0:
			return line, nil
		default:
			return nil, err
		}
	}
}

// codexEnvMap reads NAME=value pairs; a later pair wins.
func codexEnvMap(env []string) map[string]string {
	out := map[string]string{}
	for _, kv := range env {
		if name, value, ok := strings.Cut(kv, "="); ok && name != "" {
			out[name] = value
		}
	}
	return out
}

// codexChildEnv constructs the app-server's environment the way every
// Codex child's is built (providers.ChildEnv under --api-spend deny): the
// base allowlist (PATH, HOME, LANG, LC_*, TERM, TMPDIR, USER) and
// CODEX_HOME, never an API key or anything else of the parent.
func codexChildEnv(parent map[string]string) ([]string, error) {
	spec, err := providers.Lookup(policy.Codex)
	if err != nil {
		return nil, err
	}
	return providers.ChildEnv(spec, parent, providers.Request{Provider: policy.Codex, APISpend: policy.APISpendDeny}, nil), nil
}

// codexResolve finds the executable: a path is used as given, a bare name
// ("" means codex) is looked up on the login environment's PATH (the
// process's own PATH when the environment has none).
func codexResolve(binary string, env map[string]string) (string, bool) {
	if binary == "" {
		binary = "codex"
	}
	if strings.ContainsRune(binary, '/') {
		abs, err := filepath.Abs(binary) // the child starts in /
		return abs, err == nil && codexExecutable(abs)
	}
	path, ok := env["PATH"]
	if !ok {
		path = os.Getenv("PATH")
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // a relative PATH entry would resolve against our cwd
		}
		if p := filepath.Join(dir, binary); codexExecutable(p) {
			return p, true
		}
	}
	return "", false
}

// codexExecutable reports whether path is an executable regular file.
func codexExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
