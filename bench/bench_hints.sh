#!/usr/bin/env bash
# hint_speedup_ratio: what the knowledge base's MPI-IO hints buy the strided
# workload (examples/siox_strided_writes.c: 4 ranks, romio321, small strided
# independent writes to one shared file) on the GlusterFS testbed, in the
# sparse layout where the hints matter (LAYOUT=sparse, the default: each
# rank's 16 x 4 KiB blocks per call 1 MiB apart, so ROMIO's default data
# sieving reads and writes back a 512 KiB window per block). LAYOUT=dense
# (stride ranks x 4 KiB) is the control: there the analysis keeps data
# sieving and the ratio should be about 1.
#   run 1: REPS runs without hints (job bench-hints-run1), instrumented
#   analysis: siox hints --job bench-hints-run1 --analyze
#   run 2: REPS runs with SIOX_HINTS=1 (job bench-hints-run2)
# Prints (NAME VALUE UNIT):
#   hint_speedup_ratio   median run-1 I/O time / median run-2 I/O time
#   hints_run1_io_time   median I/O time without hints (write phase, s)
#   hints_run2_io_time   median I/O time with the applied hints (s)
# and the applied hint set on stderr. Needs root and /dev/fuse; starts and
# stops its own siox-server, siox-daemon and testbed (by pid).
#   [LAYOUT=sparse|dense] bench/bench_hints.sh [BUILD_DIR] [REPS]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-$top/build}" && pwd)
REPS=${2:-5}
LAYOUT=${LAYOUT:-sparse}
case $LAYOUT in
sparse) WL=(--blocks 16 --repeat 8 --stride 1048576) ;;
dense) WL=(--blocks 16 --repeat 8) ;;
*) echo "bench_hints.sh: LAYOUT must be sparse or dense" >&2; exit 2 ;;
esac
WL_REPEAT=8
export SIOX_SERVER=$B/siox-server/siox-server SIOX_DAEMON=$B/siox-daemon/siox-daemon SIOX_CLI=$B/siox-cli/siox
export SIOX_MPI_LIB=$B/instrumentation/mpi/libsiox-mpi.so SIOX_POSIX_LIB=$B/instrumentation/posix/libsiox-posix.so
export SIOX_STRIDED=$B/examples/siox-strided-writes
XLATORS=$B/instrumentation/glusterfs/xlator
# lib.sh: temp dir, pid-recorded processes, server/daemon helpers.
. "$top/tests/integration/lib.sh"
. "$top/tests/integration/kb_delivery_lib.sh"
skip_unless_fuse_testbed
TB="$T/tb"
trap '"$top/testbed/siox-testbed" stop --dir "$TB" >/dev/null 2>&1 || true; cleanup >/dev/null' EXIT

# No analysis thread: the bench runs the analysis itself, and a thread
# analysing (and folding baselines) during the timed runs would share the
# two cores with them.
start_server --no-analyze
start_daemon "" --hints-ttl 1
wait_uplink 1
base=$(free_port_block 4)
[ -n "$base" ] || fail "no free ports for the bricks"
SIOX_JOB_ID=bench-hints-testbed "$top/testbed/siox-testbed" start --dir "$TB" --bricks 4 --base-port "$base" \
  --client-xlator debug/siox-client --brick-xlator debug/siox-brick --xlator-dir "$XLATORS" >"$T/testbed.out" 2>&1 ||
  { cat "$T/testbed.out" >&2; fail "testbed did not start"; }
FILE="$TB/mnt/strided.dat"

# runs JOB: REPS runs; prints the median io_time_s.
runs() {
  local job=$1 i
  for i in $(seq "$REPS"); do
    JOB=$job strided "$T/$job.$i.out" "$FILE" --no-verify "${WL[@]}"
    awk '$1 == "io_time_s" {print $2}' "$T/$job.$i.out"
  done | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

# wait_writes JOB: until every MPI_File_write of the job's runs is in the
# warehouse (a call is recorded after its POSIX children: those are in too).
wait_writes() {
  local want=$((REPS * RANKS * WL_REPEAT)) q="SELECT count(*) FROM activities a JOIN activity_types t USING (type_id)
    JOIN processes p USING (proc_id) WHERE t.name = 'MPI_File_write' AND p.job = '$1'"
  for _ in $(seq 900); do [ "$(sql "$q" 2>/dev/null || echo 0)" -ge $want ] && return 0; sleep 0.2; done
  fail "the $want MPI_File_write calls of job $1 did not reach the warehouse"
}

t1=$(SIOX_HINTS=0 runs bench-hints-run1)
wait_opens bench-hints-run1
wait_writes bench-hints-run1
"$SIOX_CLI" --data-dir "$SERVER_DIR" hints --job bench-hints-run1 --analyze >"$T/hints.txt" 2>&1 ||
  { cat "$T/hints.txt" >&2; fail "siox hints --analyze failed (are the analyses built?)"; }
sleep 1.2 # the daemon's cache TTL
t2=$(SIOX_HINTS=1 runs bench-hints-run2)
wait_writes bench-hints-run2 # its opens came before
echo "# layout: $LAYOUT (${WL[*]}), $REPS runs each" >&2
grep -A1 "romio_ds_write\|data_sieving_write" "$T/hints.txt" | cut -c1-400 >&2 || true
echo "# applied: $(open_attr bench-hints-run2 mpi/hints_applied | sort -u | tr '\n' ' ')" >&2
echo "# status:  $(open_attr bench-hints-run2 mpi/hints_status | sort -u | tr '\n' ' ')" >&2
python3 -c "print(f'hint_speedup_ratio {$t1 / $t2:.3f} x')"
echo "hints_run1_io_time $t1 s"
echo "hints_run2_io_time $t2 s"
