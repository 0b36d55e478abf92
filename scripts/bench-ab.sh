#!/usr/bin/env bash
# bench-ab: two builds on the peers benchmark's client path, alternating.
#
#   scripts/bench-ab.sh OLD_DIR NEW_DIR
#
# Each directory holds a `switchyard` binary and a `submit` binary (go build
# -o DIR/switchyard ./cmd/switchyard; go build -o DIR/submit
# ./examples/submit). For ROUNDS rounds, first OLD then NEW, it starts a
# fresh data directory with `switchyard serve` (embedded JetStream, fsync
# always, --cap codex=16) and one `switchyard worker --provider codex
# --concurrency 16` whose codex is the same /bin/sh stand-in as
# bench-e2e.sh's, submits one warm-up run, then N runs from one `submit`
# process, and times them from the first submission until the worker has
# logged N more ended attempts. It prints one line per build and round:
# the wall time, runs/s, and the CPU each process spent per run in that
# window (serve, the worker's own threads, the CLI processes the worker
# ran), then the median of each column per build and the NEW/OLD ratio of
# the medians. Both builds run in one spell of the same machine, so their
# ratio holds where the absolute numbers drift (docs/PERFORMANCE.md).
#
# Knobs: N (300 runs), ROUNDS (5), KEEP (0: remove the work directory).
set -euo pipefail

[[ $# == 2 ]] || { echo "usage: scripts/bench-ab.sh OLD_DIR NEW_DIR (each with switchyard and submit binaries)" >&2; exit 64; }
for d in "$1" "$2"; do
	for b in switchyard submit; do
		[[ -x $d/$b ]] || { echo "bench-ab: $d/$b is missing; build it (see the header of $0)" >&2; exit 64; }
	done
done
n=${N:-300}
rounds=${ROUNDS:-5}
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/switchyard-ab.XXXXXX")"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	if [[ "${KEEP:-0}" != 1 ]]; then rm -rf "$work"; else echo "bench-ab: work directory kept: $work"; fi
}
trap cleanup EXIT

# The stand-in codex and its sheet: bench-e2e.sh's, taken from that script
# so the two never drift apart.
mkdir -p "$work/bin" "$work/checkout" "$work/home"
sed -n '/^cat >"\$work\/bin\/codex" <<.CODEX.$/,/^CODEX$/p' "$root/scripts/bench-e2e.sh" | sed '1d;$d' >"$work/bin/codex"
[[ -s $work/bin/codex ]] || { echo "bench-ab: could not take the stand-in codex from scripts/bench-e2e.sh" >&2; exit 1; }
chmod +x "$work/bin/codex"
printf '# access: {"provider":"codex","funding":"included","capacity":"standard","apiSpend":"deny","provenance":"user"}\narena runners: codex:gpt-5.6-sol@high\n' >"$work/s.sheet"
printf 'Say done.\n' >"$work/p.md"
printf '# bench checkout\n' >"$work/checkout/README.md"
export HOME="$work/home"

tck=$(getconf CLK_TCK)
# own_ms PID / kids_ms PID: a process's own CPU, and its waited-for
# children's, in milliseconds.
own_ms() { awk -v t="$tck" '{ sub(/^.*\) /, ""); print int(($12 + $13) * 1000 / t) }' "/proc/$1/stat"; }
kids_ms() { awk -v t="$tck" '{ sub(/^.*\) /, ""); print int(($14 + $15) * 1000 / t) }' "/proc/$1/stat"; }
ended() { grep -c "attempt ended" "$1" || true; }

# one TAG DIR: one round of one build; prints a result line.
one() {
	local tag=$1 dir=$2 d="$work/$1"
	mkdir -p "$d"
	"$dir/switchyard" serve --data-dir "$d/data" --listen 127.0.0.1:0 --fsync always --cap codex=16 --log-level warn >"$d/serve.log" 2>&1 &
	local sp=$!
	pids+=("$sp")
	for _ in $(seq 400); do [[ -s $d/data/serve.json ]] && break; sleep 0.05; done
	"$dir/switchyard" worker --data-dir "$d/data" --provider codex --concurrency 16 --bin "codex=$work/bin/codex" --log-level info >"$d/worker.log" 2>&1 &
	local wp=$!
	pids+=("$wp")
	local sub=("$dir/submit" --data-dir "$d/data" --sheet "$work/s.sheet" --role "arena runners" --parent claude
		--prompt "$work/p.md" --cwd "$work/checkout" --allow-unknown-quota codex)
	"${sub[@]}" --count 1 --run-id-prefix warm >/dev/null
	until [[ $(ended "$d/worker.log") -ge 1 ]]; do sleep 0.1; done
	sleep 1
	local s0 w0 c0 t0 s1 w1 c1 t1
	s0=$(own_ms "$sp") w0=$(own_ms "$wp") c0=$(kids_ms "$wp") t0=$(date +%s%3N)
	"${sub[@]}" --count "$n" --run-id-prefix k >/dev/null
	until [[ $(ended "$d/worker.log") -ge $((n + 1)) ]]; do sleep 0.05; done
	t1=$(date +%s%3N) s1=$(own_ms "$sp") w1=$(own_ms "$wp") c1=$(kids_ms "$wp")
	kill "$wp" "$sp"
	wait "$wp" "$sp" 2>/dev/null || true
	awk -v tag="$tag" -v n="$n" -v w=$((t1 - t0)) -v s=$((s1 - s0)) -v k=$((w1 - w0)) -v c=$((c1 - c0)) 'BEGIN {
		printf "%-10s wall %6d ms  runs/s %6.1f  serve %5.1f  worker %5.1f  CLIs %5.1f ms a run\n", tag, w, n * 1000 / w, s / n, k / n, c / n }'
}

echo "bench-ab: $n runs a round, $rounds rounds, fsync always, cap codex=16, worker --concurrency 16, $(nproc) cores"
echo "  old: $1"
echo "  new: $2"
for r in $(seq "$rounds"); do
	one "old-r$r" "$1" | tee -a "$work/results"
	one "new-r$r" "$2" | tee -a "$work/results"
done
# Medians per build, and new/old.
awk '
function med(a, k,   i, j, t, m) { m = 0; for (i in a) if (i ~ "^" k SUBSEP) v[++m] = a[i]
	for (i = 2; i <= m; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
	t = (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2; delete v; return t }
{ b = substr($1, 1, 3); r = $1; rate[b, r] = $6; sv[b, r] = $8; wk[b, r] = $10; cl[b, r] = $12 }
END {
	for (b = 0; b < 2; b++) { k = b ? "new" : "old"
		R[k] = med(rate, k); S[k] = med(sv, k); W[k] = med(wk, k); C[k] = med(cl, k)
		printf "median %-3s runs/s %6.1f  serve %5.1f  worker %5.1f  CLIs %5.1f ms a run\n", k, R[k], S[k], W[k], C[k] }
	printf "new/old    runs/s %6.2f  serve %5.2f  worker %5.2f  CLIs %5.2f\n", R["new"] / R["old"], S["new"] / S["old"], W["new"] / W["old"], C["new"] / C["old"]
}' "$work/results"
