package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/switchyard-dev/switchyard/policy"
)

// flagSpec declares one option of a policy subcommand. Every option takes a
// value; there are no boolean options besides --help.
type flagSpec struct {
	name     string // without the leading "--"
	arg      string // value placeholder in the help text
	required bool
	help     string
}

// parsedFlags holds the values given on the command line, by name.
type parsedFlags map[string]string

// has reports whether the option was given.
func (f parsedFlags) has(name string) bool { _, ok := f[name]; return ok }

// index returns a zero-based index option, or def when it was not given.
func (f parsedFlags) index(name string, def int) (int, error) {
	v, ok := f[name]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || strings.TrimLeft(v, "0123456789") != "" {
		return 0, policy.Usagef("--%s must be a non-negative integer, got %q", name, v)
	}
	return n, nil
}

// parsePolicyFlags parses args strictly against specs, the way the reference
// helper reads them: options are "--name value" (or "--name=value"); a value
// that starts with "--" counts as missing, while an empty value is a value
// (--role "" is a role that no row has); unknown options,
// repeated options and positional arguments are usage errors. help is true
// when --help or -h appears where an option may, whatever else is wrong.
func parsePolicyFlags(specs []flagSpec, args []string) (vals parsedFlags, help bool, err error) {
	known := make(map[string]flagSpec, len(specs))
	for _, s := range specs {
		known[s.name] = s
	}
	vals = parsedFlags{}
	fail := func(e error) {
		if err == nil {
			err = e
		}
	}
	for i := 0; i < len(args); i++ {
		tok := args[i]
		switch {
		case tok == "--help" || tok == "-h":
			help = true
			continue
		case tok == "--":
			fail(policy.Usagef("unexpected argument %q", tok))
			continue
		case !strings.HasPrefix(tok, "-") || tok == "-":
			fail(policy.Usagef("unexpected argument %q", tok))
			continue
		case !strings.HasPrefix(tok, "--"):
			fail(policy.Usagef("unknown option %s", tok))
			continue
		}
		name, val, inline := strings.Cut(tok[2:], "=")
		if _, ok := known[name]; !ok {
			fail(policy.Usagef("unknown option --%s", name))
			continue
		}
		given := inline
		if !inline && i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			i++
			val, given = args[i], true
		}
		if !given || strings.HasPrefix(val, "--") {
			fail(policy.Usagef("option --%s needs a value", name))
			continue
		}
		if _, dup := vals[name]; dup {
			fail(policy.Usagef("option --%s given more than once", name))
			continue
		}
		vals[name] = val
	}
	if help || err != nil {
		return vals, help, err
	}
	for _, s := range specs {
		if s.required && !vals.has(s.name) {
			return vals, false, policy.Usagef("missing required option --%s", s.name)
		}
	}
	return vals, false, nil
}

// flagUsage renders the options of specs for a help text, one per line.
func flagUsage(specs []flagSpec) string {
	var b strings.Builder
	for _, s := range specs {
		left := "--" + s.name + " " + s.arg
		fmt.Fprintf(&b, "  %-16s %s\n", left, s.help)
	}
	fmt.Fprintf(&b, "  %-16s %s\n", "-h, --help", "show this help")
	return b.String()
}

// synopsis renders "--sheet F --role R [--lane N]" for specs.
func synopsis(specs []flagSpec) string {
	parts := make([]string, 0, len(specs))
	for _, s := range specs {
		p := "--" + s.name + " " + s.arg
		if !s.required {
			p = "[" + p + "]"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}
