#!/usr/bin/env bash
# Ranks waiting in MPI slow the I/O of the rank that works (capacity/README.md,
# "Ranks waiting in MPI"): the mechanism the capacity model's mpi_polling
# stands for, measured on the GlusterFS testbed without SIOX (no tracing: the
# replay's own per-rank I/O time).
#   One healthy brick. Workload A, one rank: 80 writes of 1 MiB at 4 MiB
#   strides into one file, then 320 reads of 1 MiB from its start (3/4 of
#   them of never written ranges: brick requests; the rest from the page
#   cache), as rank 0 of the bench's file-per-process workload does.
#   Workload B, the baseline's twin: the same rank 0, and 3 more ranks that
#   only wait for it at two barriers (around its read-back) and in the
#   replay's closing collective, as ranks 1-3 of that workload wait for
#   rank 0's read-back. Open MPI with mpi_yield_when_idle=1, as the
#   capacity bench. A and B run in turns, ROUNDS times each, the file
#   removed before each run.
# Prints (NAME VALUE UNIT):
#   mpi_polling_rank0_io_ms_alone          A: rank 0's I/O time (median)
#   mpi_polling_rank0_io_ms_others_wait    B: the same rank 0 with 3 ranks waiting (median)
#   mpi_polling_slowdown_ratio             median over rounds of B / A of the same round
#   mpi_polling_rounds_b_slower            rounds where B took longer than A
#   mpi_polling_rounds                     rounds run
# Needs root, FUSE, glusterfsd and mpirun (as testbed/siox-testbed, siox replay).
#   bench/bench_mpi_polling.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-$top/build}" && pwd)
ROUNDS=${2:-8}
export OMPI_MCA_mpi_yield_when_idle=1
T=$(mktemp -d /tmp/siox-poll.XXXXXX)
cleanup() {
  "$top/testbed/siox-testbed" stop --dir "$T/tb" >/dev/null 2>&1 || true
  rm -rf "$T"
}
trap cleanup EXIT
# workload RANKS WAIT: rank 0's writes and read-back; with WAIT, every rank
# meets at a barrier before and after the read-back.
workload() {
  local ranks=$1 wait=$2 k r
  {
    printf 'r 0 open 0 0 0 0 0\n'
    for k in $(seq 0 79); do printf 'r 0 write 0 %d 1048576 0 0\n' $((k * 4194304)); done
    printf 'r 0 close 0 0 0 0 0\n'
    [ "$wait" = 0 ] || for r in $(seq 0 $((ranks - 1))); do printf 'r %d barrier - 0 0 0 0\n' "$r"; done
    printf 'r 0 open 0 0 0 0 0\n'
    for k in $(seq 0 319); do printf 'r 0 read 0 %d 1048576 0 0\n' $((k * 1048576)); done
    printf 'r 0 close 0 0 0 0 0\n'
    [ "$wait" = 0 ] || for r in $(seq 0 $((ranks - 1))); do printf 'r %d barrier - 0 0 0 0\n' "$r"; done
  } >"$T/recs"
  printf 'siox-workload 1 trace\njob polling\nranks %d\nfile 0 f.dat\n' "$ranks"
  cat "$T/recs"
  printf 'end 1 %d\n' "$(wc -l <"$T/recs")"
}
workload 1 0 >"$T/a.wl"
workload 4 1 >"$T/b.wl"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
MNT=$("$top/testbed/siox-testbed" start --dir "$T/tb" --bricks 1 --base-port $((port - 1)))
mkdir -p "$MNT/d"
# run WL: rank 0's io_ns of one replay.
run() {
  rm -f "$MNT/d"/*
  sync
  TMPDIR=$T "$B/siox-cli/siox" replay "$1" --dir "$MNT/d" --mpirun "mpirun --oversubscribe --allow-run-as-root" |
    awk '$1 == "rank" && $2 == 0 { sub("io_ns=", "", $4); print $4 }'
}
: >"$T/times"
for i in $(seq "$ROUNDS"); do
  echo "$(run "$T/a.wl") $(run "$T/b.wl")" >>"$T/times"
done
python3 - "$T/times" <<'PY'
import statistics, sys
rows = [tuple(int(x) for x in l.split()) for l in open(sys.argv[1]) if l.strip()]
a = [r[0] / 1e6 for r in rows]
b = [r[1] / 1e6 for r in rows]
print(f"mpi_polling_rank0_io_ms_alone {statistics.median(a):.1f} ms")
print(f"mpi_polling_rank0_io_ms_others_wait {statistics.median(b):.1f} ms")
print(f"mpi_polling_slowdown_ratio {statistics.median(y / x for x, y in zip(a, b)):.2f} x")
print(f"mpi_polling_rounds_b_slower {sum(y > x for x, y in zip(a, b))} count")
print(f"mpi_polling_rounds {len(rows)} count")
PY
