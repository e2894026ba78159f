# Helpers of `siox capacity validate` on the testbed, for
# bench/bench_capacity_validate.sh and tests/integration/test_sys_capacity_validate.sh,
# sourced after lib.sh and sys_lib.sh: record the strided-writes job (one
# shared file) on a testbed, replay a workload there as a traced job, and
# wait for the warehouse to hold it. Needs SIOX_STRIDED (examples'
# siox-strided-writes) besides sys_lib.sh's variables.
CV_ARGS=(--blocks 16 --block 65536 --repeat 4 --read-back)
CV_CASES=() # the `siox capacity validate` options of each case run so far
CV_NAMES=() # their names

# cv_record JOB: the strided job (4 ranks, one shared file on the volume)
# under siox run, then its workload in $T/JOB.wl.
cv_record() {
  local job=$1
  mkdir -p "$MNT/job"
  LD_PRELOAD=$ASAN_RT SIOX_JOB_ID=$job "$SIOX_CLI" run --layers posix,mpi --socket "$SIOX_SOCKET" -- \
    mpirun --oversubscribe -np 4 -x ASAN_OPTIONS "$SIOX_STRIDED" "$MNT/job/strided.dat" "${CV_ARGS[@]}" \
    >"$T/$job.out" 2>&1 || { cat "$T/$job.out" >&2; fail "the strided job failed"; }
  grep -q "siox_strided_writes: ok" "$T/$job.out" || fail "the strided job did not verify its data"
  wait_finalized "$job" 4 300
  wait_links
  wait_settled
  siox_cli workload extract --job "$job" --prefix "$MNT/job/" -o "$T/$job.wl" 2>"$T/$job.extract" \
    || fail "extract failed: $(cat "$T/$job.extract")"
  REC_MNT=$MNT
}

# cv_replay NAME WORKLOAD COPIES SPEC: COPIES concurrent traced replays of
# WORKLOAD into $MNT/r-NAME (jobs NAME-1..NAME-COPIES), then records the
# case (scenario SPEC) for validate.
cv_replay() {
  local name=$1 wl=$2 copies=$3 spec=$4 k pids=() ranks
  ranks=$(awk '$1 == "ranks" { print $2; exit }' "$wl")
  mkdir -p "$MNT/r-$name"
  for k in $(seq "$copies"); do
    LD_PRELOAD=$ASAN_RT SIOX_JOB_ID="$name-$k" "$SIOX_CLI" run --layers posix,mpi --socket "$SIOX_SOCKET" -- \
      "$SIOX_CLI" replay "$wl" --dir "$MNT/r-$name" --mpirun "mpirun --oversubscribe -x ASAN_OPTIONS" \
      >"$T/replay-$name-$k.out" 2>&1 &
    pids+=($!)
  done
  for k in "${!pids[@]}"; do
    wait "${pids[$k]}" || { cat "$T/replay-$name-$((k + 1)).out" >&2; fail "replay $name-$((k + 1)) failed"; }
  done
  for k in $(seq "$copies"); do wait_finalized "$name-$k" "$ranks" 300; done
  local -a c=(--case "$name" --scenario "$spec" --workload "$wl" --replay-dir "$MNT/r-$name" --run-mount "$MNT")
  for k in $(seq "$copies"); do c+=(--measured "$name-$k"); done
  CV_CASES+=("${c[@]}")
  CV_NAMES+=("$name")
  printf '%s\n' "${c[@]}" >"$T/case-$name.args" # one case alone: cv_case_args NAME
}

# cv_case_args NAME ARRAY: ARRAY gets case NAME's validate options.
cv_case_args() { mapfile -t "$2" <"$T/case-$1.args"; }
