package main

import (
	"slices"

	"github.com/switchyard-dev/switchyard/testdata/simcli/simlog"
)

// classify names what an invocation asks for: a preflight probe kind or
// the workload. Preflight argv are the short probe commands of RUNNER.md
// section 2; anything else is the workload.
func classify(provider string, args []string) string {
	if slices.Contains(args, "--version") || (len(args) == 1 && (args[0] == "-v" || args[0] == "-V" || args[0] == "version")) {
		return simlog.KindVersion
	}
	// OpenCode's global switches come before the subcommand.
	rest := args
	for len(rest) > 0 && (rest[0] == "--pure" || rest[0] == "--standalone" || rest[0] == "--print-logs") {
		rest = rest[1:]
	}
	sub := func(words ...string) bool {
		if len(rest) < len(words) {
			return false
		}
		for i, w := range words {
			if rest[i] != w {
				return false
			}
		}
		return true
	}
	switch provider {
	case "claude":
		if sub("auth", "status") {
			return simlog.KindStatus
		}
	case "codex":
		switch {
		case sub("login", "status"):
			return simlog.KindStatus
		case sub("app-server"):
			return simlog.KindAppServer
		}
	case "grok", "antigravity":
		if sub("models") {
			return simlog.KindModels
		}
	case "devin":
		switch {
		case sub("auth", "status"):
			return simlog.KindStatus
		case sub("models"):
			return simlog.KindModels
		}
	case "cursor":
		switch {
		case sub("status"), sub("whoami"):
			return simlog.KindStatus
		case sub("models"):
			return simlog.KindModels
		}
	case "opencode":
		switch {
		case sub("session", "export"):
			return simlog.KindSessionExport
		case sub("debug", "config"):
			return simlog.KindDebugConfig
		case sub("auth", "list"):
			return simlog.KindStatus
		case sub("models"):
			return simlog.KindModels
		}
	}
	return simlog.KindWorkload
}

// kindDir is the transcript subdirectory replayed for a kind.
func kindDir(kind string) string {
	switch kind {
	case simlog.KindWorkload:
		return "workload"
	case simlog.KindAppServer:
		return "app-server"
	case simlog.KindSessionExport:
		return "session-export"
	}
	return "preflight-" + kind
}

// flagValue returns the value of the first of names in args, written as
// "--name value" or "--name=value"; scanning stops at "--".
func flagValue(args []string, names ...string) (string, bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		for _, n := range names {
			if a == n && i+1 < len(args) {
				return args[i+1], true
			}
			if len(a) > len(n)+1 && a[:len(n)+1] == n+"=" {
				return a[len(n)+1:], true
			}
		}
	}
	return "", false
}

// cwdFlags are the flags by which each CLI is told its workspace.
var cwdFlags = map[string][]string{
	"codex":    {"--cd", "-C"},
	"grok":     {"--cwd"},
	"cursor":   {"--workspace"},
	"opencode": {"--dir"},
}
