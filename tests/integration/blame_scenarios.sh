# Blame scenarios on the GlusterFS testbed (issue 10), sourced after lib.sh
# and sys_lib.sh by tests/integration/test_sys_blame_waiting.sh (one round)
# and bench/bench_blame.sh (N rounds). Each scenario_X ROUND runs a job,
# asks `siox blame --json` about its slowest call and sets OUTCOME to
# correct, wrong (a healthy component named), no-verdict or miss (another
# answer), with WHY for the log. The slowed brick ($SLOW) and the files'
# placement are random per round.

# files_on BRICK K PREFIX ARRAY: K new files on brick BRICK (names chosen by
# distribute's hash: tried until K land there).
files_on() {
  local _want=$1 _k=$2 _p=$3 _i _nm
  local -n fo=$4
  fo=()
  for _i in $(seq 400); do
    _nm="$_p-$RANDOM-$_i"
    : >"$MNT/$_nm" || fail "cannot create $MNT/$_nm"
    if [ "$(brick_of "$_nm")" = "$_want" ]; then fo+=("$_nm"); else rm -f "$MNT/$_nm"; fi
    [ ${#fo[@]} -ge "$_k" ] && return 0
  done
  fail "400 names did not give $_k files on brick $_want"
}

# dd_job JOB FILE BS COUNT: one instrumented writer (O_DIRECT: every write
# reaches the brick).
dd_job() {
  LD_PRELOAD=$ASAN_RT SIOX_JOB_ID=$1 "$SIOX_CLI" run --layers posix --socket "$SIOX_SOCKET" -- \
    dd if=/dev/zero of="$MNT/$2" bs="$3" count="$4" oflag=direct status=none
}

# wait_job JOB N: until N processes of JOB have sent their last activity.
wait_job() {
  local n=-1 m
  for _ in $(seq 60); do
    m=$(sql "SELECT count(*) FROM activities a JOIN processes p USING (proc_id) WHERE p.job = '$1'")
    [ "$m" = "$n" ] && [ "$m" -gt 0 ] && break
    n=$m
    sleep 0.5
  done
  wait_links
}

# slowest JOB SWID NAMES: the job's slowest activity of the layer and names.
slowest() {
  sql "SELECT a.aid FROM activities a JOIN nodes n USING (node_id) JOIN activity_types t USING (type_id)
       JOIN processes p USING (proc_id)
       WHERE p.job = '$1' AND n.swid = '$2' AND t.name IN ($3) AND a.parent_aid IS NULL
       ORDER BY a.end_ns - a.start_ns DESC, a.aid LIMIT 1"
}

# slowest_waiting JOB SWID NAMES: as slowest, among the calls that made no
# POSIX I/O themselves (within two explicit levels): the ranks that are not
# ROMIO's aggregator in a collective write.
slowest_waiting() {
  sql "SELECT a.aid FROM activities a JOIN nodes n USING (node_id) JOIN activity_types t USING (type_id)
       JOIN processes p USING (proc_id)
       WHERE p.job = '$1' AND n.swid = '$2' AND t.name IN ($3) AND a.parent_aid IS NULL
         AND NOT EXISTS (SELECT 1 FROM activities c JOIN nodes cn ON cn.node_id = c.node_id
                         WHERE c.parent_aid = a.aid AND cn.swid = 'POSIX')
         AND NOT EXISTS (SELECT 1 FROM activities c JOIN activities g ON g.parent_aid = c.aid
                         JOIN nodes gn ON gn.node_id = g.node_id WHERE c.parent_aid = a.aid AND gn.swid = 'POSIX')
       ORDER BY a.end_ns - a.start_ns DESC, a.aid LIMIT 1"
}

# judge_collective JOB SWID NAMES EXPECT: a collective write's job is judged
# on its slowest call and on its slowest waiting call (slowest_waiting: a
# rank whose data the aggregator wrote); OUTCOME is the first that is not
# correct, else correct.
judge_collective() {
  local first second why1
  first=$(slowest "$1" "$2" "$3")
  second=$(slowest_waiting "$1" "$2" "$3")
  judge "$first" "$4"
  why1=$WHY
  [ "$OUTCOME" = correct ] || return 0
  [ -n "$second" ] || { OUTCOME=miss WHY="$why1; no rank waited for an aggregator"; return 0; }
  [ "$second" = "$first" ] && return 0
  judge "$second" "$4"
  WHY="$why1; waiting rank: $WHY"
}

BLAME_MS=() # wall time of each `siox blame` (ms), for the bench

# judge AID EXPECT [JOB]: blame AID; EXPECT is "brick N", "none" (no
# component may be named) or "interference JOB".
judge() {
  local aid=$1 expect=$2 out="$T/blame-$1.json" got cls
  [ -n "$aid" ] || { OUTCOME=miss WHY="no call to blame"; return; }
  local t0 t1
  t0=$(date +%s%N)
  siox_cli blame "$aid" --json >"$out" || fail "siox blame $aid failed"
  t1=$(date +%s%N)
  BLAME_MS+=($(((t1 - t0) / 1000000)))
  got=$(json_get "$out" '(j.get("culprit") or {}).get("hwid", "-")')
  cls=$(json_get "$out" 'j["class"] + " " + j["decided_by"] + " " + ",".join(j["interfering_jobs"])')
  WHY="blame $aid: culprit $got, class $cls"
  case $expect in
  brick*)
    if [ "$got" = "brick${expect#brick }:$TB/brick${expect#brick }" ]; then OUTCOME=correct
    elif [ "$got" != - ]; then OUTCOME=wrong
    elif [ "${cls%% *}" = none ]; then OUTCOME=no-verdict
    else OUTCOME=miss; fi ;;
  none)
    if [ "$got" != - ]; then OUTCOME=wrong
    elif [ "${cls%% *}" = none ]; then OUTCOME=no-verdict
    else OUTCOME=correct; fi ;;
  interference*)
    if [ "$got" != - ]; then OUTCOME=wrong
    elif [[ "$cls" == interference*"${expect#interference }"* ]]; then OUTCOME=correct
    elif [ "${cls%% *}" = none ]; then OUTCOME=no-verdict
    else OUTCOME=miss; fi ;;
  esac
  [ "$OUTCOME" = correct ] || siox_cli blame "$aid" >"$T/blame-$aid.txt" 2>&1 || true
}

# round_start ROUND SLOW: a fresh testbed (bricks and client without a job,
# as on a shared system) and a warm-up job writing to every brick: the
# history the kind's latency model learns from.
round_start() {
  SLOW=$2
  tb_start "$SLOW" ""
  local -a wf
  local b
  for b in $(seq $BRICKS); do
    files_on "$b" 1 "$1-warm$b" wf
    dd_job "$1-warm" "${wf[0]}" 256k 8
  done
  # Not waited for: the scenario's own wait_job comes later, and the
  # warm-up's activities reach the warehouse first.
}

# random_round ROUND: round_start with a random slowed brick, logged.
random_round() {
  round_start "$1" $((RANDOM % BRICKS + 1))
  log "brick $SLOW slowed by $DELAY_US us"
}

# (a) file per process, one slowed brick: 4 writers, one file on each brick.
scenario_a() {
  local job="$1-a" b pids=() f
  for b in $(seq $BRICKS); do
    files_on "$b" 1 "$1-a$b" f
    dd_job "$job" "${f[0]}" 256k 4 &
    pids+=($!)
  done
  wait "${pids[@]}"
  wait_job "$job"
  judge "$(slowest "$job" POSIX "'write'")" "brick $SLOW"
}

# (b) one shared file on the slowed brick, 4 MPI ranks writing 256 KiB each
# with independent MPI-IO writes.
scenario_b() {
  local job="$1-b" f
  files_on "$SLOW" 1 "$1-b" f
  LD_PRELOAD=$ASAN_RT SIOX_JOB_ID=$job "$SIOX_CLI" run --layers posix,mpi --socket "$SIOX_SOCKET" -- \
    mpirun --oversubscribe -np 4 -x ASAN_OPTIONS "$SIOX_STRIDED" "$MNT/${f[0]}" --blocks 1 --block 262144 \
    --repeat 4 --info romio_ds_write=disable --no-verify >"$T/$job.out" 2>&1 || { cat "$T/$job.out" >&2; fail "$job failed"; }
  wait_finalized "$job" 4
  wait_job "$job"
  judge "$(slowest "$job" MPI-IO "'MPI_File_write'")" "brick $SLOW"
}

# (c) as (b) with collective writes (MPI_File_write_all): ROMIO's two-phase
# I/O, where an aggregator rank makes the pwrites for all four; the other
# ranks' write_all wait for it in MPI communication, with no I/O below
# them. Blamed: the job's slowest write_all, and the slowest of a rank
# that only waited (judge_collective).
scenario_c() {
  local job="$1-c" f
  files_on "$SLOW" 1 "$1-c" f
  LD_PRELOAD=$ASAN_RT SIOX_JOB_ID=$job "$SIOX_CLI" run --layers posix,mpi --socket "$SIOX_SOCKET" -- \
    mpirun --oversubscribe -np 4 -x ASAN_OPTIONS "$SIOX_STRIDED" "$MNT/${f[0]}" --blocks 1 --block 262144 \
    --repeat 4 --collective --info romio_cb_write=enable --no-verify >"$T/$job.out" 2>&1 ||
    { cat "$T/$job.out" >&2; fail "$job failed"; }
  wait_finalized "$job" 4 300
  wait_job "$job"
  judge_collective "$job" MPI-IO "'MPI_File_write_all'" "brick $SLOW"
}

# (d) as (b) and (c) with HDF5 on top: 4 ranks write 256 KiB each of one
# dataset with one collective H5Dwrite (hdf5_parallel_write) to a file on
# the slowed brick; blame's path runs H5Dwrite -> MPI_File_write_at_all ->
# pwrite -> the brick. Blamed: the job's slowest H5Dwrite, and the slowest
# of a rank that only waited (judge_collective).
scenario_d() {
  local job="$1-d" f
  files_on "$SLOW" 1 "$1-d" f
  # The ranks' rows do not interleave: ROMIO would let each rank write its
  # own (as in (b)) unless told to buffer collectively (ROMIO_HINTS).
  echo "romio_cb_write enable" >"$T/romio-hints"
  LD_PRELOAD=$ASAN_RT SIOX_JOB_ID=$job ROMIO_HINTS=$T/romio-hints "$SIOX_CLI" run --layers posix,mpi,hdf5 \
    --socket "$SIOX_SOCKET" -- mpirun --oversubscribe -np 4 -x ASAN_OPTIONS -x ROMIO_HINTS \
    "$SIOX_HDF5_WRITER" "$MNT/${f[0]}" 256 128 >"$T/$job.out" 2>&1 ||
    { cat "$T/$job.out" >&2; fail "$job failed"; }
  wait_finalized "$job" 4 300
  wait_job "$job"
  judge_collective "$job" HDF5 "'H5Dwrite'" "brick $SLOW"
}

# (e) a job whose files all sit on the slowed brick, alone on the system
# (no peers in the job or the window): the kind's model or the baseline.
scenario_e() {
  local job="$1-e" f
  sleep 11 # nothing else within blame's default peer window (+/- 10 s)
  files_on "$SLOW" 2 "$1-e" f
  dd_job "$job" "${f[0]}" 256k 4
  dd_job "$job" "${f[1]}" 64k 4
  wait_job "$job"
  judge "$(slowest "$job" POSIX "'write'")" "brick $SLOW"
}

# (f) interference: job B writes heavily to a healthy brick while job A's
# small writes to it wait: interference naming B, never a fault. B's four
# writers write 320 MiB each, seconds of writing however fast the machine
# is: 48 MiB each finished before A's first write on a quiet machine, and
# A's writes then waited for nothing.
scenario_f() {
  local a="$1-fA" b="$1-fB" h f pids=() i
  h=$(((SLOW % BRICKS) + 1 + RANDOM % (BRICKS - 1)))
  h=$(((h - 1) % BRICKS + 1))
  files_on "$h" 5 "$1-f" f
  for i in 1 2 3 4; do dd_job "$b" "${f[$i]}" 1M 320 & pids+=($!); done
  sleep 0.3
  dd_job "$a" "${f[0]}" 4k 64
  wait "${pids[@]}"
  wait_job "$b"
  wait_job "$a"
  judge "$(slowest "$a" POSIX "'write'")" "interference $b"
}

# (h) no fault, several jobs: a file-per-process job on every healthy brick
# and a 2-writer job of 64 KiB blocks on two of them; nothing may be named.
# On a testbed without a slowed brick, or on the bricks other than $SLOW.
scenario_h() {
  local j1="$1-h1" j2="$1-h2" b f g pids=() healthy=()
  for b in $(seq $BRICKS); do [ "$b" = "${SLOW:-0}" ] || healthy+=("$b"); done
  for b in "${healthy[@]}"; do
    files_on "$b" 1 "$1-h1$b" f
    dd_job "$j1" "${f[0]}" 1M 16 &
    pids+=($!)
  done
  files_on "${healthy[0]}" 1 "$1-h2x" f
  files_on "${healthy[1]}" 1 "$1-h2y" g
  dd_job "$j2" "${f[0]}" 64k 64 &
  pids+=($!)
  dd_job "$j2" "${g[0]}" 64k 64 &
  pids+=($!)
  wait "${pids[@]}"
  wait_job "$j1"
  wait_job "$j2"
  judge "$(slowest "$j2" POSIX "'write'")" none
}

# (g) a slow metadata path: the slowed brick delays LOOKUP, CREATE and OPEN
# (the caller starts the round with DELAY_FOPS=$META_FOPS). One process
# creates 24 files with random names (distribute spreads them: some land on
# the slowed brick), closes them, and after the entry cache expired opens
# each again. OUTCOME: blame of its slowest open of an existing file (a
# LOOKUP and an OPEN, both linked) -> the slowed brick. CREAT_OUTCOME: the
# same for its slowest creat, whose lookups of the new name link to nothing
# (no gfid yet): the slowed brick, or an honest no verdict, never a healthy
# component.
META_FOPS=LOOKUP,CREATE,OPEN
CREAT_OUTCOME=""

# slowest_open JOB CREAT: the job's slowest POSIX open with O_CREAT (1) or
# without it (0). (The CASE: the planner may cast other attributes' values.)
slowest_open() {
  sql "SELECT a.aid FROM activities a JOIN nodes n USING (node_id) JOIN activity_types t USING (type_id)
       JOIN processes p USING (proc_id) JOIN activity_attributes f ON f.aid = a.aid AND f.name = 'io/flags'
       WHERE p.job = '$1' AND n.swid = 'POSIX' AND t.name IN ('open', 'open64', 'openat', 'openat64', 'creat', 'creat64')
         AND a.parent_aid IS NULL
         AND ((CASE WHEN f.name = 'io/flags' AND f.value ~ '^[0-9]+\$' THEN f.value::bigint ELSE 0 END & 64) <> 0) = ($2 = 1)
       ORDER BY a.end_ns - a.start_ns DESC, a.aid LIMIT 1"
}

scenario_g() {
  local job="$1-g" i
  local -a names=()
  for i in $(seq 24); do names+=("$MNT/$1-g-$RANDOM-$i"); done
  sleep 1.2 # the warm-up's entries expire: each open below asks the bricks
  LD_PRELOAD=$ASAN_RT SIOX_JOB_ID=$job "$SIOX_CLI" run --layers posix --socket "$SIOX_SOCKET" -- \
    bash -c 'for f; do : >"$f" || exit 1; done; sleep 1.2; for f; do exec 3<"$f" && exec 3<&- || exit 1; done' \
    g "${names[@]}" || fail "$job failed"
  wait_job "$job"
  judge "$(slowest_open "$job" 1)" "brick $SLOW"
  CREAT_OUTCOME="$OUTCOME: $WHY"
  echo "# (g) slowest creat: $CREAT_OUTCOME" >&2
  judge "$(slowest_open "$job" 0)" "brick $SLOW"
}
