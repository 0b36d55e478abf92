#!/usr/bin/env bash
# make bench-e2e: the end-to-end throughput of issue 15 with real processes.
#
# For each scenario RUNSxSEATS it starts a fresh data directory, one
# `switchyard serve` (embedded JetStream, --fsync FSYNC, --cap codex=CAP),
# one `switchyard worker --provider codex --concurrency 16` whose codex is a
# /bin/sh stand-in that answers at once (sign-in probe, exec transcript,
# app-server quota session), and submits RUNS runs of SEATS codex seats each
# with `switchyard run` processes, SUBMIT at a time (or `run --detach`, then
# waits for every run to be final, with DETACH=1). It times from the first
# submission to the last run final and prints lanes/s and runs/s.
#
# In the same scenario it spawns the same stand-in bare, two calls per lane
# (the sign-in probe and the exec, the two processes an attempt needs), at
# the parallelism the attempts had (min(CAP, 16)), for as many lanes, and
# prints that spawn rate in lanes/s and the ratio end-to-end ÷ bare.
#
# A second line per scenario says where the CPU went during the timed
# part, per lane: the serve, the worker with the CLI processes it ran, the
# submitting `switchyard run` processes, their sum, the bare spawns' own
# CPU per lane, what one `switchyard --version` costs (a switchyard
# process's start, the floor of every submitter), and how busy the whole
# machine was (every process, other users' too). When the machine is near
# 100% busy the rate is CPU-bound and the sum is the cost to cut.
#
# In a one-seat scenario (RUNSx1) it then submits the same RUNS runs from
# one process through package client (bin/benchclient, SUBMIT in flight,
# each followed to its final report) on the same serve and worker, and
# prints runs/s beside the process-per-run path's, the p50/p95
# submit-to-final latency, and the serve's (the engine's) CPU per run for
# both paths (issue 27). The process-per-run line gains its p50/p95 too:
# each `switchyard run` is timed by a bash wrapper (its CPU counts with the
# submitters').
#
# Knobs (environment): SCENARIOS (default "200x4 20x40 400x1"; SMALL=1:
# "10x2 4x5 20x1" for a CI smoke), FSYNC (always), CAP (2: the default cap
# per provider, as the issue's table), SUBMIT (20), DETACH (0), KEEP (0:
# remove the work directory at the end), SWITCHYARD_BIN (bin/switchyard:
# the binary under test, to compare two builds with one script), CLIENT (1:
# the client scenario in RUNSx1 scenarios; 0 skips it), BENCHCLIENT_BIN
# (bin/benchclient). Output: one line per scenario and
# a summary table; the work directory holds each scenario's serve and
# worker logs.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sy="${SWITCHYARD_BIN:-$root/bin/switchyard}"
if [[ ! -x "$sy" ]]; then
	echo "bench-e2e: $sy is missing; run \`make bench-e2e\`, which builds it" >&2
	exit 1
fi
benchclient="${BENCHCLIENT_BIN:-$root/bin/benchclient}"
if [[ "${CLIENT:-1}" == 1 && ! -x "$benchclient" ]]; then
	echo "bench-e2e: $benchclient is missing; run \`make bench-e2e\`, which builds it (or CLIENT=0)" >&2
	exit 1
fi
if [[ "${SMALL:-0}" == 1 ]]; then
	scenarios="${SCENARIOS:-10x2 4x5 20x1}"
else
	scenarios="${SCENARIOS:-200x4 20x40 400x1}"
fi
fsync="${FSYNC:-always}"
cap="${CAP:-2}"
submit="${SUBMIT:-20}"
detach="${DETACH:-0}"
conc=16
par=$((cap < conc ? cap : conc))

work="$(mktemp -d "${TMPDIR:-/tmp}/switchyard-bench.XXXXXX")"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	if [[ "${KEEP:-0}" != 1 ]]; then rm -rf "$work"; else echo "bench-e2e: work directory kept: $work"; fi
}
trap cleanup EXIT

# The stand-in codex: answers at once with what the runner and the quota
# collector need (see testdata/simcli and testdata/transcripts/codex).
mkdir -p "$work/bin" "$work/checkout" "$work/home"
cat >"$work/bin/codex" <<'CODEX'
#!/bin/sh
case "$1" in
--version) echo "codex-cli 0.155.1"; exit 0 ;;
login) echo "Logged in using ChatGPT" >&2; exit 0 ;;
exec)
	cat >/dev/null
	echo "Reading additional input from stdin..." >&2
	cat <<'EOF'
{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Done."}}
{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":10}}
EOF
	exit 0 ;;
app-server)
	now=$(date +%s)
	r5=$((now + 18000)); r7=$((now + 604800))
	while IFS= read -r line; do
		case "$line" in
		*'"method":"initialize"'*) echo '{"id":0,"result":{"userAgent":"codex_cli_rs/0.155.1 (bench)","codexHome":"/nonexistent","platformFamily":"unix","platformOs":"linux"}}' ;;
		*'"method":"account/read"'*) echo '{"id":1,"result":{"account":{"type":"chatgpt","email":"bench@example.invalid","planType":"plus"},"requiresOpenaiAuth":true}}' ;;
		*'"method":"account/rateLimits/read"'*)
			rl='{"limitId":"codex","limitName":null,"primary":{"usedPercent":1,"windowDurationMins":300,"resetsAt":'$r5'},"secondary":{"usedPercent":1,"windowDurationMins":10080,"resetsAt":'$r7'},"credits":{"hasCredits":false,"unlimited":false,"balance":"0"},"individualLimit":null,"spendControlReached":false,"planType":"plus","rateLimitReachedType":null}'
			echo '{"id":2,"result":{"ordinaryUsageAllowed":true,"rateLimits":'"$rl"',"rateLimitsByLimitId":{"codex":'"$rl"'},"rateLimitResetCredits":{"availableCount":0,"credits":null},"accountId":"acct-bench","rateLimitUpsell":null,"normalModelSlug":"gpt-5.6-sol"}}' ;;
		esac
	done
	exit 0 ;;
esac
echo "bench codex stand-in: unexpected arguments: $*" >&2
exit 2
CODEX
chmod +x "$work/bin/codex"
printf 'Say done.\n' >"$work/prompt.md"
printf '# bench checkout\n' >"$work/checkout/README.md"

# now_ms prints the wall clock in milliseconds.
now_ms() { date +%s%3N; }

# CPU accounting, to say where a lane's CPU goes (docs/PERFORMANCE.md):
# proc_cpu_ms PID is a process's user+system time, its waited-for children
# included (a worker's includes the CLIs it ran), in milliseconds;
# children_cpu_ms VAR sets VAR to this shell's waited-for children's (the submitters, the
# bare spawns); machine_cpu_ms is every process's on the machine, other
# users' included, from /proc/stat.
tck=$(getconf CLK_TCK)
proc_cpu_ms() { awk -v t="$tck" '{ sub(/^.*\) /, ""); print int(($12 + $13 + $14 + $15) * 1000 / t) }' "/proc/$1/stat"; }
children_cpu_ms() { # VAR: set VAR (times must run in this shell, not a subshell)
	times >"$work/times"
	printf -v "$1" '%s' "$(awk 'NR == 2 {
		n = 0
		for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); n += a[1] * 60000 + a[2] * 1000 }
		print int(n) }' "$work/times")"
}
machine_cpu_ms() { awk -v t="$tck" '/^cpu / { print int(($2 + $3 + $4 + $7 + $8) * 1000 / t) }' /proc/stat; }

# bare LANES: the stand-in spawned bare, two calls per lane (the sign-in
# probe, then the exec with a prompt on stdin), by par shells in parallel,
# each doing its share of the lanes one after another.
bare() {
	local lanes=$1 t0 t1 i
	local -a bp=()
	t0=$(now_ms)
	for ((i = 0; i < par; i++)); do
		(
			n=$(((lanes + par - 1 - i) / par))
			for ((j = 0; j < n; j++)); do
				"$work/bin/codex" login status 2>/dev/null
				"$work/bin/codex" exec --json - <"$work/prompt.md" >/dev/null 2>&1
			done
		) &
		bp+=($!)
	done
	wait "${bp[@]}"
	t1=$(now_ms)
	echo $((t1 - t0))
}

# wait_final DATA RUNS: wait until RUNS runs are final (detached submissions).
wait_final() {
	local data=$1 runs=$2 n
	while :; do
		n=$("$sy" status --data-dir "$data" --json --limit 0 2>/dev/null | grep -c '"final": *true' || true)
		[[ "$n" -ge "$runs" ]] && return 0
		sleep 0.2
	done
}

summary=()
for sc in $scenarios; do
	runs=${sc%x*} seats=${sc#*x}
	lanes=$((runs * seats))
	d="$work/$sc"
	mkdir -p "$d"
	{
		echo "# bench-e2e: $seats codex seats"
		echo '# access: {"provider":"codex","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}'
		printf 'arena runners: codex:gpt-5.6-sol@high'
		for ((i = 1; i < seats; i++)); do printf ', codex:gpt-5.6-sol@high'; done
		echo
	} >"$d/bench.sheet"
	export HOME="$work/home"
	"$sy" serve --data-dir "$d/data" --listen 127.0.0.1:0 --fsync "$fsync" --cap "codex=$cap" --log-level "${LOGLEVEL:-warn}" >"$d/serve.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 200); do [[ -s "$d/data/serve.json" ]] && break; sleep 0.05; done
	"$sy" worker --data-dir "$d/data" --provider codex --concurrency "$conc" --bin "codex=$work/bin/codex" --log-level "${LOGLEVEL:-warn}" >"$d/worker.log" 2>&1 &
	pids+=($!)
	# One warm-up run: the worker's first quota session, the streams.
	"$sy" run --data-dir "$d/data" --sheet "$d/bench.sheet" --role "arena runners" --parent claude \
		--prompt "$work/prompt.md" --cwd "$work/checkout" >"$d/warmup.log" 2>&1 ||
		{ echo "bench-e2e: the warm-up run failed; see $d" >&2; cat "$d/warmup.log" >&2; KEEP=1; exit 1; }
	extra=()
	[[ "$detach" == 1 ]] && extra=(--detach)
	sv0=$(proc_cpu_ms "${pids[0]}") wk0=$(proc_cpu_ms "${pids[1]}") mc0=$(machine_cpu_ms)
	children_cpu_ms ch0
	t0=$(now_ms)
	# Each `switchyard run` through a small bash wrapper that appends its
	# submit-to-final milliseconds to lat.ms (bash's own clock: no date
	# process; the wrapper's CPU counts with the submitters').
	export SY_BIN="$sy" SY_DATA="$d/data" SY_SHEET="$d/bench.sheet" SY_PROMPT="$work/prompt.md" SY_CWD="$work/checkout" SY_LAT="$d/lat.ms"
	seq "$runs" | xargs -P "$submit" -I{} bash -c 's=${EPOCHREALTIME/./}; "$SY_BIN" run --data-dir "$SY_DATA" --sheet "$SY_SHEET" --role "arena runners" \
		--parent claude --prompt "$SY_PROMPT" --cwd "$SY_CWD" --json "$@" || exit 255; e=${EPOCHREALTIME/./}; echo $(((e - s) / 1000)) >>"$SY_LAT"' run "${extra[@]}" \
		>"$d/runs.out" 2>"$d/runs.err" ||
		{ echo "bench-e2e: a run failed; see $d/runs.err" >&2; tail -5 "$d/runs.err" >&2; KEEP=1; exit 1; }
	[[ "$detach" == 1 ]] && wait_final "$d/data" $((runs + 1))
	t1=$(now_ms)
	sv1=$(proc_cpu_ms "${pids[0]}") wk1=$(proc_cpu_ms "${pids[1]}") mc1=$(machine_cpu_ms)
	children_cpu_ms ch1
	ms=$((t1 - t0))
	plat=$(sort -n "$d/lat.ms" | awk '{ a[NR] = $1 } END { i50 = int(NR * 0.50) + 1; i95 = int(NR * 0.95) + 1; if (i50 > NR) i50 = NR; if (i95 > NR) i95 = NR; printf "p50 %d ms  p95 %d ms", a[i50], a[i95] }')
	# The client scenario (issue 27): the same runs from one process
	# through package client, SUBMIT in flight, on the same serve and
	# worker, right after the process-per-run path.
	cline=""
	if [[ "$seats" == 1 && "${CLIENT:-1}" == 1 ]]; then
		csv0=$(proc_cpu_ms "${pids[0]}") cwk0=$(proc_cpu_ms "${pids[1]}") cmc0=$(machine_cpu_ms)
		"$benchclient" -data-dir "$d/data" -sheet "$d/bench.sheet" -role "arena runners" -prompt "$work/prompt.md" \
			-checkout "$work/checkout" -runs "$runs" -submit "$submit" >"$d/client.out" 2>"$d/client.err" ||
			{ echo "bench-e2e: the client scenario failed; see $d/client.err" >&2; tail -5 "$d/client.err" >&2; KEEP=1; exit 1; }
		csv1=$(proc_cpu_ms "${pids[0]}") cwk1=$(proc_cpu_ms "${pids[1]}") cmc1=$(machine_cpu_ms)
		cline=$(awk -v sc="$sc" -v runs="$runs" -v pms="$ms" -v sv=$((csv1 - csv0)) -v wk=$((cwk1 - cwk0)) -v psv=$((sv1 - sv0)) \
			-v mc=$((cmc1 - cmc0)) -v cores="$(nproc)" '{
			for (i = 1; i < NF; i += 2) v[$i] = $(i + 1)
			pr = runs / (pms / 1000)
			printf "%-8s client: %d runs %7.2f s  %7.2f runs/s (%.1fx the %7.2f runs/s of process-per-run)  p50 %d ms  p95 %d ms\n", sc, runs, v["wall_ms"] / 1000, v["runs_per_s"], v["runs_per_s"] / pr, pr, v["p50_ms"], v["p95_ms"]
			printf "%-8s cpu a run: serve (the engine) %.1f ms client vs %.1f ms process-per-run; worker with its CLIs %.1f ms; the client process %.1f ms; machine busy %.0f%% (%.1f of %d cores)", "", sv / runs, psv / runs, wk / runs, v["client_cpu_ms"] / runs, 100 * mc / (v["wall_ms"] * cores), mc / v["wall_ms"], cores
		}' "$d/client.out")
	fi
	bare "$lanes" >"$d/bare.ms"
	bms=$(cat "$d/bare.ms")
	children_cpu_ms ch2
	# What starting a switchyard process costs before it does anything: the
	# floor of a submitter's CPU.
	for _ in $(seq 20); do "$sy" --version >/dev/null; done
	children_cpu_ms ch3
	# status (the newest 20 runs) as a whole process, median of 5.
	st=()
	for _ in 1 2 3 4 5; do
		s0=$(now_ms)
		"$sy" status --data-dir "$d/data" >/dev/null 2>&1
		st+=($(($(now_ms) - s0)))
	done
	stms=$(printf '%s\n' "${st[@]}" | sort -n | sed -n 3p)
	# serve restart: SIGTERM, start again, until the engine logs that it
	# is running (every unfinished run resumed, the watch started).
	kill "${pids[0]}" 2>/dev/null || true
	wait "${pids[0]}" 2>/dev/null || true
	r0=$(now_ms)
	"$sy" serve --data-dir "$d/data" --listen 127.0.0.1:0 --fsync "$fsync" --cap "codex=$cap" --log-level info >"$d/serve2.log" 2>&1 &
	pids[0]=$!
	until grep -q 'engine running' "$d/serve2.log" 2>/dev/null; do sleep 0.01; done
	rms=$(($(now_ms) - r0))
	rss=$(awk '/VmRSS/ {print $2}' "/proc/${pids[0]}/status")
	line=$(awk -v sc="$sc" -v lanes="$lanes" -v runs="$runs" -v ms="$ms" -v bms="$bms" 'BEGIN {
		l = lanes / (ms / 1000); r = runs / (ms / 1000); b = lanes / (bms / 1000)
		printf "%-8s %6d lanes %7.2f s  %7.1f lanes/s  %7.2f runs/s  bare %7.1f lanes/s  e2e/bare %.2f", sc, lanes, ms / 1000, l, r, b, l / b }')
	line="$line  $plat  status ${stms} ms  restart ${rms} ms  serve RSS $((rss / 1024)) MB"
	cpu=$(awk -v lanes="$lanes" -v ms="$ms" -v sv=$((sv1 - sv0)) -v wk=$((wk1 - wk0)) -v subm=$((ch1 - ch0)) \
		-v bare=$((ch2 - ch1)) -v ver=$((ch3 - ch2)) -v mc=$((mc1 - mc0)) -v cores="$(nproc)" 'BEGIN {
		printf "%-8s cpu a lane: serve %.1f ms, worker with its CLIs %.1f ms, submitters %.1f ms, sum %.1f ms; bare spawns %.1f ms; switchyard --version %.1f ms; machine busy %.0f%% (%.1f of %d cores, every process)",
			"", sv / lanes, wk / lanes, subm / lanes, (sv + wk + subm) / lanes, bare / lanes, ver / 20, 100 * mc / (ms * cores), mc / ms, cores }')
	echo "$line"
	echo "$cpu"
	summary+=("$line" "$cpu")
	if [[ -n "$cline" ]]; then
		echo "$cline"
		summary+=("$cline")
	fi
	kill "${pids[@]}" 2>/dev/null || true
	wait "${pids[@]}" 2>/dev/null || true
	pids=()
done
echo
echo "bench-e2e: fsync $fsync, cap codex=$cap, worker --concurrency $conc, $submit submitters$([[ $detach == 1 ]] && echo ' (--detach)'), bare parallelism $par, $(nproc) cores"
printf '%s\n' "${summary[@]}"
