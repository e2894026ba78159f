#!/usr/bin/env bash
# replay_error_percent_<workload>: how far the replay of an extracted
# workload lands from the job's own I/O time (issue 13 §2), on /dev/shm.
# Workload mpiio: 4 ranks of tests/integration/mpi_io_workload (ROMIO;
# independent, collective, strided, nonblocking, split-collective and ordered
# MPI-IO on one shared file). The job is traced once and extracted
# (`siox workload extract`); then ROUNDS interleaved rounds each run the job,
# the exact replay and the replay generated from the characterization, all
# three traced the same way (`siox run`, posix+mpi), so SIOX's own cost is in
# every figure alike. A run's I/O time is the slowest rank's sum of operation
# durations in its extracted trace (what the workload file calls the job's
# I/O time). Prints (NAME VALUE UNIT), medians over the rounds:
#   replay_error_percent_mpiio          |replay - job| / job * 100 (exact trace)
#   replay_error_percent_mpiio_charact  the same for the characterization's replay
#   replay_job_io_time_ms_mpiio, replay_exact_io_time_ms_mpiio, replay_charact_io_time_ms_mpiio
#   [ROUNDS=5] bench/bench_replay.sh [BUILD_DIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-$top/build}" && pwd)
ROUNDS=${ROUNDS:-5}
export SIOX_SERVER=$B/siox-server/siox-server SIOX_DAEMON=$B/siox-daemon/siox-daemon SIOX_CLI=$B/siox-cli/siox
export SIOX_REPLAY=$B/workload/siox-replay
WORKLOAD=$B/tests/mpi_io_workload
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_io=romio321
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
job() { mkdir -p "$D/$1" && traced "$1" mpirun --oversubscribe -np 4 "$WORKLOAD" "$D/$1/data" "$T/$1.manifest"; }
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

job orig
settle orig
siox_cli workload extract --job orig --prefix "$D/orig/" -o "$T/orig.wl"
siox_cli workload extract --job orig --prefix "$D/orig/" --form characterization -o "$T/orig.wlc" 2>/dev/null
for i in $(seq "$ROUNDS"); do
  echo "round $i/$ROUNDS" >&2
  job "job$i"
  replay "exact$i" "$T/orig.wl" ""
  replay "charact$i" "$T/orig.wlc" ""
done
settle $(for i in $(seq "$ROUNDS"); do echo "job$i exact$i charact$i"; done)
for i in $(seq "$ROUNDS"); do
  echo "$(io_ms "job$i") $(io_ms "exact$i") $(io_ms "charact$i")"
done >"$T/times"
cat "$T/times" >&2
python3 - "$T/times" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
job, exact, charact = (statistics.median(c) for c in zip(*rows))
print(f"replay_error_percent_mpiio {abs(exact - job) / job * 100:.1f} %")
print(f"replay_error_percent_mpiio_charact {abs(charact - job) / job * 100:.1f} %")
print(f"replay_job_io_time_ms_mpiio {job:.2f} ms")
print(f"replay_exact_io_time_ms_mpiio {exact:.2f} ms")
print(f"replay_charact_io_time_ms_mpiio {charact:.2f} ms")
PY
