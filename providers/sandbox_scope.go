package providers

import (
	"path/filepath"
)

// Helpers for a spec's sandbox scope (Spec.StateDirs and Spec.APIHosts):
// what a contained attempt of one CLI may write outside the attempt (its
// state) and which hosts its egress proxy forwards to. The lists are
// minimal: the CLI's own login, session, config and cache locations, and
// its API, login and model hosts on 443 (docs/GUARANTEES.md names them;
// PROVIDER-PROTOCOLS.md and QUOTA-PROTOCOLS.md are the sources for the
// hosts).

// under joins HOME-relative state locations.
func under(rel ...string) func(string, map[string]string) []string {
	return func(home string, _ map[string]string) []string {
		out := make([]string, len(rel))
		for i, r := range rel {
			out[i] = filepath.Join(home, r)
		}
		return out
	}
}

// envOr is env[name] when set, else home/rel.
func envOr(env map[string]string, name, home, rel string) string {
	if v := env[name]; v != "" && filepath.IsAbs(v) {
		return filepath.Clean(v)
	}
	return filepath.Join(home, rel)
}

// xdgDirs is the "opencode" (name) directory under each named XDG base
// directory (XDG_DATA_HOME and so on), each falling back to its default
// under home.
func xdgDirs(name string, bases ...string) func(string, map[string]string) []string {
	return func(home string, env map[string]string) []string {
		out := make([]string, len(bases))
		for i, base := range bases {
			out[i] = filepath.Join(envOr(env, base, home, xdgDefaults[base]), name)
		}
		return out
	}
}

// xdgDefaults are the XDG base directories' defaults under HOME.
var xdgDefaults = map[string]string{
	"XDG_DATA_HOME":   ".local/share",
	"XDG_CONFIG_HOME": ".config",
	"XDG_STATE_HOME":  ".local/state",
	"XDG_CACHE_HOME":  ".cache",
}

func https(hosts ...string) []string {
	out := make([]string, len(hosts))
	for i, h := range hosts {
		out[i] = h + ":443"
	}
	return out
}
