#!/usr/bin/env bash
# The README's first command (`make demo` runs this after building
# bin/switchyard and bin/simcli): a three-seat panel on the embedded engine
# with the simulated provider CLIs, in which the first seat's primary
# (codex) is excluded before launch: its simulated account has purchased
# credits present, so running it could spend them (execution_policy_blocked),
# and the lane runs grok instead. No codex attempt runs: codex is started
# only as `codex app-server` for quota readings, once or twice by the run's
# worker and once by `switchyard usage` (docs/outputs_test.go checks the
# count in bin/sim/invocations.jsonl). `switchyard usage` shows why, and the run's event log is replayed and every decision
# (the exclusion included) recomputed.
#
# Everything it writes lives in a fresh temporary directory (kept, so you can
# look around; the last line says where), except the simulated CLIs, which
# are installed into bin/sim. The lanes read this clone (read-only): a
# read-only Grok lane must see a real checkout, never one under a temporary
# directory (provider-dispatch.md, "Read-only mode"; providers refuses it).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sy="$root/bin/switchyard"
simcli="$root/bin/simcli"
for b in "$sy" "$simcli"; do
	if [[ ! -x "$b" ]]; then
		echo "demo: $b is missing; run \`make demo\`, which builds it" >&2
		exit 1
	fi
done

work="$(mktemp -d "${TMPDIR:-/tmp}/switchyard-demo.XXXXXX")"
data="$work/data"

# The simulated CLIs: every provider replays its recorded success, except
# codex, whose account (as its app-server reports it) has purchased credits.
rm -f "$root/bin/sim/invocations.jsonl" "$root/bin/sim/signals.jsonl"
"$simcli" install -transcripts "$root/testdata/transcripts" "$root/bin/sim" codex=credits-present

cat >"$work/demo.sheet" <<'SHEET'
# Switchyard demo sheet: one three-seat panel, subscriptions only.
# access: {"provider":"codex","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
# access: {"provider":"grok","funding":"included","capacity":"standard","apiSpend":"approved","provenance":"user"}
# access: {"provider":"devin","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}
# fallback: {"on":["usage-exhausted","route-unavailable"]}
swarm workers: codex:gpt-5.6-sol@high -> grok:grok-4.7@xhigh, grok:grok-4.7@high -> devin:swe-2@high, devin:swe-2@high -> codex:gpt-5.6-sol@medium
SHEET
printf 'Summarize README.md in one sentence.\n' >"$work/prompt.md"

export PATH="$root/bin/sim:$PATH"
# Every attempt runs inside the Landlock sandbox with read-only
# containment required (no opt-in flag); the simulated CLIs keep their
# invocation log in bin/sim, the one extra directory they may write.
export SWITCHYARD_SANDBOX_WRITABLE="$root/bin/sim"

echo "\$ switchyard run --sheet demo.sheet --role \"swarm workers\" --parent claude --prompt prompt.md --cwd . --run-id demo"
"$sy" run --data-dir "$data" --run-id demo \
	--sheet "$work/demo.sheet" --role "swarm workers" --parent claude \
	--prompt "$work/prompt.md" --cwd "$root"

echo
echo "\$ switchyard usage --provider codex"
"$sy" usage --data-dir "$data" --provider codex

echo
echo "\$ switchyard replay --run demo --verify"
"$sy" replay --data-dir "$data" --run demo --verify

echo
echo "Demo data: $work (look around with: $sy status --data-dir $data --run demo; remove it with: rm -rf $work)"
echo "Watch it in a browser: $sy serve --data-dir $data --listen 127.0.0.1:0 --http 127.0.0.1:8233, then open the sign-in address it prints (http://127.0.0.1:8233/#code=..., one use; $sy console-url --data-dir $data prints another)"
