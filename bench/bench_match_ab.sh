#!/usr/bin/env bash
# A/B of two siox-server binaries on the in-memory matcher's common path:
# alternating rounds (ABBA) of `BENCH_MATCH_ONLY=memory bench_match SERVER
# PAIRS 1`, one run of each binary per round. Besides bench_match's own
# figures (wall-time based, noisy on a loaded machine) it takes the
# server's own CPU time: each server runs under this script as a wrapper,
# which, when the harness stops it, sums /proc/PID/task/*/schedstat (ns
# on CPU, every thread of the siox-server process; PostgreSQL's backends
# are not in it) before passing the SIGTERM on; and the CPU time of its
# embedded PostgreSQL's live processes (the postmaster of --data-dir's pg/
# and its children: the backends that run the batches' and the matcher's
# statements, the background workers), where the matcher's link rows are
# written: both robust to the load, where the wall-time figures are not.
# Usage: bench/bench_match_ab.sh BUILD_DIR SERVER_A SERVER_B [rounds] [pairs]
# Prints (NAME VALUE UNIT), B over A, median of the per-round ratios with
# its distribution-free 95 % interval (order statistics):
#   server_cpu_ratio[_ci_low|_ci_high]          server CPU time, B / A (x)
#   server_pg_cpu_ratio[_ci_low|_ci_high]       its PostgreSQL's CPU time, B / A (x)
#   server_match_pairs_ratio[_ci_low|_ci_high]  server_match_pairs_per_s, B / A (x)
#   server_match_cpu_pairs_ratio[...]           server_match_cpu_pairs_per_s, B / A (x; only
#                                               when both servers count match_cpu_us)
#   server_match_e2e_ratio[_ci_low|_ci_high]    server_match_e2e_pairs_per_s, B / A (x)
# and on stderr each run's figures with the load average.
set -euo pipefail
if [ -n "${BENCH_AB_BIN:-}" ]; then # the wrapper
  "$BENCH_AB_BIN" "$@" &
  pid=$!
  data=
  for ((i = 1; i <= $#; i++)); do [ "${!i}" = --data-dir ] && j=$((i + 1)) && data=${!j}; done
  on_term() {
    ns=0
    for t in /proc/$pid/task/*/schedstat; do read -r a _ < "$t" && ns=$((ns + a)); done
    echo "server_cpu_ms $((ns / 1000000))" >> "$BENCH_AB_OUT"
    pm=$(head -1 "$data/pg/postmaster.pid" 2>/dev/null || true)
    if [ -n "$pm" ]; then
      ns=0
      for p in $pm $(cat /proc/$pm/task/*/children 2>/dev/null); do
        for t in /proc/$p/task/*/schedstat; do read -r a _ < "$t" 2>/dev/null && ns=$((ns + a)); done
      done
      echo "server_pg_cpu_ms $((ns / 1000000))" >> "$BENCH_AB_OUT"
    fi
    kill -TERM $pid
  }
  trap on_term TERM
  wait $pid || true
  wait $pid
  exit $?
fi
build=$1 a=$2 b=$3 rounds=${4:-8} pairs=${5:-20000}
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
log=$(mktemp)
trap 'rm -f "$log" "$log.one"' EXIT
for i in $(seq 1 "$rounds"); do
  if [ $((i % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for side in $order; do
    bin=$a; [ "$side" = B ] && bin=$b
    echo "== round $i $side load $(cut -d' ' -f1 /proc/loadavg)" | tee -a "$log" >&2
    rm -f "$log.one"
    BENCH_AB_BIN=$bin BENCH_AB_OUT=$log.one BENCH_MATCH_ONLY=memory "$build/bench/bench_match" "$self" "$pairs" 1 2>&1 |
      grep -E '^server_match_(pairs|cpu_pairs|e2e)' | tee -a "$log" >&2
    cat "$log.one" | tee -a "$log" >&2
  done
done
python3 - "$log" <<'PY'
import math, re, statistics, sys
runs, cur = {}, None
for l in open(sys.argv[1]):
    m = re.match(r'== round (\d+) (\w)', l)
    if m: cur = (int(m.group(1)), m.group(2)); runs[cur] = {}; continue
    m = re.match(r'(server_\S+) (\S+)', l)
    if m and cur: runs[cur][m.group(1)] = float(m.group(2))
def interval(v):
    v, n, lo, hi = sorted(v), len(v), min(v), max(v)
    for k in range(1, n // 2 + 1):
        if sum(math.comb(n, i) for i in range(k, n - k + 1)) / 2 ** n >= 0.95: lo, hi = v[k - 1], v[n - k]
    return lo, hi
for key, name in (('server_cpu_ms', 'server_cpu_ratio'), ('server_pg_cpu_ms', 'server_pg_cpu_ratio'),
                  ('server_match_pairs_per_s', 'server_match_pairs_ratio'),
                  ('server_match_cpu_pairs_per_s', 'server_match_cpu_pairs_ratio'),
                  ('server_match_e2e_pairs_per_s', 'server_match_e2e_ratio')):
    r = [runs[(i, 'B')][key] / runs[(i, 'A')][key] for i, _ in runs if _ == 'A' and (i, 'B') in runs
         and key in runs[(i, 'A')] and key in runs[(i, 'B')] and runs[(i, 'A')][key] > 0]
    if not r: continue
    lo, hi = interval(r)
    print(f"{name} {statistics.median(r):.3f} x\n{name}_ci_low {lo:.3f} x\n{name}_ci_high {hi:.3f} x")
PY
