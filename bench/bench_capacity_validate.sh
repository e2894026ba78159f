#!/usr/bin/env bash
# capacity_prediction_error_percent_<scenario>_<workload>: `siox capacity validate`, the
# model's predictions against real runs of each scenario, built on the
# GlusterFS testbed in this same bench run (issue 13 section 5).
#   1. testbed A: 4 bricks, brick 3 slowed (DELAY_US per WRITE and READ,
#      default 5 ms); the calibration job (cv_calibrate: one rank writes a
#      file on each brick in CV_CAL_MIB, default 32, calls of 1 MiB, in
#      CV_CAL_ROUNDS rounds, default 4, over the bricks in turn, the
#      files' cached pages are dropped, it reads them back in 1 MiB calls
#      while CV_CAL_WAITERS, default 3, more ranks wait in a barrier, as the
#      replays' ranks 1-3 wait for rank 0's read-back:
#      the healthy bricks' reads and writes at the workload's size, which
#      the other two jobs hardly make; capacity/README.md "Calibration job";
#      CV_CAL_MIB=0 leaves it out); the demo job (examples/siox-io-workload: files on
#      every brick, so every brick is calibrated) and the strided-writes job
#      (examples/siox-strided-writes: 4 ranks, one shared file, strided
#      independent writes through a file view, read back: --blocks 16
#      --block 65536 --repeat CV_JOB_REPEAT, default 80, i.e. 80 calls of
#      1 MiB per rank, 320 MiB written and read) under `siox run`; the
#      strided job's and the demo job's workloads are extracted. The model
#      is calibrated on these three recorded runs only (validate
#      --since/--until).
#      Sized so that every run's I/O time is seconds, not the start-up
#      jitter of a short one: with --repeat 4 the shared-file runs took
#      70-415 ms, and one case's runs moved by several times themselves
#      (a collective MPI_File_open alone took 6-115 ms). At 80 a replay on
#      healthy bricks takes ~2 s, on the slowed brick ~10x that; the delay
#      is 5 ms, not 20, so that those runs stay ~25 s, not ~100.
#      After the model's window (so that the model is the same with or
#      without it, and predicts a job it has not seen), when a shared_ case
#      is asked for: the shared-file job (examples/siox-strided-writes
#      --segmented: 4 ranks, one shared file, each rank's 80 calls of 1 MiB
#      in its own contiguous 80 MiB segment of it, IOR's segmented layout,
#      read back: --blocks 1 --block 1048576 --repeat CV_JOB_REPEAT
#      --read-back --segmented, the same 320 MiB as the strided job) under
#      `siox run`, its workload extracted.
#   2. per case, the workload is replayed (`siox replay`, traced) on the
#      scenario's system, COPIES replays at once for load=K, CV_REPEAT times
#      (default 3; the replay's files removed between repeats); CV_WARMUP=1
#      runs one warm-up repeat first, traced but not measured (default 0: in
#      two sittings the first run was no more often the slowest than the
#      fastest; capacity/README.md "The first run of a case"). The shared
#      file's replays on testbed A are placed on the slowed brick, as the
#      recorded job's file is (a replay directory picked for it: DHT places
#      by name and directory), so that healing it matters to them:
#        asis       testbed A, the recorded workload (shared file)
#        load2      testbed A, 2 concurrent copies
#        load4      testbed A, 4 concurrent copies (not by default: ~4x load2's time)
#        ranks2     testbed A, 2 ranks (siox workload transform --ranks 2)
#        ranks8     testbed A, 8 ranks (--ranks 8; 8 processes on this machine)
#        fpp        testbed A, file per process (--file-per-process)
#        fpp_load2  testbed A, file per process, 2 concurrent copies
#        fpp_load4  testbed A, file per process, 4 copies (not by default)
#        demo       testbed A, the demo job's workload (HDF5 over MPI-IO, MPI-IO
#                   and POSIX files, replayed as MPI-IO and POSIX calls)
#        demo_load2 testbed A, the demo's workload, 2 concurrent copies
#        demo_load4 testbed A, the demo's workload, 4 copies (not by default)
#        shared     testbed A, the shared-file job's workload (segmented; its
#                   file placed on the slowed brick as the strided job's)
#        shared_load2, shared_load4  the same, 2 and 4 concurrent copies
#                   (shared_load4 not by default)
#        healed     testbed B, 4 bricks none slowed (heal=brick3)
#        fpp_healed testbed B, file per process
#        demo_healed testbed B, the demo's workload
#        shared_healed testbed B, the shared-file job's workload
#        4to2       testbed C, 2 bricks none slowed (heal=brick3+bricks=2)
#        fpp_4to2, demo_4to2, shared_4to2  testbed C, file per process, the
#                   demo's workload, the shared-file job's
#        2to4       the other way: the model calibrated on the 4to2 case's
#                   first run's window (testbed C, 2 bricks; the _allruns
#                   variant: every measured repeat of the 4to2 case, from the
#                   first's start to the last's end),
#                   bricks=4, checked against the healed runs (testbed
#                   B: 4 bricks, none slowed, the same workload); needs both
#                   cases, so it runs them
#        fpp_2to4   the same for file per process (fpp_4to2's window, fpp_healed's runs)
#        demo_2to4, shared_2to4  the same for the demo's and the shared-file
#                   job's workloads
#      (CV_CASES="asis fpp ..." runs a subset; the default is every case
#      but load4, fpp_load4, demo_load4 and shared_load4, whose 4 copies
#      take minutes per repeat: CV_CASES="... load4 fpp_load4" adds them.)
#      Wall time per case at CV_REPEAT=3, quiescing and waiting for the
#      traces included (2026-12-07, load 3-21, bench/results.txt): asis
#      150 s, demo 29 s, demo_load2 126 s, demo_load4 219 s, shared 120 s,
#      shared_load2 194 s, shared_load4 457 s, demo_healed 93 s,
#      shared_healed 151 s, demo_4to2 96 s, shared_4to2 160 s (the other
#      strided and fpp cases were not timed then: about their shared_
#      counterparts'); before them ~3.5 min (calibration, demo, the
#      recordings; each testbed's start ~1 min); after them each of the ~16
#      validate variants below ~3 min with 11-13 cases (the longest part).
#   3. `siox capacity validate --job STRIDED` with every case and its runs:
#      measured = the runs' I/O time read back from the warehouse, the
#      median over the repeats (validate's own rule for repeated runs).
# Prints (NAME VALUE UNIT) per case, under <scenario>_<workload> (asis_strided,
# load2_strided, load4_strided, ranks2_strided, ranks8_strided, asis_fpp,
# load2_fpp, load4_fpp, healed_strided, healed_fpp, 4to2_strided, 4to2_fpp,
# 2to4_strided, 2to4_fpp, asis_demo, load2_demo, load4_demo, healed_demo,
# 4to2_demo, 2to4_demo, asis_shared, load2_shared, load4_shared,
# healed_shared, 4to2_shared, 2to4_shared; replay_error_percent_<workload> on
# /dev/shm is bench/bench_replay.sh's): capacity_prediction_error_percent_<key>,
# capacity_predicted_io_time_ms_<key>, capacity_measured_io_time_ms_<key>,
# the runs' own spread beside it: capacity_measured_io_time_ms_<key>_min and
# _max (the fastest and slowest job), capacity_measured_spread_percent_<key>
# ((max - min) / measured) and capacity_measured_runs_<key> (repeats);
# and the baseline on the same runs, the model without the client's page
# cache (--client-cache 0): capacity_prediction_error_percent_<key>_nocache,
# capacity_predicted_io_time_ms_<key>_nocache; the model with the
# recording's delays added (--with-delays, capacity/README.md "Disturbed
# samples"): ..._<key>_delays; the model before the client's concurrency per
# class, the collective open and close and the kernel's part
# (--flat-concurrency --no-collective --no-kernel, capacity/README.md
# "Concurrency per class", "Collective open and close", "The kernel's part"):
# ..._<key>_flat, and each of the three alone: ..._<key>_conc,
# ..._<key>_coll, ..._<key>_kernel; the model before its client's servers
# were bounded by its node's cores (--client-cores 0; the default bound is
# this machine's online cores: capacity/README.md "Bounding a client's
# servers by its node's cores"): ..._<key>_nocores; the model before the
# client node's cores were shared by every component on the node (--no-node-cpu:
# capacity/README.md "The client node's CPU"): ..._<key>_nonodecpu; ranks waiting in MPI
# sharing the node's cores (--polling, off by default: capacity/README.md "Ranks waiting
# in MPI"): ..._<key>_poll; the kernel's part per call as the plain mean over the
# window's calls (--kernel-mean, the estimate before the robust one: capacity/README.md
# "The kernel's part"): ..._<key>_kmean; a read's kernel part pooled over all the client's
# reads (--kernel-pooled, the rule before: capacity/README.md "The read-back's kernel part"):
# ..._<key>_kpooled; the client's read line over all its reads, the
# ones queued behind another request to their brick too (--read-all, the rule before:
# capacity/README.md "Reads queued behind another"): ..._<key>_readall; for the 2to4
# cases, the model calibrated on every measured repeat of the 4to2 case, not its first
# run alone: ..._2to4_<w>_allruns; the healthy reference's write line by least squares
# (--healthy-ls, the rule before: capacity/README.md "The healthy reference"): ..._<key>_healthyls; the model without the calibration job
# (its window starts after it): ..._<key>_nocal; with CV_BASELINE_CLI=PATH (a `siox` built
# from the commit to compare with), its validate on the same runs:
# ..._<key>_baseline;
# replay_error_percent_<w>_asis (w strided, shared, demo: when its as-is case
# ran), the as-is case's measured runs (median) against the recorded job's
# own I/O time on testbed A, and replay_job_io_time_ms_<w>_asis that time (the
# demo job's files were placed by pick_files, its replay's by DHT in r-demo);
# then capacity_prediction_error_percent_median, ..._median_<suffix> for
# each of those variants that ran on every case, and capacity_validated (1
# when every case is within validate's 10 %); capacity_validate_refused_<case>
# when validate refused the case's run (its reason on stderr: e.g. a trace
# with activities dropped under load), and ..._refused_<case>_<suffix> when
# only a variant's run failed (its median is then left out). CV_REPEAT=1 is
# one run per case: noisy; on a loaded machine the replays are slowed and
# the model is not. CV_BASELINE_CLI must be a `siox` that takes repeated
# runs (this commit's or later): an older one refuses more --measured than
# copies. Each mpirun has its own TMPDIR (capacity_validate_lib.sh).
# To re-validate a model change on the same runs without new testbed runs:
# SIOX_KEEP_TMP=1 keeps the temp dir T (/tmp/siox-it.*), its warehouse and
# T/case-NAME.args (T/job-2to4.args); start its PostgreSQL again (as user
# postgres: pg_ctl -D T/server/pg start) and call `siox --data-dir T/server
# capacity validate` with the recorded job's options and those cases.
# Reproducible runs (capacity/README.md "Reproducible runs"): before each
# calibrating or measured run the warehouse has stored the runs before it
# and their dirty pages are written (cv_quiesce; CV_QUIESCE=0: back to back
# as before), and the warehouse runs at nice CV_SERVER_NICE (default 10; 0
# as before). CV_OPS=1 prints, per case, repeat, rank and operation, where
# the measured runs spent their time (bench/capacity_run_ops.py).
# CV_VARIANTS="PRE..." runs only those validate variants (v0 nocache, vd delays, vf flat,
# vc conc, vo coll, vk kernel, vnocores, vnonodecpu, vpoll, vkmean, vkpool, vreadall, vhls,
# vn nocal, vb baseline, vall allruns) besides the model itself; CV_VARIANTS= none (a diagnostic run:
# the ~16 variants are most of a short bench's time). Unset: all, as before.
# Where a run's CPU goes (capacity/README.md "The client node's CPU"):
# bench/capacity_cpu_share.py sample LOG in the background during the
# bench, then capacity_cpu_share.py share LOG T0 T1 T over a run's window.
#   bench/bench_capacity_validate.sh [BUILD_DIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-$top/build}" && pwd)
export SIOX_SERVER=$B/siox-server/siox-server SIOX_DAEMON=$B/siox-daemon/siox-daemon SIOX_CLI=$B/siox-cli/siox
export SIOX_REPLAY=$B/workload/siox-replay SIOX_WORKLOAD=$B/examples/siox-io-workload
export SIOX_STRIDED=$B/examples/siox-strided-writes
export SIOX_TESTBED=$top/testbed/siox-testbed SIOX_XLATOR_DIR=$B/instrumentation/glusterfs/xlator
export OMPI_MCA_mpi_yield_when_idle=1
export DELAY_US=${DELAY_US:-5000}
export CV_REPEAT=${CV_REPEAT:-3}
CASES=${CV_CASES:-asis load2 ranks2 ranks8 fpp fpp_load2 healed fpp_healed 4to2 2to4 fpp_4to2 fpp_2to4 demo demo_load2 demo_healed demo_4to2 demo_2to4 shared shared_load2 shared_healed shared_4to2 shared_2to4}
. "$top/tests/integration/lib.sh"
skip_unless_fuse_testbed >&2
. "$top/tests/integration/sys_lib.sh"
. "$top/tests/integration/capacity_validate_lib.sh"
CV_ARGS=(--blocks 16 --block 65536 --repeat "${CV_JOB_REPEAT:-80}" --read-back)
# The segmented shared-file job: the same bytes, each rank's 1 MiB calls in its own segment.
CV_SHARED_ARGS=(--blocks 1 --block 1048576 --repeat "${CV_JOB_REPEAT:-80}" --read-back --segmented)
trap 'tb_stop; cleanup >/dev/null' EXIT
# NAME wanted: asked for, or a run a 2to4 case asked for needs (2to4 needs
# healed and 4to2, W_2to4 W_healed and W_4to2 for W fpp, demo, shared).
want() {
  local w
  [[ " $CASES " == *" $1 "* ]] && return 0
  for w in "" fpp_ demo_ shared_; do
    [[ " $CASES " == *" ${w}2to4 "* ]] && [[ "$1" = "${w}healed" || "$1" = "${w}4to2" ]] && return 0
  done
  return 1
}
# want_any NAME...: one of the NAMEs wanted.
want_any() {
  local n
  for n in "$@"; do want "$n" && return 0; done
  return 1
}
# The warehouse (siox-server and its PostgreSQL) is not part of the system
# modelled (in a deployment it runs on another host); here it shares the
# client node's 2 cores. At nice CV_SERVER_NICE (default 10) its ingest takes
# the cores the runs leave; cv_quiesce waits for it between runs.
# capacity/README.md "Reproducible runs". CV_SERVER_NICE=0: as before.
SIOX_SERVER_NICE=${CV_SERVER_NICE:-10} start_server >&2
start_daemon "" --batch-ms 50 >&2
JOB="cv-$$"

tb_start 3 "$JOB-fs"
SLOWB="brick3:$TB/brick3"
t0=$(date +%s)
# The healthy bricks' calibration job (capacity/README.md "Calibration job"):
# 1 MiB writes and uncached reads on every brick. CV_CAL_MIB=0 leaves it out.
if [ "${CV_CAL_MIB:-32}" -gt 0 ]; then
  echo "calibration: ${CV_CAL_MIB:-32} MiB written and read back uncached on each brick" >&2
  cv_calibrate "$JOB-cal" "${CV_CAL_MIB:-32}"
  sleep 1
fi
tc=$(date +%s) # the window without the calibration job: the _nocal variant
echo "calibration: the demo job (brick 3 slowed)" >&2
pick_files cal
cv_quiesce
run_workload "$JOB-demo" "$T/demo.out" "$SIOX_CLI" run --layers posix,mpi,hdf5 --socket "$SIOX_SOCKET" --
wait_finalized "$JOB-demo" 4 300
echo "the recorded job: strided writes, one shared file" >&2
cv_record "$JOB"
t1=$(($(date +%s) + 1))
siox_cli workload transform "$T/$JOB.wl" --file-per-process -o "$T/fpp.wl"
# The demo job's workload (HDF5 over MPI-IO, MPI-IO, POSIX; files at the mount's top).
siox_cli workload extract --job "$JOB-demo" --prefix "$MNT/" -o "$T/demo.wl" 2>"$T/demo.extract" \
  || fail "extract of the demo job failed: $(cat "$T/demo.extract")"
siox_cli workload transform "$T/$JOB.wl" --ranks 2 -o "$T/ranks2.wl"
siox_cli workload transform "$T/$JOB.wl" --ranks 8 -o "$T/ranks8.wl"
# The segmented shared-file job, recorded after the model's window: the
# model is calibrated on the same runs as without it, and predicts a job it
# has not seen.
if want_any shared shared_load2 shared_load4 shared_healed shared_4to2 shared_2to4; then
  echo "the shared-file job: segmented, one shared file (after the model's window)" >&2
  cv_record "$JOB-shared" shared.dat "${CV_SHARED_ARGS[@]}"
fi
sleep 1 # the runs start after the model's window
run_case() { # NAME WORKLOAD COPIES SPEC
  want "$1" || return 0
  echo "case $1: $4, $3 cop$([ "$3" = 1 ] && echo y || echo ies) of $(basename "$2"), $CV_REPEAT time(s); $(uptime)" >&2
  local s
  s=$(date +%s)
  cv_replay "$@"
  echo "  $(($(date +%s) - s)) s, in ${CV_DIR[$1]}" >&2
}
# The shared file's replays on testbed A go where the recorded job's file
# is, on the slowed brick (the replay directory picked for it): else the
# file lands where its directory's layout puts it (r-asis: brick 1), and
# healing brick 3 changes nothing of the job it is asked about.
CV_ON_BRICK=3
run_case asis "$T/$JOB.wl" 1 as-is
run_case load2 "$T/$JOB.wl" 2 load=2
run_case load4 "$T/$JOB.wl" 4 load=4
run_case ranks2 "$T/ranks2.wl" 1 as-is
run_case ranks8 "$T/ranks8.wl" 1 as-is
CV_ON_BRICK=
run_case fpp "$T/fpp.wl" 1 as-is
run_case fpp_load2 "$T/fpp.wl" 2 load=2
run_case fpp_load4 "$T/fpp.wl" 4 load=4
run_case demo "$T/demo.wl" 1 as-is
run_case demo_load2 "$T/demo.wl" 2 load=2
run_case demo_load4 "$T/demo.wl" 4 load=4
CV_ON_BRICK=3 # the shared file's replays where the strided job's are: on the slowed brick
run_case shared "$T/$JOB-shared.wl" 1 as-is
run_case shared_load2 "$T/$JOB-shared.wl" 2 load=2
run_case shared_load4 "$T/$JOB-shared.wl" 4 load=4
CV_ON_BRICK=
if want_any healed fpp_healed demo_healed shared_healed; then
  echo "testbed B: no slow brick" >&2
  tb_start "" "$JOB-fs2"
  run_case healed "$T/$JOB.wl" 1 "heal=$SLOWB"
  run_case fpp_healed "$T/fpp.wl" 1 "heal=$SLOWB"
  run_case demo_healed "$T/demo.wl" 1 "heal=$SLOWB"
  run_case shared_healed "$T/$JOB-shared.wl" 1 "heal=$SLOWB"
  MNT_B=$MNT
fi
if want_any 4to2 fpp_4to2 demo_4to2 shared_4to2; then
  echo "testbed C: 2 bricks" >&2
  BRICKS=2
  tb_start "" "$JOB-fs3"
  run_case 4to2 "$T/$JOB.wl" 1 "heal=$SLOWB+bricks=2"
  run_case fpp_4to2 "$T/fpp.wl" 1 "heal=$SLOWB+bricks=2"
  run_case demo_4to2 "$T/demo.wl" 1 "heal=$SLOWB+bricks=2"
  run_case shared_4to2 "$T/$JOB-shared.wl" 1 "heal=$SLOWB+bricks=2"
fi
wait_settled
# 2to4: calibrated on the 4to2 run (2 bricks), 4 bricks predicted, the
# healed run (4 healthy bricks, the same workload) measured. Not one of
# CV_NAMES: its validate has another recorded job and window.
# Its measured runs: every repeat of the healed case; the model: the first
# 4to2 run's window.
# case_2to4 NAME HEALED FOURTO2 WORKLOAD: case NAME's options and its recorded job's.
case_2to4() {
  [[ " $CASES " == *" $1 "* ]] || return 0
  { printf '%s\n' --case "$1" --scenario bricks=4 --workload "$4" --replay-dir "$MNT_B/${CV_DIR[$2]}" \
    --run-mount "$MNT_B"; grep -A1 -x -- --measured "$T/case-$2.args" | grep -vx -- --; } >"$T/case-$1.args"
  # The model: the 4to2 case's first measured run's window; job-all-NAME.args: every measured
  # repeat's (the _allruns variant; capacity/README.md "The first run of a case").
  printf '%s\n' --job "$3-1" --prefix "$MNT/${CV_DIR[$3]}/" --mount "$MNT" >"$T/job-$1.args"
  printf '%s\n' --job "$3-1" --prefix "$MNT/${CV_DIR[$3]}/" --mount "$MNT" \
    --since "@${CV_T0[$3]}" --until "@${CV_T1[$3]}" >"$T/job-all-$1.args"
  TWO_FOUR+=("$1")
}
TWO_FOUR=()
case_2to4 2to4 healed 4to2 "$T/$JOB.wl"
case_2to4 fpp_2to4 fpp_healed fpp_4to2 "$T/fpp.wl"
case_2to4 demo_2to4 demo_healed demo_4to2 "$T/demo.wl"
case_2to4 shared_2to4 shared_healed shared_4to2 "$T/$JOB-shared.wl"
args=(--job "$JOB" --prefix "$REC_MNT/job/" --mount "$REC_MNT" --since "@$t0" --until "@$t1")
# All cases at once for the table and verdict.
siox_cli capacity validate "${args[@]}" "${CV_CASES[@]}" >&2 || echo "(validate refused a case: see below)" >&2
: >"$T/refused"
args_nocal=(--job "$JOB" --prefix "$REC_MNT/job/" --mount "$REC_MNT" --since "@$tc" --until "@$t1")
ALL_NAMES=("${CV_NAMES[@]}" "${TWO_FOUR[@]}")
# validate_variant PRE [OPTION...]: validate with OPTIONs into $T/PRE-all.json
# (every case of the recorded job at once: the model is calibrated once,
# and calibrating is most of a call's time), else, when that is refused,
# each case alone into $T/PRE-NAME.json, so that one case whose run is
# refused (e.g. an incomplete trace) leaves the others' figures (for PRE v
# the refusal is printed); 2to4 alone (another recorded job). CLI=... sets
# the siox to call (the baseline).
validate_variant() {
  local pre=$1 n
  shift
  # CV_VARIANTS="v0 vd ...": only those variants besides v (the model itself); default all.
  [ "$pre" = v ] || [ -z "${CV_VARIANTS+x}" ] || [[ " $CV_VARIANTS " == *" $pre "* ]] || return 0
  local -a cli=(siox_cli) one jargs
  [ -z "${CLI:-}" ] || cli=("$CLI" --data-dir "$SERVER_DIR")
  local names=("${CV_NAMES[@]}")
  local -n wargs=${ARGS_VAR:-args} # ARGS_VAR=args_nocal: the window without the calibration job
  if [ -n "${ONLY_2TO4:-}" ]; then
    names=()
  elif "${cli[@]}" capacity validate "${wargs[@]}" "${CV_CASES[@]}" "$@" --json >"$T/$pre-all.json" 2>/dev/null; then
    names=()
  else
    rm -f "$T/$pre-all.json"
  fi
  names+=("${TWO_FOUR[@]}")
  for n in "${names[@]}"; do
    cv_case_args "$n" one
    jargs=("${wargs[@]}")
    [ -f "$T/${JOBARGS:-job}-$n.args" ] && mapfile -t jargs <"$T/${JOBARGS:-job}-$n.args"
    if ! "${cli[@]}" capacity validate "${jargs[@]}" "${one[@]}" "$@" --json >"$T/$pre-$n.json" 2>"$T/$pre-$n.err"; then
      rm -f "$T/$pre-$n.json"
      [ "$pre" != v ] || { echo "$n" >>"$T/refused.names"; cat "$T/$pre-$n.err" >>"$T/refused"; }
    fi
  done
}
validate_variant v
# The baseline, on the same runs: the model without the client's page
# cache (every read a brick request), as it was before it had one.
validate_variant v0 --client-cache 0
# With the recording's delays (capacity/README.md, "Disturbed samples").
validate_variant vd --with-delays
# The model before concurrency per class, the collective open/close and the kernel's part; each alone.
validate_variant vf --flat-concurrency --no-collective --no-kernel
validate_variant vc --no-collective --no-kernel
validate_variant vo --flat-concurrency --no-kernel
validate_variant vk --flat-concurrency --no-collective
# The client's servers not bounded by its node's cores (capacity/README.md "Bounding a
# client's servers by its node's cores"): the model before. The default bound is this
# machine's online cores, where every replay ran.
validate_variant vnocores --client-cores 0
# Each component on the client node with its servers to itself (capacity/README.md "The
# client node's CPU"): the model before the node's cores were shared.
validate_variant vnonodecpu --no-node-cpu
# Ranks waiting in MPI poll on the node's cores (capacity/README.md "Ranks waiting in MPI";
# off by default).
validate_variant vpoll --polling
# The kernel's part per call as the plain mean over the window's calls (capacity/README.md "The
# kernel's part"): the estimate before the robust one.
validate_variant vkmean --kernel-mean
# A read's kernel part pooled over all the client's reads (capacity/README.md "The read-back's
# kernel part"): the rule before the per-brick one.
validate_variant vkpool --kernel-pooled
# The rules before for the client's read line and the healthy reference's write line.
validate_variant vreadall --read-all
validate_variant vhls --healthy-ls
# The model's kernel part (robust, its standard error, the calls left out, the plain mean) on stderr.
siox_cli capacity model --since "@$t0" --until "@$t1" | grep -A2 "kernel's part" >&2 || true
# 2to4 with the model calibrated on every measured repeat of the 4to2 case, not its first run
# alone (ONLY_2TO4: the variant is called for the 2to4 cases alone).
[ ${#TWO_FOUR[@]} = 0 ] || ONLY_2TO4=1 JOBARGS=job-all validate_variant vall
# The model without the calibration job (its window starts after it): the model before it.
[ "$tc" = "$t0" ] || ARGS_VAR=args_nocal validate_variant vn
[ -z "${CV_BASELINE_CLI:-}" ] || CLI=$CV_BASELINE_CLI validate_variant vb
cat "$T/refused" >&2
# CV_OPS=1: per case, repeat, rank and operation, where the measured runs spent their time.
[ "${CV_OPS:-0}" = 0 ] || python3 "$top/bench/capacity_run_ops.py" "$SIOX_CLI" "$SERVER_DIR" "$T" "${CV_NAMES[@]}" >&2
# The recorded jobs beside their as-is cases, for replay_error_percent_<workload>_asis.
CV_RECORDED="asis=$T/$JOB.wl shared=$T/$JOB-shared.wl demo=$T/demo.wl" python3 - "$T" "${ALL_NAMES[@]}" <<'PY'
import json, os, statistics, sys
t, names = sys.argv[1], sys.argv[2:]
# The issue's names, capacity_prediction_error_percent_<scenario>_<workload>:
# the workload is the strided job (one shared file, interleaved), its
# file-per-process form, the demo job or the segmented shared-file job;
# ranks2/ranks8 are the strided job at other rank counts.
key = {"asis": "asis_strided", "load2": "load2_strided", "ranks2": "ranks2_strided", "ranks8": "ranks8_strided",
       "fpp": "asis_fpp", "fpp_load2": "load2_fpp", "healed": "healed_strided", "fpp_healed": "healed_fpp",
       "4to2": "4to2_strided", "2to4": "2to4_strided", "load4": "load4_strided", "fpp_load4": "load4_fpp",
       "fpp_4to2": "4to2_fpp", "fpp_2to4": "2to4_fpp", "demo": "asis_demo", "demo_healed": "healed_demo",
       "demo_4to2": "4to2_demo", "demo_load2": "load2_demo", "demo_load4": "load4_demo", "demo_2to4": "2to4_demo",
       "shared": "asis_shared", "shared_load2": "load2_shared", "shared_load4": "load4_shared",
       "shared_healed": "healed_shared", "shared_4to2": "4to2_shared", "shared_2to4": "2to4_shared"}
def case(pre, n):
    """Case n of variant pre: from its own call, else from the call with every case; None when refused."""
    for f in (os.path.join(t, f"{pre}-{n}.json"), os.path.join(t, f"{pre}-all.json")):
        if os.path.exists(f):
            for c in json.load(open(f))["cases"]:
                if c["case"] == n:
                    return c
    return None
errs, alt = [], {}
for n in names:
    c = case("v", n)
    if c is None:
        print(f"capacity_validate_refused_{n} 1 bool")
        continue
    errs.append(c["error_pct"])
    k = key.get(n, n)
    print(f"capacity_prediction_error_percent_{k} {c['error_pct']:.1f} %")
    print(f"capacity_predicted_io_time_ms_{k} {c['predicted_io_time_ns'] / 1e6:.1f} ms")
    print(f"capacity_measured_io_time_ms_{k} {c['measured_io_time_ns'] / 1e6:.1f} ms")
    # The runs' own spread beside the model's error: fastest and slowest job.
    print(f"capacity_measured_io_time_ms_{k}_min {c['measured_min_ns'] / 1e6:.1f} ms")
    print(f"capacity_measured_io_time_ms_{k}_max {c['measured_max_ns'] / 1e6:.1f} ms")
    print(f"capacity_measured_spread_percent_{k} "
          f"{100 * (c['measured_max_ns'] - c['measured_min_ns']) / c['measured_io_time_ns']:.1f} %")
    print(f"capacity_measured_runs_{k} {c['repeats']} count")
    for pre, suf in (("v0", "nocache"), ("vd", "delays"), ("vf", "flat"), ("vc", "conc"), ("vo", "coll"), ("vk", "kernel"),
                     ("vn", "nocal"), ("vnocores", "nocores"), ("vnonodecpu", "nonodecpu"), ("vpoll", "poll"), ("vkmean", "kmean"), ("vkpool", "kpooled"),
                     ("vreadall", "readall"), ("vhls", "healthyls"), ("vall", "allruns"),
                     ("vb", "baseline")):
        if pre == "vall" and not n.endswith("2to4"):
            continue  # a 2to4 case's variant only
        c0 = case(pre, n)
        if c0 is not None:
            print(f"capacity_prediction_error_percent_{k}_{suf} {c0['error_pct']:.1f} %")
            alt.setdefault(suf, []).append(c0["error_pct"])
            print(f"capacity_predicted_io_time_ms_{k}_{suf} {c0['predicted_io_time_ns'] / 1e6:.1f} ms")
        elif (pre != "vb" or os.environ.get("CV_BASELINE_CLI")) and (pre != "vn" or os.environ.get("CV_CAL_MIB", "32") != "0") \
                and ("CV_VARIANTS" not in os.environ or pre in os.environ["CV_VARIANTS"].split()):
            # that variant's validate failed: said, and its median below is left out
            print(f"capacity_validate_refused_{n}_{suf} 1 bool")
# The replay against the job it replays, on the same testbed (A, brick 3
# slowed): the as-is case's measured runs against the recorded job's I/O
# time (its extracted trace's slowest rank, as validate measures a run).
for pair in os.environ["CV_RECORDED"].split():
    n, wl = pair.split("=", 1)
    c = case("v", n) if n in names else None
    if c is None or not os.path.exists(wl):
        continue
    per_rank = {}
    for line in open(wl):
        f = line.split()
        if f and f[0] == "r":
            per_rank[f[1]] = per_rank.get(f[1], 0) + int(f[7])
    job, w = max(per_rank.values()), key.get(n, n).split("_", 1)[1]
    print(f"replay_error_percent_{w}_asis {100 * abs(c['measured_io_time_ns'] - job) / job:.1f} %")
    print(f"replay_job_io_time_ms_{w}_asis {job / 1e6:.1f} ms")
if errs:
    print(f"capacity_prediction_error_percent_median {statistics.median(errs):.1f} %")
    for suf, v in alt.items():
        if len(v) == len(errs):
            print(f"capacity_prediction_error_percent_median_{suf} {statistics.median(v):.1f} %")
    print(f"capacity_validated {int(len(errs) == len(names) and max(errs) <= 10)} bool")
PY
