package simquota

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// ClaudeCredentials describes a fixture Claude login.
type ClaudeCredentials struct {
	Token     string    // "" means Token
	ExpiresAt time.Time // zero means far in the future
	// Scopes nil means user:inference and user:profile; NoScopes writes
	// no scopes key at all.
	Scopes   []string
	NoScopes bool
}

// GeminiCredentials describes a fixture Gemini login.
type GeminiCredentials struct {
	Token  string    // "" means Token
	Expiry time.Time // zero means far in the future
}

// farFuture is the expiry of fixture tokens that should not expire.
var farFuture = time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)

// ClaudeCredentialsJSON renders a ~/.claude/.credentials.json.
func ClaudeCredentialsJSON(c ClaudeCredentials) []byte {
	if c.Token == "" {
		c.Token = Token
	}
	if c.ExpiresAt.IsZero() {
		c.ExpiresAt = farFuture
	}
	oauth := map[string]any{
		"accessToken":      c.Token,
		"refreshToken":     Token + "-refresh",
		"expiresAt":        c.ExpiresAt.UnixMilli(),
		"subscriptionType": "max",
		"rateLimitTier":    "default_claude_max_20x",
	}
	if !c.NoScopes {
		if c.Scopes == nil {
			c.Scopes = []string{"user:inference", "user:profile"}
		}
		oauth["scopes"] = c.Scopes
	}
	b, _ := json.Marshal(map[string]any{"claudeAiOauth": oauth})
	return b
}

// GeminiCredentialsJSON renders a ~/.gemini/oauth_creds.json.
func GeminiCredentialsJSON(c GeminiCredentials) []byte {
	if c.Token == "" {
		c.Token = Token
	}
	if c.Expiry.IsZero() {
		c.Expiry = farFuture
	}
	b, _ := json.Marshal(map[string]any{
		"access_token":  c.Token,
		"refresh_token": "1//" + Token + "-refresh",
		"scope":         "https://www.googleapis.com/auth/cloud-platform openid https://www.googleapis.com/auth/userinfo.email",
		"token_type":    "Bearer",
		"id_token":      "eyJ.user-SNTL-51c0.sntl.user@example.invalid",
		"expiry_date":   c.Expiry.UnixMilli(),
	})
	return b
}

// WriteClaudeCredentials writes content as home's Claude credentials
// (mode 0600, directories 0700).
func WriteClaudeCredentials(t testing.TB, home string, content []byte) {
	t.Helper()
	writeFile(t, filepath.Join(home, ".claude", ".credentials.json"), content)
}

// WriteGeminiCredentials writes content as home's Gemini credentials.
func WriteGeminiCredentials(t testing.TB, home string, content []byte) {
	t.Helper()
	writeFile(t, filepath.Join(home, ".gemini", "oauth_creds.json"), content)
}

func writeFile(t testing.TB, path string, content []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatalf("simquota: %v", err)
	}
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatalf("simquota: %v", err)
	}
}
