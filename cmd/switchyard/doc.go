// Command switchyard is the Switchyard command line: today it exposes the
// policy boundary as `switchyard policy validate|resolve|next|normalize`, a
// drop-in for the reference pstack-model-policy helper (same flags, exit
// codes and JSON).
//
// Every command prints JSON on stdout and exits 0 on success (including an
// "unconfigured" role), 64 on a usage, state or history error ("error: <msg>"
// and the help text on stderr), and 65 when the model sheet, the role or a
// receipt is invalid ("invalid model sheet:" and one issue per line on
// stderr). Run `switchyard policy --help` for the full contract.
package main
