package main

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/events"
)

// natsFlags are how a command logs in to, and checks, a NATS server or
// cluster given by --nats, NATS_URL or --context: the nats CLI's own
// options and environment variables. Only file paths and names are ever on
// the command line; a password or token comes from the environment or a
// context file, so `ps` shows none.
type natsFlags struct {
	creds, nkey, tlsCA, tlsCert, tlsKey, context string
	// urlFrom says what gave the servers: "--nats", "--context" or
	// NATS_URL ("" when none did).
	urlFrom string
	// auth is the resolved login and TLS, role the command's (resolve).
	auth events.ClientAuth
	role events.Role
}

// The environment variables the nats CLI reads, which Switchyard reads the
// same way.
const (
	envNATSURL      = "NATS_URL"
	envNATSUser     = "NATS_USER"
	envNATSPassword = "NATS_PASSWORD"
	envNATSToken    = "NATS_TOKEN"
)

// addNATSFlags declares --creds, --nkey, --tls-ca, --tls-cert, --tls-key
// and --context, and adds an example of them to c's help.
func addNATSFlags(c *cobra.Command, n *natsFlags) {
	fl := c.Flags()
	fl.StringVar(&n.creds, "creds", "", "NATS credentials `FILE` (user JWT + nkey seed, as nsc generate creds writes it), for --nats")
	fl.StringVar(&n.nkey, "nkey", "", "NATS user nkey seed `FILE`, for --nats")
	fl.StringVar(&n.tlsCA, "tls-ca", "", "PEM `FILE` of the CA that signed the NATS servers' certificates (default: the system's roots)")
	fl.StringVar(&n.tlsCert, "tls-cert", "", "PEM client certificate `FILE`, for NATS servers that verify clients (with --tls-key)")
	fl.StringVar(&n.tlsKey, "tls-key", "", "PEM private key `FILE` of --tls-cert")
	fl.StringVar(&n.context, "context", "", "a nats CLI context `NAME` ($XDG_CONFIG_HOME/nats/context/NAME.json, default ~/.config):\nits servers, credentials and TLS files; --nats, --creds, --nkey and --tls-* override it")
	// c has no parent yet: name the subcommands' parents here.
	name, role := c.Name(), commandRole("switchyard "+c.Name())
	switch {
	case name == "next" || name == "report" && strings.Contains(c.Use, "--execution"):
		name, role = "native "+name, events.RoleParent
	case name == "done":
		name, role = "operation done", events.RoleParent
	}
	if c.Example != "" {
		c.Example += "\n\n"
	}
	c.Example += `  # Against a NATS cluster with TLS, as the role's user (docs/DEPLOY.md); the
  # password comes from NATS_PASSWORD (or pass --creds FILE, --nkey FILE):
  NATS_USER=switchyard-` + string(role) + ` NATS_PASSWORD=... switchyard ` + name + ` \
    --nats tls://n1:4222,tls://n2:4222 --tls-ca ca.pem

  # The same through a nats CLI context (nats context save prod ...):
  switchyard ` + name + ` --context prod`
}

// resolve settles where and how the command connects, before anything
// does: *natsURL becomes --nats, else the context's url, else NATS_URL
// (the command line beats the context, which beats the environment). It
// is a usage error to give a credential or TLS option without a server
// to use it on: the data directory's own server has its own credentials.
func (n *natsFlags) resolve(c *cobra.Command, natsURL *string) error {
	var nctx *events.NATSContext
	if c.Flags().Changed("context") {
		loaded, err := events.LoadNATSContext(n.context)
		if err != nil {
			return usagef("%v", err)
		}
		nctx = &loaded
	}
	if *natsURL != "" {
		n.urlFrom = "--nats"
	}
	if *natsURL == "" && !c.Flags().Changed("nats") {
		switch {
		case nctx != nil && nctx.URL != "":
			*natsURL, n.urlFrom = nctx.URL, "--context"
		case os.Getenv(envNATSURL) != "":
			*natsURL, n.urlFrom = os.Getenv(envNATSURL), envNATSURL
			if len(events.SplitURLs(*natsURL)) == 0 {
				return usagef("%s %q lists no URL; set it to nats://host:port[,nats://host:port...] or unset it", envNATSURL, events.RedactURLs(*natsURL))
			}
		}
	}
	if *natsURL == "" {
		if nctx != nil {
			return usagef("--context %s (%s) names no server url; add --nats URL, set NATS_URL, or save the context with --server", n.context, nctx.Path)
		}
		for _, name := range []string{"creds", "nkey", "tls-ca", "tls-cert", "tls-key"} {
			if c.Flags().Changed(name) {
				return usagef("--%s applies only to a NATS server given by --nats, NATS_URL or --context (the data directory's own server has its own credentials); add --nats URL or drop --%s", name, name)
			}
		}
		return nil
	}

	a := events.ClientAuth{}
	if nctx != nil {
		a = nctx.Auth
	}
	// A login on the command line replaces the context's; the environment's
	// counts only when neither gives one.
	if n.creds != "" || n.nkey != "" {
		a.CredsFile, a.NKeyFile, a.User, a.Password, a.Token = n.creds, n.nkey, "", "", ""
		a.Names.CredsFile, a.Names.NKeyFile = "--creds", "--nkey"
	} else if a.Method() == "none" && a.Password == "" {
		a.User, a.Password, a.Token = os.Getenv(envNATSUser), os.Getenv(envNATSPassword), os.Getenv(envNATSToken)
		a.Names.User, a.Names.Password, a.Names.Token = envNATSUser, envNATSPassword, envNATSToken
	}
	// The provider CLIs a worker starts inherit this process's
	// environment: a NATS secret must not reach them.
	os.Unsetenv(envNATSPassword)
	os.Unsetenv(envNATSToken)
	for _, f := range []struct {
		flag, value string
		path, name  *string
	}{
		{"tls-ca", n.tlsCA, &a.TLSCA, &a.Names.TLSCA},
		{"tls-cert", n.tlsCert, &a.TLSCert, &a.Names.TLSCert},
		{"tls-key", n.tlsKey, &a.TLSKey, &a.Names.TLSKey},
	} {
		if f.value != "" || *f.path == "" {
			// An empty one is named by the option that would set it.
			*f.path, *f.name = f.value, "--"+f.flag
		}
	}
	n.role = commandRole(c.CommandPath())
	if a.InboxPrefix == "" {
		// A deployment's role users subscribe only to their own inboxes.
		a.InboxPrefix = events.InboxPrefix(n.role)
	}
	if err := a.Validate(); err != nil {
		return usagef("%v", err)
	}
	n.auth = a
	return nil
}

// source names the servers and what gave them, for messages: "--nats
// URLS", "NATS_URL URLS" or "--context NAME (URLS)", user info hidden.
func (n *natsFlags) source(natsURL string) string {
	u := events.RedactURLs(natsURL)
	switch n.urlFrom {
	case "--context":
		return "--context " + n.context + " (" + u + ")"
	case envNATSURL:
		return envNATSURL + " " + u
	}
	return "--nats " + u
}

// render is the options that reach the same servers from another shell,
// for the commands a command prints. Secrets are never rendered: they
// stay in the environment or the context, and --nats loses its user info.
func (n *natsFlags) render(natsURL string) string {
	var b strings.Builder
	if n.context != "" {
		b.WriteString(" --context " + shellQuote(n.context))
	}
	if n.urlFrom == "--nats" || n.urlFrom == envNATSURL && n.context != "" {
		b.WriteString(" --nats " + shellQuote(events.RedactURLs(natsURL)))
	}
	for _, f := range [][2]string{{"creds", n.creds}, {"nkey", n.nkey}, {"tls-ca", n.tlsCA}, {"tls-cert", n.tlsCert}, {"tls-key", n.tlsKey}} {
		if f[1] != "" {
			b.WriteString(" --" + f[0] + " " + shellQuote(f[1]))
		}
	}
	return b.String()
}
