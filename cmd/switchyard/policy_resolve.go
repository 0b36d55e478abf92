package main

import (
	"context"
)

// resolveSub is `switchyard policy resolve`: an inspection view of one
// role's lanes.
func resolveSub() policySub {
	return policySub{
		name:  "resolve",
		short: "Print a role's lanes and attempt chains",
		long: `Resolve one role of a frozen sheet for a parent into its lanes (one per seat),
each an ordered chain of attempts with its exhaustion group, funding, apiSpend,
route (native or external) and authorization, plus the lane's fallback and
continuation policy.

A missing sheet, or a role absent from a legacy sheet, prints
{"status":"unconfigured",...}: use the calling skill's documented default as
one attempt, with no fallback permission. A role absent from a policy-enabled
sheet, or a leaf role that names two rows ("synthesizer"), exits 65.`,
		example: `  $ switchyard policy resolve --sheet testdata/sheets/panel.sheet --role "swarm workers" --parent claude
  {
    "status": "resolved",
    "role": "swarm workers",
    "header": "swarm workers",
    "lanes": [ ... ]
  }

  $ switchyard policy resolve --sheet missing.sheet --role bug-fix --parent codex
  {"status":"unconfigured","role":"bug-fix","reason":"sheet not found: missing.sheet"}
`,
		flags: []flagSpec{optSheet, optRole, optParent},
		run:   runResolve,
	}
}

func runResolve(_ context.Context, f parsedFlags) (output, error) {
	parent, err := parseParent(f)
	if err != nil {
		return nil, err
	}
	rp, unconfigured, err := resolveRole(f["sheet"], f["role"], parent)
	if err != nil {
		return nil, err
	}
	if unconfigured != nil {
		return *unconfigured, nil
	}
	return resolvedOutput{Status: statusResolved, RolePolicy: rp}, nil
}
