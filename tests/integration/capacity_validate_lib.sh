# Helpers of `siox capacity validate` on the testbed, for
# bench/bench_capacity_validate.sh and tests/integration/test_sys_capacity_validate.sh,
# sourced after lib.sh and sys_lib.sh: record the strided-writes job (one
# shared file; or its segmented form) on a testbed, replay a workload there as a traced job, and
# wait for the warehouse to hold it. Needs SIOX_STRIDED (examples'
# siox-strided-writes) besides sys_lib.sh's variables.
CV_ARGS=(--blocks 16 --block 65536 --repeat 4 --read-back)
CV_CASES=() # the `siox capacity validate` options of each case run so far
CV_NAMES=() # their names
declare -gA CV_DIR # their replay directories, volume-relative

# cv_record JOB [FILE ARG...]: the strided job (4 ranks, one shared file on
# the volume, $MNT/job/FILE, default strided.dat, siox-strided-writes ARGs,
# default CV_ARGS: e.g. the segmented shared-file job with --segmented)
# under siox run, then its workload in $T/JOB.wl.
cv_record() {
  local job=$1 file=${2:-strided.dat}
  local -a args=("${@:3}")
  [ $# -gt 2 ] || args=("${CV_ARGS[@]}")
  mkdir -p "$MNT/job" "$T/tmp-$job"
  cv_quiesce
  TMPDIR="$T/tmp-$job" LD_PRELOAD=$ASAN_RT SIOX_JOB_ID=$job "$SIOX_CLI" run --layers posix,mpi --socket "$SIOX_SOCKET" -- \
    mpirun --oversubscribe -np 4 -x ASAN_OPTIONS "$SIOX_STRIDED" "$MNT/job/$file" "${args[@]}" \
    >"$T/$job.out" 2>&1 || { cat "$T/$job.out" >&2; fail "the job $job failed"; }
  grep -q "siox_strided_writes: ok" "$T/$job.out" || fail "the job $job did not verify its data"
  wait_finalized "$job" 4 300
  wait_links
  wait_settled
  siox_cli workload extract --job "$job" --prefix "$MNT/job/" -o "$T/$job.wl" 2>"$T/$job.extract" \
    || fail "extract failed: $(cat "$T/$job.extract")"
  REC_MNT=$MNT
}

# cv_pick_dir NAME WORKLOAD BRICK: a replay directory $MNT/r-NAME[-I]
# where siox replay's file 0 of WORKLOAD (f0-<its name>) lands on brick
# BRICK (DHT places a file by its name and its directory's layout, which
# starts at a brick given by the directory's path), printed volume-relative.
cv_pick_dir() {
  local name=$1 wl=$2 want=$3 f i d
  f="f0-$(basename "$(awk '$1 == "file" && $2 == 0 { print $3; exit }' "$wl")")"
  for i in $(seq 80); do
    d="r-$name" && [ "$i" = 1 ] || d="r-$name-$i"
    mkdir -p "$MNT/$d" && : >"$MNT/$d/$f" || fail "cannot create $MNT/$d/$f"
    if [ "$(brick_of "$d/$f")" = "$want" ]; then
      rm -f "$MNT/$d/$f"
      echo "$d"
      return
    fi
    rm -f "$MNT/$d/$f" && rmdir "$MNT/$d"
  done
  fail "no directory r-$name-I places $f on brick $want"
}

# cv_quiesce: before a measured or calibrating run, the machine's own
# backlog of the runs before it is gone: the warehouse has stored every
# activity sent (wait_settled: the daemon, siox-server and PostgreSQL
# ingesting the last run's trace took the cores the next run wanted) and
# the dirty pages of the bricks' files and PostgreSQL's are written (sync:
# else the kernel writes them back 30 s later, during some other run).
# CV_QUIESCE=0 leaves it out (the runs back to back, as before).
# capacity/README.md "Reproducible runs".
cv_quiesce() {
  [ "${CV_QUIESCE:-1}" = 1 ] || return 0
  wait_settled
  sync
}

# cv_replay NAME WORKLOAD COPIES SPEC: COPIES concurrent traced replays of
# WORKLOAD into $MNT/r-NAME, CV_REPEAT times (default 1; the replay's files
# removed between repeats, so that each repeat creates them as the first
# did): jobs NAME-1..NAME-COPIES, then NAME-rJ-1..NAME-rJ-COPIES for repeat
# J >= 2; then records the case (scenario SPEC, every job, each repeat's
# copies in a row) for validate. With CV_ON_BRICK=B, the directory is picked
# so that the workload's file 0 lands on brick B (cv_pick_dir). Each mpirun
# has its own TMPDIR: two starting at once once failed in Open MPI's
# orte_init (mkdir /tmp/ompi.HOST.0: File exists). With CV_WARMUP=1
# (default 0) a warm-up repeat runs first, traced as jobs
# NAME-w-1..NAME-w-COPIES like the others but not measured: for a first run
# in a fresh directory, on a freshly started testbed, that would pay a
# transient the recorded job (run on a warm testbed) did not; not seen in
# two sittings (capacity/README.md "The first run of a case"). CV_T0[NAME], CV_T1[NAME]:
# the measured repeats' window (epoch s), for a model calibrated on them (2to4).
declare -gA CV_T0 CV_T1
cv_replay() {
  local name=$1 wl=$2 copies=$3 spec=$4 k j pids=() ranks dir jobs=() job first=1 all=()
  ranks=$(awk '$1 == "ranks" { print $2; exit }' "$wl")
  dir="r-$name"
  [ -z "${CV_ON_BRICK:-}" ] || dir=$(cv_pick_dir "$name" "$wl" "$CV_ON_BRICK")
  mkdir -p "$MNT/$dir"
  [ "${CV_WARMUP:-0}" = 1 ] && first=0
  for j in $(seq "$first" "${CV_REPEAT:-1}"); do
    [ "$j" = "$first" ] || rm -f "$MNT/$dir"/*
    cv_quiesce
    [ "$j" != 1 ] || CV_T0[$name]=$(date +%s)
    pids=()
    for k in $(seq "$copies"); do
      job="$name-$k" && [ "$j" = 1 ] || job="$name-r$j-$k"
      [ "$j" != 0 ] || job="$name-w-$k"
      all+=("$job")
      [ "$j" = 0 ] || jobs+=("$job")
      mkdir -p "$T/tmp-$job"
      TMPDIR="$T/tmp-$job" LD_PRELOAD=$ASAN_RT SIOX_JOB_ID="$job" "$SIOX_CLI" run --layers posix,mpi \
        --socket "$SIOX_SOCKET" -- "$SIOX_CLI" replay "$wl" --dir "$MNT/$dir" \
        --mpirun "mpirun --oversubscribe -x ASAN_OPTIONS" >"$T/replay-$job.out" 2>&1 &
      pids+=($!)
    done
    for k in "${!pids[@]}"; do
      job=${all[$((${#all[@]} - copies + k))]}
      wait "${pids[$k]}" || { cat "$T/replay-$job.out" >&2; fail "replay $job failed"; }
    done
  done
  CV_T1[$name]=$(($(date +%s) + 1))
  for job in "${all[@]}"; do wait_finalized "$job" "$ranks" 300; done
  local -a c=(--case "$name" --scenario "$spec" --workload "$wl" --replay-dir "$MNT/$dir" --run-mount "$MNT")
  for job in "${jobs[@]}"; do c+=(--measured "$job"); done
  CV_CASES+=("${c[@]}")
  CV_NAMES+=("$name")
  CV_DIR[$name]=$dir
  printf '%s\n' "${c[@]}" >"$T/case-$name.args" # one case alone: cv_case_args NAME
  # the warm-up's jobs, not measured (bench/capacity_run_ops.py shows them first)
  if [ "$first" = 0 ]; then printf '%s\n' "${all[@]:0:$copies}" >"$T/case-$name.warmup"; fi
}

# cv_case_args NAME ARRAY: ARRAY gets case NAME's validate options.
cv_case_args() { mapfile -t "$2" <"$T/case-$1.args"; }

# cv_cal_workload OP MIB NAME...: a one-rank workload that does MIB 1 MiB
# OPs (read or write) at offsets 0.. on each file (NAME_k, replayed as
# f<k>-NAME_k), printed. One rank, one brick at a time: each brick's
# requests are measured without the others' competing for the CPU. Reads
# file after file; writes in CV_CAL_ROUNDS rounds (default 4; 1: file after
# file, as before), each writing the next MIB/ROUNDS MiB of every file in
# turn: a brick's writes sampled at several moments of the job, not in one
# burst (capacity/README.md "The healthy reference"). Reads with
# CV_CAL_WAITERS more ranks (default 3) that only wait in a closing
# barrier while rank 0 reads, as the replays' ranks 1-3 wait for rank 0's
# read-back (Open MPI polls in the barrier: the reader's calls then take
# the kernel's part the replays' do; capacity/README.md "The read-back's
# kernel part"); 0: one rank alone, as before.
cv_cal_workload() {
  local op=$1 mib=$2 k i r rounds=1 per waiters=0
  shift 2
  local -a names=("$@")
  [ "$op" = write ] && rounds=${CV_CAL_ROUNDS:-4}
  [ "$op" = read ] && waiters=${CV_CAL_WAITERS:-3}
  [ "$rounds" -ge 1 ] && [ "$rounds" -le "$mib" ] || rounds=1
  per=$(((mib + rounds - 1) / rounds))
  printf 'siox-workload 1 trace\njob cal-%s\nranks %d\n' "$op" $((1 + waiters))
  for k in "${!names[@]}"; do printf 'file %d %s\n' "$k" "${names[$k]}"; done
  if [ "$rounds" = 1 ]; then
    for k in "${!names[@]}"; do
      printf 'r 0 open %d 0 0 0 0\n' "$k"
      for i in $(seq 0 $((mib - 1))); do printf 'r 0 %s %d %d 1048576 0 0\n' "$op" "$k" $((i * 1048576)); done
      printf 'r 0 close %d 0 0 0 0\n' "$k"
    done
  else
    for k in "${!names[@]}"; do printf 'r 0 open %d 0 0 0 0\n' "$k"; done
    for r in $(seq 0 $((rounds - 1))); do
      for k in "${!names[@]}"; do
        for i in $(seq $((r * per)) $(((r + 1) * per - 1))); do
          if [ "$i" -lt "$mib" ]; then printf 'r 0 %s %d %d 1048576 0 0\n' "$op" "$k" $((i * 1048576)); fi
        done
      done
    done
    for k in "${!names[@]}"; do printf 'r 0 close %d 0 0 0 0\n' "$k"; done
  fi
  if [ "$waiters" -gt 0 ]; then
    for r in $(seq 0 "$waiters"); do printf 'r %d barrier - 0 0 0 0\n' "$r"; done
    waiters=$((waiters + 1)) # the rows: one barrier per rank
  fi
  printf 'end %d %d\n' $# $(($# * (mib + 2) + waiters))
}

# cv_calibrate JOB MIB: the calibration job of the healthy bricks
# (capacity/README.md "Calibration job"): one file per brick in $MNT/cal
# (file k named so that DHT puts it on brick k+1), each written in MIB
# calls of 1 MiB by one rank, file after file (replay job JOB-w), its cached pages
# dropped (posix_fadvise DONTNEED: `dd iflag=nocache count=0`), then read
# back in 1 MiB calls (job JOB-r): brick and client reads and writes of the
# workload's size on every brick, traced by SIOX. Without the drop the
# reads would come from the client's page cache and reach no brick.
cv_calibrate() {
  local job=$1 mib=$2 i k f j d=cal
  local -a names=()
  mkdir -p "$MNT/$d"
  for k in $(seq 0 $((BRICKS - 1))); do
    for i in $(seq 80); do
      f="$d/f$k-c$i.dat"
      : >"$MNT/$f" || fail "cannot create $MNT/$f"
      if [ "$(brick_of "$f")" = $((k + 1)) ]; then names+=("c$i.dat") && break; fi
      rm -f "$MNT/$f"
    done
    [ ${#names[@]} = $((k + 1)) ] || fail "no name f$k-cI.dat in $MNT/$d lands on brick $((k + 1))"
  done
  cv_cal_workload write "$mib" "${names[@]}" >"$T/cal-w.wl"
  cv_cal_workload read "$mib" "${names[@]}" >"$T/cal-r.wl"
  for j in w r; do
    cv_quiesce
    if [ $j = r ]; then
      for k in "${!names[@]}"; do dd if="$MNT/$d/f$k-${names[$k]}" iflag=nocache count=0 status=none; done
    fi
    mkdir -p "$T/tmp-$job-$j"
    TMPDIR="$T/tmp-$job-$j" LD_PRELOAD=$ASAN_RT SIOX_JOB_ID="$job-$j" "$SIOX_CLI" run --layers posix,mpi \
      --socket "$SIOX_SOCKET" -- "$SIOX_CLI" replay "$T/cal-$j.wl" --dir "$MNT/$d" \
      --mpirun "mpirun --oversubscribe -x ASAN_OPTIONS" >"$T/replay-$job-$j.out" 2>&1 \
      || { cat "$T/replay-$job-$j.out" >&2; fail "calibration replay $job-$j failed"; }
    wait_finalized "$job-$j" "$(awk '$1 == "ranks" {print $2}' "$T/cal-$j.wl")" 300
  done
}
