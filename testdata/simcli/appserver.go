package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/switchyard-dev/switchyard/testdata/simcli/simconfig"
	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// This file simulates `codex app-server` on stdio as QUOTA-PROTOCOLS.md §1
// records it: newline-delimited JSON-RPC 2.0 without the "jsonrpc" member,
// one initialize per connection (requests before it are refused with
// -32600 "Not initialized", a second one with "Already initialized"),
// then the initialized notification; account/read and
// account/rateLimits/read answer from the scenario's app-server directory;
// stdin EOF ends the process.

// Files of an app-server kind directory (besides stderr, exit, hang,
// delay_ms and base, which keep their replay meaning).
const (
	appServerAccount    = "account.json"           // result of account/read (required)
	appServerRateLimits = "rate-limits.json"       // result of account/rateLimits/read
	appServerRateError  = "rate-limits-error.json" // or the error {code, message} it answers instead (wins)
	appServerNotify     = "notify.jsonl"           // notifications written after `initialized`
)

// JSON-RPC error codes the simulated server answers with.
const (
	rpcInvalidRequest = -32600
	rpcMethodNotFound = -32601
	rpcInvalidParams  = -32602
	rpcParseError     = -32700
)

// appServerMaxLine bounds one request line, as the real server bounds its
// frames; a longer line ends the session.
const appServerMaxLine = 1 << 20

// appServer is one loaded app-server scenario.
type appServer struct {
	account    []byte          // templated result of account/read
	rateLimits []byte          // templated result of account/rateLimits/read, or nil
	rateError  json.RawMessage // the error object instead, or nil
	notify     []byte          // lines written after `initialized`
}

// loadAppServer reads the scenario's app-server files through t.
func loadAppServer(dir string, t templater) (*appServer, error) {
	a := &appServer{}
	var ok bool
	var err error
	if a.account, ok, err = readLayered(dir, appServerAccount, 0); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%s: no %s", dir, appServerAccount)
	}
	a.account = t.apply(a.account)
	if a.rateLimits, ok, err = readLayered(dir, appServerRateLimits, 0); err != nil {
		return nil, err
	} else if !ok {
		a.rateLimits = nil
	}
	a.rateLimits = t.apply(a.rateLimits)
	var b []byte
	if b, ok, err = readLayered(dir, appServerRateError, 0); err != nil {
		return nil, err
	} else if ok {
		a.rateError = json.RawMessage(bytes.TrimSpace(t.apply(b)))
	}
	if a.rateError != nil {
		a.rateLimits = nil // an error file wins over a result inherited from base
	} else if a.rateLimits == nil {
		return nil, fmt.Errorf("%s: one of %s and %s is required", dir, appServerRateLimits, appServerRateError)
	}
	for name, v := range map[string][]byte{appServerAccount: a.account, appServerRateLimits: a.rateLimits, appServerRateError: a.rateError} {
		if v != nil && !json.Valid(v) {
			return nil, fmt.Errorf("%s/%s is not valid JSON", dir, name)
		}
	}
	if a.notify, _, err = readLayered(dir, appServerNotify, 0); err != nil {
		return nil, err
	}
	a.notify = t.apply(a.notify)
	for _, line := range splitLines(a.notify) {
		if !json.Valid(line) {
			return nil, fmt.Errorf("%s/%s has a line that is not JSON", dir, appServerNotify)
		}
	}
	return a, nil
}

// appServerVars are the placeholders of app-server files: reset times
// relative to this invocation, in Unix seconds, so a scenario's windows
// reset in the future whenever it is replayed.
func appServerVars(now time.Time) map[string]string {
	unix := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }
	return map[string]string{
		"now_unix": unix(0),
		"reset_5h": unix(5 * time.Hour),
		"reset_7d": unix(7 * 24 * time.Hour),
		"reset_1h": unix(time.Hour),
	}
}

// serveAppServer runs the session until stdin ends, then finishes as the
// replay says (exit code, delay). A hang scenario answers nothing.
func (s *simulation) serveAppServer(r *replay, t templater) int {
	if _, err := s.stderr.Write(r.stderr); err != nil {
		return 1
	}
	if r.hang {
		return s.finish(r)
	}
	a, err := loadAppServer(r.dir, t)
	if err != nil {
		return s.failf("%v", err)
	}
	out := bufio.NewWriter(s.stdout)
	in := bufio.NewReaderSize(s.stdin, 64<<10)
	sess := &rpcSession{a: a, out: out, binDir: s.binDir}
	for {
		line, err := readFrame(in)
		if errors.Is(err, errFrameTooLong) {
			fmt.Fprintln(s.stderr, "ERROR codex_app_server: frame exceeds the size limit; closing")
			return 1
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if werr := sess.handle(line); werr != nil {
				return 1 // the client went away
			}
			if werr := out.Flush(); werr != nil {
				return 1
			}
		}
		if err != nil { // io.EOF or a read error: the client closed stdin
			break
		}
	}
	r.hang = false
	return s.finish(r)
}

var errFrameTooLong = errors.New("frame too long")

// readFrame reads one newline-terminated line (without the newline),
// refusing lines over appServerMaxLine.
func readFrame(in *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := in.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > appServerMaxLine {
			return nil, errFrameTooLong
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

// rpcSession is the state of one connection.
type rpcSession struct {
	a           *appServer
	out         *bufio.Writer
	binDir      string
	initialized bool // initialize answered
	notified    bool // notify lines written
}

// handle answers one client line and logs its shape.
func (p *rpcSession) handle(line []byte) error {
	rec := simlog.RPC{Pid: os.Getpid(), At: time.Now().UTC()}
	defer func() { _ = simlog.Append(filepath.Join(p.binDir, simconfig.RPCLog), rec) }()

	var msg map[string]json.RawMessage
	if err := json.Unmarshal(line, &msg); err != nil || msg == nil {
		rec.Answer = strconv.Itoa(rpcParseError)
		return p.reply(json.RawMessage("null"), nil, &rpcError{Code: rpcParseError, Message: "Parse error"})
	}
	rec.Valid = true
	id, hasID := msg["id"]
	rec.HasID = hasID
	params, hasParams := msg["params"]
	rec.HasParams = hasParams
	var method string
	if raw, ok := msg["method"]; ok {
		_ = json.Unmarshal(raw, &method)
	}
	rec.Method = method
	if method == "" || !hasID {
		if method == "initialized" && p.initialized && !p.notified {
			p.notified = true
			_, err := p.out.Write(p.a.notify)
			return err
		}
		return nil // a notification or a response to the server: no answer
	}
	answer := func(result []byte, e *rpcError) error {
		if e != nil {
			rec.Answer = strconv.Itoa(e.Code)
		} else {
			rec.Answer = "result"
		}
		return p.reply(id, result, e)
	}
	if method == "initialize" {
		if p.initialized {
			return answer(nil, &rpcError{Code: rpcInvalidRequest, Message: "Already initialized"})
		}
		var ps struct {
			ClientInfo *struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"clientInfo"`
		}
		if err := json.Unmarshal(params, &ps); err != nil || ps.ClientInfo == nil || ps.ClientInfo.Name == "" {
			return answer(nil, &rpcError{Code: rpcInvalidParams, Message: "Invalid params: clientInfo.name is required"})
		}
		p.initialized = true
		return answer(initializeResult(), nil)
	}
	if !p.initialized {
		return answer(nil, &rpcError{Code: rpcInvalidRequest, Message: "Not initialized"})
	}
	switch method {
	case "account/read":
		if !isObject(params) {
			return answer(nil, &rpcError{Code: rpcInvalidParams, Message: "Invalid params: expected an object"})
		}
		return answer(p.a.account, nil)
	case "account/rateLimits/read":
		if hasParams && !isObject(params) && !bytes.Equal(bytes.TrimSpace(params), []byte("null")) {
			return answer(nil, &rpcError{Code: rpcInvalidParams, Message: "Invalid params: expected an object"})
		}
		if p.a.rateError != nil {
			var e rpcError
			if err := json.Unmarshal(p.a.rateError, &e); err != nil {
				return err
			}
			return answer(nil, &e)
		}
		return answer(p.a.rateLimits, nil)
	}
	return answer(nil, &rpcError{Code: rpcMethodNotFound, Message: "Method not found: " + method})
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// reply writes one response line: {"id":…,"result":…} or {"id":…,"error":…},
// without a "jsonrpc" member.
func (p *rpcSession) reply(id json.RawMessage, result []byte, e *rpcError) error {
	var b []byte
	var err error
	if e != nil {
		b, err = json.Marshal(struct {
			ID    json.RawMessage `json:"id"`
			Error *rpcError       `json:"error"`
		}{id, e})
	} else {
		var compact bytes.Buffer
		if err := json.Compact(&compact, result); err != nil {
			return err
		}
		b, err = json.Marshal(struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}{id, compact.Bytes()})
	}
	if err != nil {
		return err
	}
	_, err = p.out.Write(append(b, '\n'))
	return err
}

// initializeResult is the initialize answer: the user agent, the login
// home the CLI resolved and the platform.
func initializeResult() []byte {
	home := os.Getenv("CODEX_HOME")
	if home == "" {
		home = filepath.Join(os.Getenv("HOME"), ".codex")
	}
	b, _ := json.Marshal(map[string]string{
		"userAgent":      "codex_cli_rs/0.155.1 (simcli)",
		"codexHome":      home,
		"platformFamily": "unix",
		"platformOs":     "linux",
	})
	return b
}

func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}
