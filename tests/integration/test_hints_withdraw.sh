#!/usr/bin/env bash
# A harmful hint set is measured and withdrawn by itself (issue 11), on the
# GlusterFS testbed: 4 bricks with the SIOX client and brick translators, a
# real siox-server (no analysis thread: the test analyses each job itself)
# and siox-daemon, 4 ranks of siox-strided-writes --collective (romio321,
# collective 4 KiB blocks interleaved in one shared file, 128 per rank) with libsiox-mpi
# and libsiox-posix preloaded.
#   - set P ({"romio_cb_write": "enable"}) is the application's live set;
#   - runs plain-1, plain-2 without hints (SIOX_HINTS=0);
#   - set H ({"cb_nodes": "1", "cb_buffer_size": "4096", ...}) supersedes P:
#     one aggregator writing 4 KiB per two-phase round, on a workload ROMIO
#     served with 256 KiB operations;
#   - run hinted-1 (SIOX_HINTS=1) opens with H (mpi/hint_set), is analysed:
#     H must be measured slower (the whole interval below 1), withdrawn,
#     with its outcome kept, and P live again;
#   - run after-1 (SIOX_HINTS=1) opens with P: mpi/hint_set = P, and
#     MPI_File_get_info no longer shows cb_buffer_size 4096;
#   - `siox hints --app` shows H WITHDRAWN with its measured speedup.
# Needs root and /dev/fuse (exits 77, a ctest skip, otherwise).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kb_delivery_lib.sh"
skip_unless_fuse_testbed
BRICKS=4
TB="$T/tb"
trap '"$SIOX_TESTBED" stop --dir "$TB" >/dev/null 2>&1 || true; cleanup' EXIT

start_server --no-analyze
start_daemon "" --batch-ms 50 --hints-ttl 1
wait_uplink 1
base=$(free_port_block $BRICKS)
[ -n "$base" ] || fail "no free ports for the bricks"
LD_PRELOAD=$ASAN_RT SIOX_JOB_ID=withdraw-testbed "$SIOX_TESTBED" start --dir "$TB" --bricks $BRICKS --base-port "$base" \
  --client-xlator debug/siox-client --brick-xlator debug/siox-brick --xlator-dir "$SIOX_XLATOR_DIR" \
  >"$T/testbed.out" 2>&1 || { cat "$T/testbed.out" >&2; fail "testbed did not start"; }
FILE="$TB/mnt/coll.dat"
REPEAT=8
export SIOX_HINTS_TIMEOUT_MS=3000 # a loaded machine: a timed-out query applies nothing
# 128 blocks: 2 MiB per collective call, 512 two-phase rounds of 4 KiB under
# the harmful set against one of 2 MiB without it. With 16 (256 KiB a call)
# the harm was within the plain runs' spread on a quiet machine: plain 18
# and 75 ms, hinted 96 ms, interval [0.14, 1.12], not withdrawn. With 64,
# plain runs took 44-275 ms, hinted ones 350-700 ms (interval up to 0.86).
WL=(--collective --blocks 128 --repeat $REPEAT --no-verify)
ARGS="$SIOX_STRIDED $FILE --print-info ${WL[*]}"
PATTERN=$(kb_pattern "$FILE")

# wait_calls JOB: until the job's RANKS x REPEAT MPI_File_write_all calls are in.
wait_calls() {
  local q="SELECT count(*) FROM activities a JOIN activity_types t USING (type_id) JOIN processes p USING (proc_id)
           WHERE t.name = 'MPI_File_write_all' AND p.job = '$1'"
  for _ in $(seq 300); do [ "$(sql "$q" 2>/dev/null || echo 0)" -ge $((RANKS * REPEAT)) ] && return 0; sleep 0.2; done
  fail "the MPI_File_write_all calls of job $1 did not reach the warehouse"
}
run_job() { # JOB HINTS
  SIOX_HINTS=$2 JOB=$1 strided "$T/$1.out" "$FILE" "${WL[@]}"
  wait_opens "$1"
  wait_calls "$1"
  log "$1: $(grep io_time_s "$T/$1.out")"
}
col() { sql "SELECT $1 FROM kb_hint_sets WHERE hint_set_id = $2"; }

prev=$(insert_hint_set "$SIOX_STRIDED" "$ARGS" "$PATTERN" '{"romio_cb_write": "enable"}')
run_job plain-1 0
run_job plain-2 0
harm=$(insert_hint_set "$SIOX_STRIDED" "$ARGS" "$PATTERN" \
  '{"cb_nodes": "1", "cb_buffer_size": "4096", "romio_cb_write": "enable", "romio_cb_read": "enable"}')
sql "UPDATE kb_hint_sets SET superseded = true WHERE hint_set_id = $prev" >/dev/null
sql "UPDATE kb_hint_sets SET previous_set_id = $prev WHERE hint_set_id = $harm" >/dev/null
log "previous set $prev, harmful set $harm"

sleep 1.2 # the daemon's hint cache TTL
run_job hinted-1 1
[ "$(open_attr hinted-1 mpi/hint_set | sort -u)" = "$harm" ] ||
  fail "hinted-1 opens recorded set(s) '$(open_attr hinted-1 mpi/hint_set | sort -u | tr '\n' ' ')' (status $(open_attr hinted-1 mpi/hints_status | sort -u | tr '\n' ' ')), not $harm"
[ "$(info_of "$T/hinted-1.out" cb_buffer_size)" = 4096 ] || fail "hinted-1 did not run with cb_buffer_size 4096"

siox_cli hints --job hinted-1 --analyze >"$T/analyze.txt" 2>&1 || { cat "$T/analyze.txt" >&2; fail "siox hints --analyze failed"; }
log "outcome of set $harm: $(col "status || ' ' || outcome::text" "$harm")"
[ "$(col status "$harm")" = withdrawn ] || fail "set $harm was not withdrawn: $(col "status || ' ' || coalesce(outcome::text, '')" "$harm")"
[ "$(col "outcome->>'verdict'" "$harm")" = slower ] || fail "set $harm not measured slower"
[ "$(col "(outcome->>'ci_high')::float8 < 1" "$harm")" = t ] || fail "the interval of set $harm reaches 1"
[ "$(col "outcome->>'runs_without'" "$harm")" = 2 ] || fail "set $harm was not compared with the 2 plain runs"
[ "$(col "superseded" "$prev")" = f ] || fail "the previous set $prev is not live again"
[ "$(sql "SELECT count(*) FROM kb_findings WHERE job = 'hinted-1' AND kind = 'hint_set_withdrawn'")" = 1 ] ||
  fail "no hint_set_withdrawn finding for hinted-1"

sleep 1.2 # the daemon's hint cache TTL: the next open asks again
run_job after-1 1
[ "$(open_attr after-1 mpi/hint_set | sort -u)" = "$prev" ] ||
  fail "after-1 opens recorded set(s) '$(open_attr after-1 mpi/hint_set | sort -u | tr '\n' ' ')' (status $(open_attr after-1 mpi/hints_status | sort -u | tr '\n' ' ')), not the previous $prev"
[ "$(info_of "$T/after-1.out" cb_buffer_size)" != 4096 ] || fail "after-1 still ran with cb_buffer_size 4096"

siox_cli hints --app "$SIOX_STRIDED" >"$T/app.txt" 2>&1 || fail "siox hints --app failed"
grep -q "Hint set $harm .*(WITHDRAWN)" "$T/app.txt" || { cat "$T/app.txt" >&2; fail "--app does not show set $harm withdrawn"; }
grep -A3 "Hint set $harm " "$T/app.txt" | grep -q "measured: speedup .*SLOWER" ||
  { cat "$T/app.txt" >&2; fail "--app does not show the measured slowdown"; }
siox_cli hints --app "$SIOX_STRIDED" --export romio >"$T/export.txt" 2>/dev/null || fail "--export failed"
grep -q "cb_buffer_size 4096" "$T/export.txt" && fail "the withdrawn set was exported"
grep -A4 "Hint set $harm " "$T/app.txt" >&2
log "ok"
