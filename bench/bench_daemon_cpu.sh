#!/usr/bin/env bash
# The node daemon's own cost per activity, which it takes from the cores the
# application runs on: siox-daemon (no server: an unreachable --server, so
# every batch is sealed and spooled, nothing else runs) takes the records of
# NPROC whole bench_pwrite processes (200k 4 KiB pwrites each, under
# libsiox-posix). Per round and daemon binary, in ABBA order:
#   daemon_cpu_ns_per_activity_spooled   on-CPU time (user + system) of the
#       daemon (/proc/PID/task/*/schedstat) over the runs and 1.5 s after,
#       per activity spooled
#   daemon_bytes_per_activity_spooled    spool files (32-byte header + lz4
#       block: what is forwarded) per activity
#   daemon_raw_bytes_per_activity        the protobuf Block before lz4
#   daemon_client_dropped_rounds         rounds in which the clients dropped
#       records (ring full, counted: the daemon's client_dropped, read with
#       siox status before the stop), and their sum over the rounds
# medians with their 95% intervals; when valgrind is installed (CALLGRIND=0
# leaves it out) also
#   daemon_user_instructions_per_activity  one run under valgrind callgrind:
#       user-space instructions (no kernel) per activity spooled; load-proof,
#       where CPU time is not (this VM has no hardware counters for perf stat)
#   bench/bench_daemon_cpu.sh [BUILD_DIR] [ROUNDS] [DAEMON_BIN...]
# DAEMON_BIN (default BUILD_DIR's siox-daemon): with several (e.g. a saved
# copy of main's, then the new one), each gets its block of figures after a
# "# daemon" line, all from one sitting. DAEMON_BIN,PRELOAD_SO runs that
# daemon's clients under that libsiox-posix.so (default BUILD_DIR's), to
# compare client libraries the same way.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-$top/build}" && pwd)
ROUNDS=${2:-8}
shift $(($# > 2 ? 2 : $#))
DAEMONS=("$@")
[ ${#DAEMONS[@]} -gt 0 ] || DAEMONS=("$B/siox-daemon/siox-daemon")
NPROC=${DAEMON_CPU_NPROC:-3}
CALLS=${DAEMON_CPU_CALLS:-200000}
W=$(mktemp -d /tmp/siox-bench-daemon-cpu.XXXXXX)
F=/dev/shm/siox-bench-daemon-cpu.$$ # written in the page cache, as bench_user's
pid=
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$W" "$F"' EXIT

# On-CPU ns of every thread of PID (schedstat: ns, where /proc/PID/stat
# counts 10 ms ticks, 3 of them for 200k activities).
cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{s += $1} END {printf "%d\n", s}'; }

# The clients' drop count as the daemon has it (sum of their STATS; siox
# status exits 1 here: no server, no warehouse).
client_dropped() {
  { "$B/siox-cli/siox" status --socket "$1" --json 2>/dev/null || true; } |
    awk -F'[:,]' '/"client_dropped"/ {gsub(/ /, "", $2); print $2}'
}

# run_once BIN [WRAPPER...]: prints "cpu_ns bytes raw_bytes activities dropped".
run_once() {
  local bin=${1%%,*} lib=$B/instrumentation/posix/libsiox-posix.so st=$W/st sock=$W/d.sock
  [ "$bin" = "$1" ] || lib=${1#*,}
  shift
  rm -rf "$st" "$sock"
  "$@" "$bin" --socket "$sock" --server 127.0.0.1:9 --state-dir "$st" --auth none >"$W/log" 2>&1 &
  pid=$!
  for _ in $(seq 400); do [ -S "$sock" ] && break; sleep 0.05; done
  [ -S "$sock" ] || { echo "bench_daemon_cpu: no daemon socket" >&2; cat "$W/log" >&2; return 1; }
  local c0 c1
  c0=$(cpu_ns "$pid")
  for _ in $(seq "$NPROC"); do
    SIOX_SOCKET=$sock LD_PRELOAD=$lib \
      "$B/bench/bench_pwrite" loop "$F" "$CALLS" >/dev/null
  done
  sleep 1.5 # the last batch is sealed after --batch-ms
  c1=$(cpu_ns "$pid")
  local dropped
  dropped=$(client_dropped "$sock")
  kill -TERM "$pid"
  wait "$pid" || true
  pid=
  local acts=0 raw=0 bytes=0 f a r
  for f in "$st"/spool/*.sxb; do
    read -r a r < <(od -An -t u4 -j 16 -N 8 "$f")
    acts=$((acts + a)) raw=$((raw + r)) bytes=$((bytes + $(stat -c %s "$f")))
  done
  echo "$((c1 - c0)) $bytes $raw $acts ${dropped:-nan}"
}

for ((r = 0; r < ROUNDS; r++)); do
  for ((k = 0; k < ${#DAEMONS[@]}; k++)); do
    i=$k
    [ $((r % 2)) -eq 0 ] || i=$((${#DAEMONS[@]} - 1 - k)) # ABBA
    run_once "${DAEMONS[$i]}" >"$W/res"
    read -r cpu bytes raw acts dropped <"$W/res"
    echo "$cpu $bytes $raw $acts $dropped" >>"$W/d$i"
    echo "  round $r ${DAEMONS[$i]}: $((cpu / (acts > 0 ? acts : 1))) ns/activity, $bytes bytes, $acts activities, $dropped dropped, load $(cut -d' ' -f1 /proc/loadavg)" >&2
  done
done

for ((i = 0; i < ${#DAEMONS[@]}; i++)); do
  [ ${#DAEMONS[@]} -eq 1 ] || echo "# daemon ${DAEMONS[$i]}"
  python3 - "$W/d$i" <<'EOF'
import sys
from math import comb
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
def est(v):  # median, distribution-free 95% interval (bench/median_ci.h)
    v = sorted(v); n = len(v)
    med = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    j, cdf = 0, 0.0
    for i in range(n):
        cdf += comb(n, i) / 2 ** n
        if cdf > 0.025: break
        j = i + 1
    return med, (v[j - 1] if j else v[0]), (v[n - j] if j else v[-1])
for name, col, unit in (("daemon_cpu_ns_per_activity_spooled", 0, "ns"),
                        ("daemon_bytes_per_activity_spooled", 1, "B"),
                        ("daemon_raw_bytes_per_activity", 2, "B")):
    m, lo, hi = est([r[col] / r[3] for r in rows if r[3] > 0])
    print(f"{name} {m:.2f} {unit}\n{name}_ci95_low {lo:.2f} {unit}\n{name}_ci95_high {hi:.2f} {unit}")
drops = [r[4] for r in rows]
print(f"daemon_client_dropped_rounds {sum(1 for x in drops if x != 0)} of {len(drops)} rounds")
print(f"daemon_client_dropped_sum {sum(drops):.0f} activities")
EOF
  if [ "${CALLGRIND:-1}" = 1 ] && command -v valgrind >/dev/null; then
    run_once "${DAEMONS[$i]}" valgrind --tool=callgrind --callgrind-out-file="$W/cg.$i" >"$W/cg.$i.res"
    read -r _ _ _ acts _ <"$W/cg.$i.res"
    ir=$(callgrind_annotate "$W/cg.$i" 2>/dev/null | awk '/PROGRAM TOTALS/{gsub(",", "", $1); print $1}')
    echo "daemon_user_instructions_per_activity $((ir / acts)) instructions"
  fi
done
