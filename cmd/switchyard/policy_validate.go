package main

import (
	"context"
	"errors"
	"io/fs"

	"github.com/switchyard-dev/switchyard/policy"
)

// validateSub is `switchyard policy validate`: setup's check of a complete
// candidate sheet.
func validateSub() policySub {
	return policySub{
		name:  "validate",
		short: "Check a complete candidate sheet for setup",
		long: `Check a complete candidate model sheet before setup saves it: at least one
access fact, all 15 role rows with their minimum seats, single-seat non-panel
rows, and every attempt resolved and authorized for the parent. Prints
{"status":"valid","roles":N} (N is the number of rows), or exits 65 listing
every issue. A missing sheet is a usage error (64).

validate is for a whole sheet. A sheet written for one task (a few rows, such
as the demo's) fails it with a "missing role row" line per absent row; check
such a sheet with "switchyard doctor --sheet S --role R", which checks only the
rows and providers a run of that role uses.`,
		example: `  $ switchyard policy validate --sheet testdata/sheets/panel.sheet --parent claude
  {"status":"valid","roles":15}

  $ switchyard policy validate --sheet testdata/sheets/legacy.sheet --parent claude
  invalid model sheet:
  setup requires access facts for every configured provider
  ...
`,
		flags: []flagSpec{optSheet, optParent},
		run:   runValidate,
	}
}

func runValidate(_ context.Context, f parsedFlags) (output, error) {
	parent, err := parseParent(f)
	if err != nil {
		return nil, err
	}
	src, err := readInput(f["sheet"])
	if errors.Is(err, fs.ErrNotExist) {
		return nil, policy.Usagef("sheet not found: %s", f["sheet"])
	}
	if err != nil {
		return nil, policy.Usagef("cannot read sheet %s: %v", f["sheet"], err)
	}
	opt := policy.DefaultOptions()
	s, err := policy.ParseSheet(src, opt)
	if err != nil {
		return nil, err
	}
	rows, err := policy.ValidateSheet(s, parent, opt)
	if err != nil {
		return nil, err
	}
	return validOutput{Status: statusValid, Roles: rows}, nil
}
