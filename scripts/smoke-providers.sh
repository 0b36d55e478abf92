#!/usr/bin/env bash
# make smoke-providers: one cheap, real round trip through every provider
# CLI installed on this host (switchyard doctor --probe --round-trip):
# each receipt's status, the model the CLI served and its usage. It SPENDS
# (one short model call per signed-in provider), so neither CI nor any
# other target runs it. Providers not signed in are skipped, and one the
# gate would stop (the billing guard under api-spend deny among them) is
# refused without a launch.
#
# Knobs (environment):
#   SMOKE_DESCRIPTORS  the attempt per provider, space separated
#                      (default below: a small model at low effort each)
#   SMOKE_API_SPEND    deny (default) or approved
#   SWITCHYARD_BIN     the binary (default bin/switchyard)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${SWITCHYARD_BIN:-$root/bin/switchyard}"
descriptors="${SMOKE_DESCRIPTORS:-claude:sonnet@low codex:gpt-5.6-luna@low grok:grok-4.7@low devin:swe-1.6@default cursor:composer-2.5@default antigravity:Auto@default opencode:openai/gpt-6.1-sol@default gemini:gemini-2.5-flash@low}"
spend="${SMOKE_API_SPEND:-deny}"

# Only the providers whose CLI is on PATH here.
installed="$("$bin" doctor --json | python3 -c 'import json,sys; print(" ".join(p["provider"] for p in json.load(sys.stdin)["providers"] if p["binary"].get("path")))')"
if [ -z "$installed" ]; then
	echo "smoke-providers: no provider CLI is installed here (switchyard doctor says which and how)" >&2
	exit 1
fi
args=()
for d in $descriptors; do
	for p in $installed; do
		if [ "${d%%:*}" = "$p" ]; then
			args+=(--descriptor "$d")
		fi
	done
done
echo "smoke-providers: one round trip each through: $installed (api-spend $spend)" >&2
exec "$bin" doctor --probe --round-trip --api-spend "$spend" "${args[@]}"
