// Package simquota is an in-process stand-in for the HTTP quota sources
// (Claude's OAuth usage endpoint, Gemini's Code Assist loadCodeAssist and
// retrieveUserQuota) for tests: an http.Handler to serve with httptest,
// answering each endpoint per a scenario, and checking that every request
// carries the fixture token (so a test proves the token is sent). The
// quota package reaches it through its test-only base-URL overrides
// (Env). See ../../../shared/QUOTA-PROTOCOLS.md §2 and §3.
package simquota

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Fixture values. They are the shared plan's sentinels: a test that finds
// one in an output has found a leak.
const (
	// Token is the OAuth access token of the fixture credentials; every
	// request must carry it as a bearer token.
	Token = "tok-SNTL-9c1e"
	// Project is the Code Assist project loadCodeAssist answers and
	// retrieveUserQuota expects.
	Project = "proj-SNTL-33d2"
)

// Endpoint paths.
const (
	ClaudeUsagePath = "/api/oauth/usage"
	GeminiLoadPath  = "/v1internal:loadCodeAssist"
	GeminiQuotaPath = "/v1internal:retrieveUserQuota"
)

// Environment overrides the quota package reads (test-only; duplicated
// here so this package does not import the package it stands in for).
const (
	claudeURLEnv = "SWITCHYARD_TEST_CLAUDE_USAGE_URL"
	geminiURLEnv = "SWITCHYARD_TEST_GEMINI_CODE_ASSIST_URL"
)

// Scenario is how an endpoint answers.
type Scenario string

// Scenarios.
const (
	OK           Scenario = "ok"           // 200 with the endpoint's body (Set*Body overrides it)
	Exhausted    Scenario = "exhausted"    // 200, a window at 100% used
	Throttled    Scenario = "throttled"    // 429 with Retry-After
	Unauthorized Scenario = "unauthorized" // 401, the token expired
	Forbidden    Scenario = "forbidden"    // 403, the token lacks a scope
	ServerError  Scenario = "server_error" // 500
	Malformed    Scenario = "malformed"    // 200, a truncated JSON body
	Slow         Scenario = "slow"         // no answer until the client gives up (or Close)
	NoProject    Scenario = "no_project"   // loadCodeAssist only: 200 without a project
)

// Server is the stand-in. The zero value is not usable: call New.
type Server struct {
	mu          sync.Mutex
	scenario    map[string]Scenario
	body        map[string][]byte
	hits        map[string]int
	problems    []string
	closed      chan struct{}
	closeOnce   sync.Once
	slowMaximum time.Duration
}

// New returns a Server answering OK on every endpoint.
func New() *Server {
	return &Server{
		scenario:    map[string]Scenario{},
		body:        map[string][]byte{},
		hits:        map[string]int{},
		closed:      make(chan struct{}),
		slowMaximum: 2 * time.Minute,
	}
}

// SetClaude picks the usage endpoint's scenario.
func (s *Server) SetClaude(sc Scenario) { s.set(ClaudeUsagePath, sc) }

// SetGemini picks the scenarios of loadCodeAssist and retrieveUserQuota.
func (s *Server) SetGemini(load, quota Scenario) {
	s.set(GeminiLoadPath, load)
	s.set(GeminiQuotaPath, quota)
}

// SetBody replaces the OK body of the endpoint at path (a fixture).
func (s *Server) SetBody(path string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.body[path] = slices.Clone(body)
}

func (s *Server) set(path string, sc Scenario) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scenario[path] = sc
}

// Hits returns how many requests reached the endpoint at path.
func (s *Server) Hits(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// Problems lists every request that broke the protocol (wrong method,
// missing or wrong token or header, bad body, unknown path); a passing
// test expects none.
func (s *Server) Problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.problems)
}

// Close releases every request held by Slow. Call it before the
// httptest.Server's Close.
func (s *Server) Close() { s.closeOnce.Do(func() { close(s.closed) }) }

// Env returns the environment entries that point the quota package at
// baseURL (an httptest.Server's URL) and HOME at home.
func Env(home, baseURL string) []string {
	return []string{
		"HOME=" + home,
		claudeURLEnv + "=" + baseURL + ClaudeUsagePath,
		geminiURLEnv + "=" + baseURL,
	}
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	s.mu.Lock()
	s.hits[path]++
	sc, ok := s.scenario[path]
	if !ok {
		sc = OK
	}
	body := s.body[path]
	s.mu.Unlock()

	if problem := s.check(r); problem != "" {
		s.mu.Lock()
		s.problems = append(s.problems, path+": "+problem)
		s.mu.Unlock()
		// 418 maps to no documented reason, so a test expecting any
		// scenario's outcome fails on it.
		http.Error(w, problem, http.StatusTeapot)
		return
	}
	switch sc {
	case OK, Exhausted, NoProject:
		if body == nil || sc != OK {
			body = defaultBody(path, sc)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	case Malformed:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"five_hour":{"utilization":61.0,"resets_at":"2026-`)
	case Throttled:
		w.Header().Set("Retry-After", "60")
		errorBody(w, path, http.StatusTooManyRequests)
	case Unauthorized:
		errorBody(w, path, http.StatusUnauthorized)
	case Forbidden:
		errorBody(w, path, http.StatusForbidden)
	case ServerError:
		errorBody(w, path, http.StatusInternalServerError)
	case Slow:
		t := time.NewTimer(s.slowMaximum)
		defer t.Stop()
		select {
		case <-r.Context().Done():
		case <-s.closed:
		case <-t.C:
		}
		errorBody(w, path, http.StatusGatewayTimeout)
	default:
		http.Error(w, "simquota: unknown scenario "+string(sc), http.StatusTeapot)
	}
}

// check returns what is wrong with a request, "" when nothing is.
func (s *Server) check(r *http.Request) string {
	if got := r.Header.Get("Authorization"); got != "Bearer "+Token {
		return "Authorization is not the fixture bearer token"
	}
	switch r.URL.Path {
	case ClaudeUsagePath:
		if r.Method != http.MethodGet {
			return "method " + r.Method + ", want GET"
		}
		if got := r.Header.Get("anthropic-beta"); got != "oauth-2025-04-20" {
			return fmt.Sprintf("anthropic-beta %q, want oauth-2025-04-20", got)
		}
		return ""
	case GeminiLoadPath, GeminiQuotaPath:
		if r.Method != http.MethodPost {
			return "method " + r.Method + ", want POST"
		}
		if got := r.Header.Get("Content-Type"); got != "application/json" {
			return fmt.Sprintf("Content-Type %q, want application/json", got)
		}
		var req struct {
			Project  *string `json:"project"`
			Metadata *struct {
				PluginType string `json:"pluginType"`
			} `json:"metadata"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil {
			return "body is not JSON"
		}
		if r.URL.Path == GeminiLoadPath && (req.Metadata == nil || req.Metadata.PluginType != "GEMINI") {
			return "loadCodeAssist without metadata.pluginType GEMINI"
		}
		if r.URL.Path == GeminiQuotaPath && (req.Project == nil || *req.Project != Project) {
			return "retrieveUserQuota without the fixture project"
		}
		return ""
	}
	return "unknown path"
}
