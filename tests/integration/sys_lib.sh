# Helpers of the system tests (tests/integration/sys.cmake), sourced after
# lib.sh: a SIOX testbed (4 GlusterFS bricks, one slowed, SIOX translators)
# and the MPI workload (examples/siox_io_workload.c) run under `siox run`.
# Needs root and /dev/fuse: the caller exits 77 (skip) otherwise.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_io=romio321
# Under -DSIOX_SANITIZE=ON: OpenMPI, HDF5 and GlusterFS leak at exit; every
# other ASan/UBSan check stays on. The ASan runtime must come first in
# LD_PRELOAD of processes not built with it (mpirun, glusterfs): siox run
# keeps existing entries first.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
ASAN_RT=$(ldd "$SIOX_CLI" | awk '/libasan|libubsan/ {printf "%s%s", sep, $3; sep=":"}')
BRICKS=4 DELAY_US=${DELAY_US:-60000} DELAY_FOPS=WRITE,READ
WL_ARGS=(--rows 32 --cols 512 --steps 2 --block 65536)
TB="" TB_SEQ=0


# sys_start: the stack of a system test, siox-server and a siox-daemon
# batching every 50 ms (as the blame tests and bench/bench_blame.sh run
# them), stopped with the testbed and the test's files on exit.
sys_start() {
  trap 'tb_stop; cleanup' EXIT
  start_server
  start_daemon "" --batch-ms 50
}

tb_stop() { [ -z "$TB" ] || "$SIOX_TESTBED" stop --dir "$TB" >/dev/null 2>&1 || true; }

# tb_start SLOW JOB: a fresh testbed under $T/tbN with brick SLOW slowed
# ($DELAY_US per fop of $DELAY_FOPS). With TB_BRICK_SOCKET set, the bricks
# report to the daemon at that socket.
tb_start() {
  local slow=$1 job=$2 base
  tb_stop
  TB_SEQ=$((TB_SEQ + 1))
  TB="$T/tb$TB_SEQ"
  base=$(free_port_block $BRICKS)
  [ -n "$base" ] || fail "no free ports for the bricks"
  LD_PRELOAD=$ASAN_RT SIOX_JOB_ID=$job "$SIOX_TESTBED" start --dir "$TB" --bricks $BRICKS --slow "$slow" --delay-us "$DELAY_US" --delay-fops "$DELAY_FOPS" \
    --base-port "$base" --client-xlator debug/siox-client --brick-xlator debug/siox-brick \
    --xlator-dir "$SIOX_XLATOR_DIR" ${TB_BRICK_SOCKET:+--brick-socket "$TB_BRICK_SOCKET"} >"$T/testbed.out" 2>&1 || { cat "$T/testbed.out" >&2; fail "testbed did not start"; }
  MNT="$TB/mnt"
}

brick_of() { local n; for n in $(seq $BRICKS); do [ -e "$TB/brick$n/$1" ] && { echo "$n"; return; }; done; echo 0; }

# pick_names PREFIX SUFFIX ARRAY: ARRAY[brick]=name, one file name per brick
# (distribute places a file by the hash of its name).
pick_names() {
  local p=$1 sfx=$2 i f b
  local -n on=$3
  on=()
  for i in $(seq 80); do
    f="$p-$i$sfx"
    : >"$MNT/$f" || fail "cannot create $MNT/$f"
    b=$(brick_of "$f")
    # The picked file stays: the workload truncates it, so it keeps its gfid.
    # (Deleted and created again, its path would map to two gfids and the
    # server would merge their objects; see the report on stale object ids.)
    if [ "$b" != 0 ] && [ -z "${on[$b]:-}" ]; then on[$b]=$f; else rm -f "$MNT/$f"; fi
    [ ${#on[@]} -eq $BRICKS ] && return 0
  done
  fail "80 names did not cover the $BRICKS bricks"
}

# pick_files PREFIX: H5_ON and P_ON (HDF5 and POSIX files, one per brick),
# and one MPI-IO and one stdio file wherever they land.
pick_files() {
  pick_names "$1-h" .h5 H5_ON
  pick_names "$1-p" .posix P_ON
  MPIIO="$1.mpiio"
  STDIO="$1.stdio"
}

# workload_args: the workload's file options for the picked files.
workload_args() {
  local b
  for b in $(seq $BRICKS); do printf -- '--h5\n%s\n' "$MNT/${H5_ON[$b]}"; done
  printf -- '--mpiio\n%s\n' "$MNT/$MPIIO"
  for b in $(seq $BRICKS); do printf -- '--posix\n%s\n' "$MNT/${P_ON[$b]}"; done
  printf -- '--stdio\n%s\n' "$MNT/$STDIO"
}

# slowest_app_write JOB: the slowest POSIX write the application made itself
# (no MPI-IO or HDF5 call above it) to the GlusterFS mount (it sends to the
# file-system client).
slowest_app_write() {
  sql "SELECT a.aid FROM activities a JOIN nodes n USING (node_id) JOIN activity_types t USING (type_id)
       JOIN processes p USING (proc_id)
       WHERE p.job = '$1' AND n.swid = 'POSIX' AND t.name IN ('write', 'pwrite', 'pwrite64', 'writev')
         AND a.parent_aid IS NULL AND EXISTS (SELECT 1 FROM remote_calls r WHERE r.aid = a.aid AND r.kind = 'S')
       ORDER BY a.end_ns - a.start_ns DESC, a.aid LIMIT 1"
}

# run_workload JOB OUT [siox run]: 4 ranks; OUT gets the workload's output.
run_workload() {
  local job=$1 out=$2
  shift 2
  local -a files
  mapfile -t files < <(workload_args)
  # Bounded: OpenMPI's mpirun once hung in its teardown after every rank
  # had exited (a futex wait, ranks defunct). A run that verified its data
  # and then hung is logged and goes on; the caller's checks of what reached
  # the warehouse still hold it to account.
  local rc=0
  LD_PRELOAD=$ASAN_RT SIOX_JOB_ID=$job timeout -k 10 300 "$@" mpirun --oversubscribe -np 4 -x ASAN_OPTIONS \
    "$SIOX_WORKLOAD" "${WL_ARGS[@]}" "${files[@]}" >"$out" 2>&1 || rc=$?
  if [ $rc = 124 ] || [ $rc = 137 ]; then
    grep -q "siox_io_workload: ok" "$out" || { cat "$out" >&2; fail "workload timed out"; }
    log "mpirun hung after the workload verified its data (exit $rc): stopped by timeout"
  elif [ $rc != 0 ]; then
    cat "$out" >&2
    fail "workload failed"
  fi
  grep -q "siox_io_workload: ok" "$out" || fail "workload did not verify its data"
}

# traced_job JOB TAG: the workload on files picked under TAG, under
# `siox run` with the POSIX, MPI-IO and HDF5 layers (output in $T/job.out),
# then waits until its ranks finalized, its links are made and the
# warehouse settled.
traced_job() {
  pick_files "$2"
  run_workload "$1" "$T/job.out" "$SIOX_CLI" run --layers posix,mpi,hdf5 --socket "$SIOX_SOCKET" --
  wait_finalized "$1" 4
  wait_links
  wait_settled
}

# wait_finalized JOB N [SECONDS]: waits until the job's N MPI_Finalize
# activities are in (at most SECONDS, default 60).
wait_finalized() {
  local q="SELECT count(*) FROM activities a JOIN activity_types t USING (type_id) JOIN processes p USING (proc_id)
           WHERE t.name = 'MPI_Finalize' AND p.job = '$1'"
  for _ in $(seq $((${3:-60} * 5))); do [ "$(sql "$q" 2>/dev/null || echo 0)" -ge "$2" ] && return 0; sleep 0.2; done
  fail "the job's $2 MPI_Finalize activities did not reach the warehouse"
}

# wait_links: until the number of implicit links has not grown for 3 s (the
# server matches remote calls every 500 ms as batches arrive, and links a
# receive whose send comes up to 2 s late: --match-ms, --late-ms). One quiet
# second was not enough: a call blamed before its link was made reaches no
# component (class none).
wait_links() {
  local n=-1 m quiet=0
  for _ in $(seq 90); do
    m=$(sql "SELECT count(*) FROM causal_links")
    if [ "$m" = "$n" ]; then quiet=$((quiet + 1)); else quiet=0; fi
    [ $quiet -ge 3 ] && return 0
    n=$m
    sleep 1
  done
}

# blames_brick AID SLOW WHAT: `siox blame AID --json` (into $T/blame-AID.json)
# must name brick SLOW, the slowed one, as the culprit; else prints blame's
# text and fails, calling the call WHAT (e.g. "pwrite").
blames_brick() {
  local culprit
  siox_cli blame "$1" --json >"$T/blame-$1.json" || fail "siox blame $1 failed"
  culprit=$(json_get "$T/blame-$1.json" '(j.get("culprit") or {}).get("hwid", "-") + "/" + (j.get("culprit") or {}).get("swid", "-")')
  [ "$culprit" = "brick$2:$TB/brick$2/GlusterFS-brick" ] ||
    { siox_cli blame "$1" >&2; fail "blame of $3 $1 named '$culprit', brick $2 was slowed"; }
}
