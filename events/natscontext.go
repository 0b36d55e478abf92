package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// NATSContext is a context of the nats CLI (`nats context save NAME`): a
// named server list with its credentials and TLS files, stored as JSON in
// the nats CLI's context directory.
type NATSContext struct {
	// Name is the context's name; Path its file.
	Name, Path string
	// Description is the context's own description.
	Description string
	// URL is the comma-separated server list; empty when the context names
	// none.
	URL string
	// Auth is the context's credentials and TLS, with Names pointing at
	// the context's fields.
	Auth ClientAuth
}

// NATSContextDir is the nats CLI's context directory:
// $XDG_CONFIG_HOME/nats/context, by default ~/.config/nats/context.
func NATSContextDir() (string, error) {
	base := os.Getenv("XDG_CONFIG_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return "", authErrorf("cannot find the nats context directory: neither XDG_CONFIG_HOME nor HOME is set; set one of them")
		}
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "nats", "context"), nil
}

// contextName is what the nats CLI accepts as a context name.
var contextName = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9_.-]*$`)

// MaxNATSContextBytes bounds a context file.
const MaxNATSContextBytes = 64 << 10

// LoadNATSContext reads the context name from NATSContextDir.
func LoadNATSContext(name string) (NATSContext, error) {
	if !contextName.MatchString(name) || len(name) > 200 {
		return NATSContext{}, authErrorf("--context %q is not a context name (letters, digits, '.', '_' and '-'); `nats context ls` lists yours", name)
	}
	dir, err := NATSContextDir()
	if err != nil {
		return NATSContext{}, err
	}
	path := filepath.Join(dir, name+".json")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return NATSContext{}, authErrorf("--context %s: no context file %s; create it with `nats context save %s --server URL ...` or check XDG_CONFIG_HOME", name, path, name)
	}
	return LoadNATSContextFile(name, path)
}

// contextFile is a context's JSON. Values that change the connection and
// that Switchyard does not implement are refused when set, so a context
// never half-applies.
type contextFile struct {
	Description string `json:"description"`
	URL         string `json:"url"`
	Token       string `json:"token"`
	User        string `json:"user"`
	Password    string `json:"password"`
	Creds       string `json:"creds"`
	NKey        string `json:"nkey"`
	Cert        string `json:"cert"`
	Key         string `json:"key"`
	CA          string `json:"ca"`
	InboxPrefix string `json:"inbox_prefix"`
	TLSFirst    bool   `json:"tls_first"`
}

// contextUnsupported are the context fields Switchyard does not implement,
// with the fix when one is set.
var contextUnsupported = map[string]string{
	"nsc":                    "resolve it to a .creds file (`nsc generate creds`) and set creds to its path",
	"user_jwt":               "use a .creds file (creds) that holds the JWT and its seed",
	"jetstream_domain":       "Switchyard uses the account's default JetStream API; remove it",
	"jetstream_api_prefix":   "Switchyard uses the account's default JetStream API; remove it",
	"jetstream_event_prefix": "remove it",
	"socks_proxy":            "connect without a proxy; remove it",
	"windows_cert_store":     "use cert, key and ca files",
	"windows_cert_match_by":  "use cert, key and ca files",
	"windows_cert_match":     "use cert, key and ca files",
	"windows_ca_certs_match": "use cert, key and ca files",
}

// contextIgnored are fields that only concern the nats CLI's own display.
var contextIgnored = map[string]bool{"color_scheme": true, "select_timeout": true}

// LoadNATSContextFile reads the context file path as context name.
func LoadNATSContextFile(name, path string) (NATSContext, error) {
	what := "--context " + name + " (" + path + ")"
	b, err := readAuthFile(path, "--context "+name+" file")
	if err != nil {
		return NATSContext{}, err
	}
	defer clear(b)
	if len(b) > MaxNATSContextBytes {
		return NATSContext{}, authErrorf("%s is larger than %d bytes; it is not a nats context", what, MaxNATSContextBytes)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		// The decoder's message may quote the file; name the position only.
		return NATSContext{}, authErrorf("%s is not a JSON object; fix it or recreate it with `nats context save %s`", what, name)
	}
	known := knownContextFields()
	for k, v := range raw {
		if known[k] || contextIgnored[k] || isZeroJSON(v) {
			continue
		}
		if fix, ok := contextUnsupported[k]; ok {
			return NATSContext{}, authErrorf("%s sets %q, which Switchyard does not support; %s", what, k, fix)
		}
		return NATSContext{}, authErrorf("%s has an unknown field %q; remove it (Switchyard reads description, url, user, password, token, creds, nkey, cert, key, ca, inbox_prefix, tls_first)", what, k)
	}
	var cf contextFile
	if err := json.Unmarshal(b, &cf); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return NATSContext{}, authErrorf("%s: field %q has the wrong type; want a %s", what, te.Field, te.Type)
		}
		return NATSContext{}, authErrorf("%s is not a nats context; fix it or recreate it with `nats context save %s`", what, name)
	}
	field := func(f string) string { return "--context " + name + " field " + f }
	creds, err := contextPath(cf.Creds, field("creds"), true)
	if err != nil {
		return NATSContext{}, err
	}
	nkey, err := contextPath(cf.NKey, field("nkey"), true)
	if err != nil {
		return NATSContext{}, err
	}
	cert, err := contextPath(cf.Cert, field("cert"), false)
	if err != nil {
		return NATSContext{}, err
	}
	key, err := contextPath(cf.Key, field("key"), false)
	if err != nil {
		return NATSContext{}, err
	}
	ca, err := contextPath(cf.CA, field("ca"), false)
	if err != nil {
		return NATSContext{}, err
	}
	c := NATSContext{
		Name: name, Path: path, Description: cf.Description, URL: strings.TrimSpace(cf.URL),
		Auth: ClientAuth{
			CredsFile: creds, NKeyFile: nkey, User: cf.User, Password: cf.Password, Token: cf.Token,
			TLSCA: ca, TLSCert: cert, TLSKey: key, TLSFirst: cf.TLSFirst, InboxPrefix: cf.InboxPrefix,
			Names: ClientAuthNames{
				CredsFile: field("creds"), NKeyFile: field("nkey"), User: field("user"), Password: field("password"),
				Token: field("token"), TLSCA: field("ca"), TLSCert: field("cert"), TLSKey: field("key"),
			},
		},
	}
	if err := c.Auth.Validate(); err != nil {
		return NATSContext{}, err
	}
	return c, nil
}

func knownContextFields() map[string]bool {
	out := map[string]bool{}
	for _, k := range []string{"description", "url", "token", "user", "password", "creds", "nkey", "cert", "key", "ca", "inbox_prefix", "tls_first"} {
		out[k] = true
	}
	return out
}

// isZeroJSON: null, "", false, 0, [] or {} (the nats CLI writes every
// field, set or not).
func isZeroJSON(v json.RawMessage) bool {
	switch string(bytes.TrimSpace(v)) {
	case "null", `""`, "false", "0", "[]", "{}":
		return true
	}
	return false
}

// contextPath turns a context's file value into a path: ~ is the home
// directory; creds and nkey may also be file:// URIs (the nats CLI's other
// credential schemes are refused).
func contextPath(v, field string, uri bool) (string, error) {
	if v == "" {
		return "", nil
	}
	if uri {
		if p, ok := strings.CutPrefix(v, "file://"); ok {
			v = p
		} else if i := strings.Index(v, ":"); i > 0 && !strings.ContainsAny(v[:i], `/\`) && i != 1 {
			scheme := v[:i]
			return "", authErrorf("%s uses the %q scheme, which Switchyard does not support; point it at a file (a path or file:///path)", field, scheme)
		}
	}
	if v == "~" || strings.HasPrefix(v, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", authErrorf("%s starts with ~ but HOME is not set; give an absolute path", field)
		}
		v = filepath.Join(home, strings.TrimPrefix(v, "~"))
	}
	return v, nil
}
