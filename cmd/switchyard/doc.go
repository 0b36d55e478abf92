// Command switchyard is the Switchyard command line. It runs lanes (fallback
// chains of AI coding-agent CLI launches) as durable state machines on NATS
// JetStream, deciding each lane's next step from a frozen model sheet.
//
// Running work:
//
//	run        run one role of a model sheet to its final report (on an
//	           embedded server, a "serve" of the data directory, or --nats)
//	serve      the data directory's embedded JetStream server and the engine
//	           that drives every run stored there, until stopped
//	worker     execute attempts for some providers until stopped
//	runner     launch one provider CLI attempt and write its schema 2
//	           receipt; "runner status" reads progress snapshots
//
// Looking at runs:
//
//	status     runs and their lanes (--watch follows them)
//	report     a run's report again, at any time
//	history    a run's event log as the store holds it
//	replay     recompute a run's decisions from its event log and check them
//	usage      each provider's quota, eligibility and the gate's verdict
//
// The parent's answers to a lane that waits for it:
//
//	native     next (take a native job), report (record its host metadata)
//	inspect    the verdict on a started writer lane (clear or unsafe)
//	operation  done: the result of a lane's parent-operation handoff
//	recover    the answer for an interrupted lane that may continue on the
//	           same route
//	cancel     cancel a lane, or a whole run
//
// Housekeeping and the rest:
//
//	prune      remove final runs' worktrees and attempt files (the event
//	           log stays)
//	policy     validate|resolve|next|normalize against a model sheet: a
//	           drop-in for the reference pstack-model-policy helper (same
//	           flags, exit codes and JSON)
//	completion the shell completion script
//
// Exit codes shared by the commands: 0 success; 64 a usage error (bad or
// missing option, unreadable input, no such run; "error: <msg>" on stderr);
// 65 an invalid model sheet or role, or a rejected receipt; 1 anything else.
// run adds 3 (--fail-if-undelivered and no lane delivered) and 130
// (interrupted before the run was final); runner has its own table, one
// code per receipt status. Each command's --help gives its flags, examples
// and exact exit codes; README.md and docs/ are the user's guide.
package main
