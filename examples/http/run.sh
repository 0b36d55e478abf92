#!/usr/bin/env bash
# The HTTP API with curl (docs/API.md): submit a run, poll its status until
# it is final, submit another and cancel it while its attempt runs.
#
#   SWITCHYARD_URL    the serve's --http address, e.g. http://127.0.0.1:8233
#   SWITCHYARD_TOKEN  its bearer token (default: the one in
#                     $SWITCHYARD_DATA_DIR/console.token)
#   SHEET             the model sheet (default: sim.sheet beside this script)
#   CHECKOUT          the checkout the runs are for, on the serve's machine
#   RUN_PREFIX        run ids start with it (default http-example)
#
# Needs curl and jq. With the simulated CLIs of testdata/simcli, grok
# succeeds and devin runs long (the sheet's hillclimb), as the Go test
# beside this script configures them.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${SWITCHYARD_URL:?set SWITCHYARD_URL to serve --http address, e.g. http://127.0.0.1:8233}"
: "${CHECKOUT:?set CHECKOUT to the absolute path of the checkout the runs are for}"
sheet="${SHEET:-$here/sim.sheet}"
prefix="${RUN_PREFIX:-http-example}"
if [[ -z "${SWITCHYARD_TOKEN:-}" ]]; then
	: "${SWITCHYARD_DATA_DIR:?set SWITCHYARD_TOKEN, or SWITCHYARD_DATA_DIR to read its console.token}"
	SWITCHYARD_TOKEN="$(cat "$SWITCHYARD_DATA_DIR/console.token")"
fi
api="${SWITCHYARD_URL%/}/api/v1"

# api METHOD PATH [JSON]: prints the body, then the status on a line of
# its own; never fails on an HTTP error (the caller checks the status).
api() {
	local args=(-sS -X "$1" -H "Authorization: Bearer $SWITCHYARD_TOKEN" -w '\n%{http_code}\n')
	if [[ $# -ge 3 ]]; then
		args+=(-H 'Content-Type: application/json' --data-binary "$3")
	fi
	curl "${args[@]}" "$api$2"
}

# call METHOD PATH [JSON] WANT: the body, after checking the status is WANT.
call() {
	local want="${*: -1}" out status
	out="$(api "${@:1:$#-1}")"
	status="$(tail -n1 <<<"$out")"
	out="$(sed '$d' <<<"$out")"
	if [[ "$status" != "$want" ]]; then
		echo "$1 $2: HTTP $status, want $want: $out" >&2
		exit 1
	fi
	printf '%s\n' "$out"
}

# submit ID ROLE PROMPT: the run request as JSON (jq escapes the sheet).
request() {
	jq -n --rawfile sheet "$sheet" --arg id "$1" --arg role "$2" --arg prompt "$3" --arg cwd "$CHECKOUT" \
		'{runId: $id, sheet: $sheet, role: $role, parent: "claude", prompt: $prompt, cwd: $cwd}'
}

# wait_for ID JQ-FILTER WHAT: polls the run's status until the filter is true.
wait_for() {
	local deadline=$((SECONDS + ${WAIT_SECONDS:-120}))
	until call GET "/runs/$1" 200 | jq -e "$2" >/dev/null; do
		if ((SECONDS >= deadline)); then
			echo "run $1: still not $3 after ${WAIT_SECONDS:-120}s" >&2
			call GET "/runs/$1" 200 >&2
			exit 1
		fi
		sleep 0.5
	done
}

echo "== submit run $prefix-1 (role bug-fix)"
req="$(request "$prefix-1" bug-fix "Summarize README.md in one sentence.")"
call POST /runs "$req" 201 | jq -c .
echo "== submit it again: the same request under the same id is the same run"
call POST /runs "$req" 200 | jq -c .

echo "== poll until final"
wait_for "$prefix-1" '.final' final
call GET "/runs/$prefix-1" 200 | jq -r '"run \(.run): final, lane 0 \(.lanes[0].state)"'
call GET "/runs/$prefix-1/report" 200 | jq -r '.summary'

echo "== submit run $prefix-2 (role hillclimb) and cancel it while it runs"
call POST /runs "$(request "$prefix-2" hillclimb "Take your time.")" 201 | jq -c .
wait_for "$prefix-2" '.lanes[0].state == "running"' running
call POST "/runs/$prefix-2/cancel" '{"reason": "superseded: the HTTP example cancels it"}' 202 | jq -c .
wait_for "$prefix-2" '.final' final
call GET "/runs/$prefix-2" 200 | jq -r '"run \(.run): final, cancelled \(.cancelled // false), lane 0 \(.lanes[0].state)"'

echo "== an error: a run that does not exist"
call GET "/runs/$prefix-none" 404 | jq -c .
