#!/usr/bin/env bash
# capacity_prediction_error_percent_<scenario>_demo: how far `siox capacity
# what-if` lands from the scenario built on the testbed (issue 13 section 5),
# for the demo's job (examples/siox_io_workload: 4 ranks, parallel HDF5,
# MPI-IO, POSIX and stdio files on every brick).
#   1. testbed: 4 GlusterFS bricks, brick 3 slowed (DELAY_US per WRITE and
#      READ, default 60 ms), SIOX translators; the job under `siox run`;
#      `siox workload extract`.
#   2. per scenario, predict the replay of that workload into a fresh
#      directory (`siox capacity what-if SCENARIO --replay-dir`, the model
#      calibrated on everything recorded so far), then build the scenario on
#      a testbed and replay there under `siox run`; measured = siox-replay's
#      io_time_ns (the slowest rank's time inside operations, what the model
#      predicts):
#        asis    the same testbed (prediction of a replay, nothing changed)
#        healed  heal=brick3: a fresh 4-brick testbed with no slow brick
#        4to2    heal=brick3+bricks=2: a fresh 2-brick testbed
#   3. replay_error_percent_demo_testbed: the as-is replay's I/O time against
#      the job's own (the workload file's recorded I/O time), same testbed.
# Prints (NAME VALUE UNIT): the errors in %, and the predicted and measured
# times in ms; *_residual: the same prediction with --residual (each
# operation keeps its recorded time outside the model). One round per scenario (each builds a testbed): noisy.
#   bench/bench_capacity.sh [BUILD_DIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-$top/build}" && pwd)
export SIOX_SERVER=$B/siox-server/siox-server SIOX_DAEMON=$B/siox-daemon/siox-daemon SIOX_CLI=$B/siox-cli/siox
export SIOX_REPLAY=$B/workload/siox-replay SIOX_WORKLOAD=$B/examples/siox-io-workload
export SIOX_TESTBED=$top/testbed/siox-testbed SIOX_XLATOR_DIR=$B/instrumentation/glusterfs/xlator
export OMPI_MCA_mpi_yield_when_idle=1
. "$top/tests/integration/lib.sh"
skip_unless_fuse_testbed >&2
. "$top/tests/integration/sys_lib.sh"
trap 'tb_stop; cleanup >/dev/null' EXIT
start_server >&2
start_daemon "" --batch-ms 50 >&2
JOB="bench-cap-$$"
tb_start 3 "$JOB-fs"
SLOWB="brick3:$TB/brick3"
pick_files cap
echo "the job (brick 3 slowed)" >&2
run_workload "$JOB" "$T/job.out" "$SIOX_CLI" run --layers posix,mpi,hdf5 --socket "$SIOX_SOCKET" --
wait_finalized "$JOB" 4 300
wait_links
wait_settled
siox_cli workload extract --job "$JOB" --prefix "$MNT/" -o "$T/job.wl" 2>/dev/null
OLD_MNT=$MNT

# predict NAME [--residual] SCENARIO...: the predicted I/O time (ns) of the
# replay into $MNT/replay-NAME under the last scenario given (none: as-is).
predict() {
  local name=$1
  shift
  siox_cli capacity what-if "$@" --workload "$T/job.wl" --mount "$OLD_MNT" --replay-dir "$OLD_MNT/replay-$name" \
    --json >"$T/pred-$name.json"
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["workloads"][0]["scenarios"][-1]["io_time_ns"][0])' \
    "$T/pred-$name.json"
}
# measure NAME: replays into $MNT/replay-NAME (traced); prints io_time_ns.
measure() {
  mkdir -p "$MNT/replay-$1"
  LD_PRELOAD=$ASAN_RT SIOX_JOB_ID="$JOB-$1" "$SIOX_CLI" run --layers posix,mpi --socket "$SIOX_SOCKET" -- \
    "$SIOX_CLI" replay "$T/job.wl" --dir "$MNT/replay-$1" --mpirun "mpirun --oversubscribe" >"$T/replay-$1.out" 2>&1 \
    || { cat "$T/replay-$1.out" >&2; fail "replay $1 failed"; }
  awk '$1 == "io_time_ns" { print $2 }' "$T/replay-$1.out"
}

# The predictions first, all on the model of the first testbed (the
# replays' own traces must not calibrate what they check).
p_asis=$(predict asis)
p_healed=$(predict healed "heal=$SLOWB")
p_4to2=$(predict 4to2 "heal=$SLOWB+bricks=2")
q_asis=$(predict asis --residual)
q_healed=$(predict healed --residual "heal=$SLOWB")
q_4to2=$(predict 4to2 --residual "heal=$SLOWB+bricks=2")
# The replay's directory names must hash the same on every testbed: the
# mount point is stripped, so they do (DIR/replay-NAME on each volume).
echo "as-is replay" >&2
m_asis=$(measure asis)
recorded=$(awk '$1 == "r" { t[$2] += $8 } END { m = 0; for (r in t) if (t[r] > m) m = t[r]; print m }' "$T/job.wl")
echo "healed: a fresh testbed, no slow brick" >&2
tb_start "" "$JOB-fs2"
m_healed=$(measure healed)
echo "4 -> 2 bricks" >&2
BRICKS=2
tb_start "" "$JOB-fs3"
m_4to2=$(measure 4to2)
python3 - "$recorded" "$p_asis" "$m_asis" "$p_healed" "$m_healed" "$p_4to2" "$m_4to2" "$q_asis" "$q_healed" "$q_4to2" <<'PY'
import sys
rec, pa, ma, ph, mh, p2, m2, qa, qh, q2 = map(float, sys.argv[1:])
err = lambda p, m: abs(p - m) / m * 100
print(f"replay_error_percent_demo_testbed {err(ma, rec):.1f} %")
for name, p, q, m in (("asis", pa, qa, ma), ("healed", ph, qh, mh), ("4to2", p2, q2, m2)):
    print(f"capacity_prediction_error_percent_{name}_demo {err(p, m):.1f} %")
    print(f"capacity_prediction_error_percent_{name}_demo_residual {err(q, m):.1f} %")
    print(f"capacity_predicted_io_time_ms_{name}_demo {p / 1e6:.1f} ms")
    print(f"capacity_predicted_io_time_ms_{name}_demo_residual {q / 1e6:.1f} ms")
    print(f"capacity_measured_io_time_ms_{name}_demo {m / 1e6:.1f} ms")
print(f"capacity_recorded_io_time_ms_demo {rec / 1e6:.1f} ms")
PY
