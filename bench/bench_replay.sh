#!/usr/bin/env bash
# replay_error_percent_<workload>: how far the replay of an extracted
# workload lands from the job's own I/O time (issue 13 §2), on /dev/shm.
# Workloads (REPLAY_WORKLOADS, default "mpiio strided fpp shared"), 4 ranks each:
#   mpiio    tests/integration/mpi_io_workload (ROMIO; independent,
#            collective, strided, nonblocking, split-collective and ordered
#            MPI-IO on one shared file, barriers)
#   strided  examples/siox-strided-writes (the hint loop's job: 64 strided
#            4 KiB blocks per write, REPLAY_REPEAT writes per rank, one shared file,
#            read back; barriers around the write phase)
#   fpp      the same job with --file-per-process: each rank its own file
#            (MPI_File_open on MPI_COMM_SELF, contiguous 256 KiB writes),
#            read back through MPI-IO, --no-verify: rank 0's POSIX re-read of
#            its file made the characterization's replay close an MPI file
#            twice (mpi_close: Bad file descriptor), fixed by format version 2
#            (workload/README.md); kept so that the figures stay comparable;
#            the file-per-process job (mpiio and strided are the shared-file ones)
#   shared   the same job with --segmented: one shared file, each rank's REPLAY_REPEAT
#            contiguous 256 KiB writes in its own segment of it (IOR's
#            segmented layout), read back: the shared-file job of
#            bench_capacity_validate.sh (its _shared cases)
# Each job is traced once and extracted (`siox workload extract`); then
# ROUNDS interleaved rounds each run the job, the exact replay and the
# replay generated from the characterization, all three traced the same way
# (`siox run`, posix+mpi), so SIOX's own cost is in every figure alike; each
# round waits for its traces to reach the warehouse before the next starts
# (the load of ingesting earlier rounds would otherwise land in later ones).
# A run's I/O time is the slowest rank's sum of operation durations in its
# extracted trace (what the workload file calls the job's I/O time). Prints
# (NAME VALUE UNIT), medians over the rounds, per workload W:
#   replay_error_percent_W          |replay - job| / job * 100 (exact trace)
#   replay_error_percent_W_charact  the same for the characterization's replay
#   replay_job_io_time_ms_W, replay_exact_io_time_ms_W, replay_charact_io_time_ms_W
#   replay_bytes_per_file_equal_W   1 when every replay moved the job's bytes per file
#   [ROUNDS=3] [REPLAY_REPEAT=64] [REPLAY_WORKLOADS="mpiio strided fpp shared"] bench/bench_replay.sh [BUILD_DIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-$top/build}" && pwd)
ROUNDS=${ROUNDS:-3}
# Calls per rank of the strided/fpp/shared jobs: 8 made jobs of ~50 ms of
# I/O, where start-up and scheduling jitter (4 ranks on 2 cores) moved a
# run's time 10x between rounds; 64 make them ~0.5-1 s.
REPEAT=${REPLAY_REPEAT:-64}
WORKLOADS=${REPLAY_WORKLOADS:-mpiio strided fpp shared}
export SIOX_SERVER=$B/siox-server/siox-server SIOX_DAEMON=$B/siox-daemon/siox-daemon SIOX_CLI=$B/siox-cli/siox
export SIOX_REPLAY=$B/workload/siox-replay
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_io=romio321
# 4 ranks on fewer cores: ranks waiting in MPI yield instead of spinning.
export OMPI_MCA_mpi_yield_when_idle=1
. "$top/tests/integration/lib.sh"
D=/dev/shm/siox-bench-replay.$$
trap 'rm -rf "$D"; cleanup >/dev/null' EXIT
LIBDIR="$T/libs"
mkdir -p "$LIBDIR" "$D"
ln -s "$B/instrumentation/mpi/libsiox-mpi.so" "$B/instrumentation/posix/libsiox-posix.so" "$LIBDIR/"
start_server >&2
start_daemon "" --batch-ms 50 >&2

traced() { # JOB CMD...
  local job=$1
  shift
  SIOX_JOB_ID=$job "$SIOX_CLI" run --layers posix,mpi --libdir "$LIBDIR" --socket "$DAEMON_SOCK" -- "$@" \
    >>"$T/runs.log" 2>&1 || fail "$job failed (see $T/runs.log)"
}
job() { # WORKLOAD RUN
  mkdir -p "$D/$2"
  case "$1" in
    mpiio) traced "$2" mpirun --oversubscribe -np 4 "$B/tests/mpi_io_workload" "$D/$2/data" "$T/$2.manifest" ;;
    strided) traced "$2" mpirun --oversubscribe -np 4 "$B/examples/siox-strided-writes" "$D/$2/data" \
      --blocks 64 --block 4096 --repeat $REPEAT ;;
    fpp) traced "$2" mpirun --oversubscribe -np 4 "$B/examples/siox-strided-writes" "$D/$2/data" \
      --blocks 64 --block 4096 --repeat $REPEAT --read-back --no-verify --file-per-process ;;
    shared) traced "$2" mpirun --oversubscribe -np 4 "$B/examples/siox-strided-writes" "$D/$2/data" \
      --blocks 64 --block 4096 --repeat $REPEAT --read-back --segmented ;;
    *) fail "unknown workload $1" ;;
  esac
}
replay() { mkdir -p "$D/$1" && traced "$1" "$SIOX_CLI" replay "$2" --dir "$D/$1" --mpirun "mpirun --oversubscribe" $3; }
# settle JOB...: waits until every rank of each JOB has recorded MPI_Finalize
# (the ranks' last activity; 4 ranks each) and the warehouse's activity
# count has then not changed for 2 s.
settle() {
  local jobs="" j prev=-1 still=0 cur fin
  for j in "$@"; do jobs="$jobs${jobs:+,}'$j'"; done
  for _ in $(seq 900); do
    fin=$(sql "SELECT count(*) FROM activities a JOIN activity_types t USING (type_id)
               JOIN processes p USING (proc_id) WHERE t.name = 'MPI_Finalize' AND p.job IN ($jobs)")
    cur=$(sql "SELECT count(*) FROM activities")
    if [ "$cur" = "$prev" ]; then still=$((still + 1)); else still=0; fi
    [ "$fin" -ge $((4 * $#)) ] && [ $still -ge 10 ] && return 0
    prev=$cur
    sleep 0.2
  done
  fail "the ranks of $jobs did not all reach the warehouse"
}
io_ms() { # JOB: the slowest rank's I/O time in the job's extracted trace
  siox_cli workload extract --job "$1" --prefix "$D/$1/" -o "$T/$1.wl" 2>/dev/null
  awk '$1 == "r" { t[$2] += $8 } END { m = 0; for (r in t) if (t[r] > m) m = t[r]; printf "%.3f\n", m / 1e6 }' "$T/$1.wl"
}

bytes_per_file() { # JOB: "read written" per file of the job's trace, files in order
  awk '$1 == "r" && ($3 ~ /read/) { r[$4] += $6 } $1 == "r" && ($3 ~ /write/) { w[$4] += $6 }
       $1 == "file" { n = $2 + 1 } END { for (f = 0; f < n; f++) printf "%d:%d ", r[f], w[f]; print "" }' "$T/$1.wl"
}

for W in $WORKLOADS; do
  job "$W" "$W-orig"
  settle "$W-orig"
  siox_cli workload extract --job "$W-orig" --prefix "$D/$W-orig/" -o "$T/$W-orig.wl"
  siox_cli workload extract --job "$W-orig" --prefix "$D/$W-orig/" --form characterization -o "$T/$W-orig.wlc" 2>/dev/null
done
for i in $(seq "$ROUNDS"); do
  for W in $WORKLOADS; do
    echo "round $i/$ROUNDS $W" >&2
    job "$W" "$W-job$i"
    replay "$W-exact$i" "$T/$W-orig.wl" ""
    replay "$W-charact$i" "$T/$W-orig.wlc" ""
    settle "$W-job$i" "$W-exact$i" "$W-charact$i"
  done
done
for W in $WORKLOADS; do
  same=1
  for i in $(seq "$ROUNDS"); do
    echo "$(io_ms "$W-job$i") $(io_ms "$W-exact$i") $(io_ms "$W-charact$i")"
    [ "$(bytes_per_file "$W-exact$i")" = "$(bytes_per_file "$W-job$i")" ] || same=0
  done >"$T/times.$W"
  echo "$W: job exact charact (ms)" >&2
  cat "$T/times.$W" >&2
  python3 - "$T/times.$W" "$W" "$same" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
w = sys.argv[2]
job, exact, charact = (statistics.median(c) for c in zip(*rows))
print(f"replay_error_percent_{w} {abs(exact - job) / job * 100:.1f} %")
print(f"replay_error_percent_{w}_charact {abs(charact - job) / job * 100:.1f} %")
print(f"replay_job_io_time_ms_{w} {job:.2f} ms")
print(f"replay_exact_io_time_ms_{w} {exact:.2f} ms")
print(f"replay_charact_io_time_ms_{w} {charact:.2f} ms")
print(f"replay_bytes_per_file_equal_{w} {sys.argv[3]} bool")
PY
done
