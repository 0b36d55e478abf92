package main

import (
	"strings"

	"github.com/switchyard-dev/switchyard/events"
)

// commandRoles is the role each top-level command connects to a serve or a
// cluster as: the least that lets it do its work. A command not listed
// reads only.
var commandRoles = map[string]events.Role{
	// serve and a self-contained run own the embedded server and use its
	// in-process connection as the engine; with --nats or against a
	// serve, serve is the engine and run a parent that submits.
	"serve":     events.RoleEngine,
	"run":       events.RoleParent,
	"worker":    events.RoleWorker,
	"cancel":    events.RoleParent,
	"inspect":   events.RoleParent,
	"operation": events.RoleParent,
	"recover":   events.RoleParent,
	"native":    events.RoleParent,
	"prune":     events.RoleParent,
	"usage":     events.RoleParent,
	"status":    events.RoleReader,
	"history":   events.RoleReader,
	"replay":    events.RoleReader,
	"report":    events.RoleReader,
	"doctor":    events.RoleReader,
	"workers":   events.RoleReader,
	"logs":      events.RoleReader,
}

// commandRole is the role of the command path ("switchyard operation
// done" is operation's).
func commandRole(path string) events.Role {
	toks := strings.Fields(path)
	if len(toks) >= 2 {
		if r, ok := commandRoles[toks[1]]; ok {
			return r
		}
	}
	return events.RoleReader
}

// role is the role f's command connects as.
func (f engineFlags) role() events.Role {
	if f.cmd == nil {
		return events.RoleReader
	}
	return commandRole(f.cmd.CommandPath())
}
