#!/usr/bin/env bash
# `siox hints` and siox-server's analysis thread on real data (issue 4 items
# 2 and 3), without the GlusterFS testbed: 4 ranks of siox-strided-writes
# (romio321, libsiox-mpi + libsiox-posix preloaded) on /dev/shm in the sparse
# layout (4 KiB blocks 1 MiB apart), where ROMIO's default data sieving reads
# and writes back a 512 KiB window per block.
#   - the server (--analyze-idle 1) analyses the ended job by itself: a
#     kb_analysis_runs row, a data_sieving_write finding whose evidence
#     counts every MPI_File_write as sieved, and a live romio321 set for the
#     file's pattern that disables data sieving, with a rationale;
#   - `siox hints --job J` text and --json show the same; --export romio
#     writes "romio_ds_write disable"; --app EXE shows the live set;
#   - usage errors exit 2, an unknown job exits 1.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kb_delivery_lib.sh"
[ -n "${SIOX_POSIX_LIB:-}" ] || fail "libsiox-posix is not built (SIOX_POSIX_LIB unset)"
D=/dev/shm/siox-kbh.$$
mkdir -p "$D"
trap 'rm -rf "$D"; cleanup' EXIT
BLOCKS=16 REPEAT=4

start_server --analyze-idle 1 --analyze-every 3600
start_daemon "" --batch-ms 50
wait_uplink 1

log "the sparse workload"
JOB=hints-sparse strided "$T/run.out" "$D/out.7.dat" --blocks $BLOCKS --repeat $REPEAT --stride 1048576
wait_opens hints-sparse

log "the analysis thread analyses the ended job"
q="SELECT count(*) FROM kb_hint_sets JOIN kb_apps USING (app_id) WHERE source_job = 'hints-sparse'
   AND NOT superseded AND exe = '$SIOX_STRIDED' AND file_pattern = '$(kb_pattern "$D/out.7.dat")' AND component = 'romio321'"
for _ in $(seq 150); do [ "$(sql "$q")" -ge 1 ] && break; sleep 0.2; done
[ "$(sql "$q")" -eq 1 ] || fail "no live hint set for $(kb_pattern "$D/out.7.dat") from the analysis thread ($(sql "SELECT * FROM kb_analysis_runs"))"
# All writes of the job are in once their rows are; a later analysis (new
# rows) may still replace the first: wait until the job is fully analysed.
for _ in $(seq 150); do
  [ "$(sql "SELECT count(*) FROM kb_analysis_runs WHERE job = 'hints-sparse' AND analysed_end_ns >= seen_end_ns")" = 1 ] &&
    [ "$(sql "SELECT coalesce((evidence->>'calls_sieved')::int, 0) FROM kb_findings WHERE job = 'hints-sparse'
              AND kind = 'data_sieving_write'")" = $((RANKS * REPEAT)) ] && break
  sleep 0.2
done
[ "$(sql "SELECT (evidence->>'calls_sieved')::int FROM kb_findings WHERE job = 'hints-sparse' AND kind = 'data_sieving_write'")" \
  = $((RANKS * REPEAT)) ] || fail "the finding does not count every MPI_File_write as sieved"
[ "$(sql "SELECT hints->>'romio_ds_write' FROM kb_hint_sets WHERE source_job = 'hints-sparse' AND NOT superseded")" = disable ] ||
  fail "the analysis did not disable data sieving for the sparse layout"
[ "$(sql "SELECT expected_gain_s > 0 FROM kb_hint_sets WHERE source_job = 'hints-sparse' AND NOT superseded")" = t ] ||
  fail "no expected gain"

log "siox hints --job: text, --json, --export romio"
siox_cli hints --job hints-sparse >"$T/hints.txt" || fail "siox hints --job failed"
grep -q "data_sieving_write" "$T/hints.txt" || fail "text lacks the finding: $(cat "$T/hints.txt")"
grep -q "romio_ds_write *disable" "$T/hints.txt" || fail "text lacks the hint: $(cat "$T/hints.txt")"
grep -q "because .*pwrite per piece predicted" "$T/hints.txt" || fail "text lacks the rationale"
siox_cli hints --job hints-sparse --json >"$T/hints.json" || fail "siox hints --json failed"
[ "$(json_get "$T/hints.json" 'j["hint_sets"][0]["hints"]["romio_ds_write"]')" = disable ] || fail "json hint_sets"
[ "$(json_get "$T/hints.json" '[f["kind"] for f in j["findings"]].count("data_sieving_write")')" = 1 ] || fail "json findings"
[ "$(json_get "$T/hints.json" '[f for f in j["findings"] if f["kind"] == "data_sieving_write"][0]["hint_set_id"] == j["hint_sets"][0]["hint_set_id"]')" = True ] ||
  fail "the finding does not name its hint set"
siox_cli hints --job hints-sparse --export romio --output "$T/romio.hints" || fail "--export romio failed"
[ "$(cat "$T/romio.hints")" = "romio_ds_write disable" ] || fail "ROMIO hints file: $(cat "$T/romio.hints")"
siox_cli hints --app "$SIOX_STRIDED" --json >"$T/app.json" || fail "siox hints --app failed"
[ "$(json_get "$T/app.json" 'j["hint_sets"][0]["source_job"]')" = hints-sparse ] || fail "--app does not show the set"

log "--analyze replaces the job's findings (same count) and keeps the unchanged set (same id)"
n=$(sql "SELECT count(*) FROM kb_findings WHERE job = 'hints-sparse'")
live="SELECT hint_set_id FROM kb_hint_sets WHERE source_job = 'hints-sparse' AND NOT superseded"
set_before=$(sql "$live")
siox_cli hints --job hints-sparse --analyze --json >"$T/again.json" || fail "--analyze failed"
[ "$(sql "SELECT count(*) FROM kb_findings WHERE job = 'hints-sparse'")" = "$n" ] || fail "findings were not replaced"
[ "$(sql "$live")" = "$set_before" ] ||
  fail "a re-analysis with the same advice replaced set $set_before by '$(sql "$live" | tr '\n' ' ')'"

log "errors"
rc=0; siox_cli hints --job no-such-job >/dev/null 2>"$T/err" || rc=$?
[ $rc -eq 1 ] && grep -q "no job 'no-such-job'" "$T/err" || fail "unknown job: exit $rc, $(cat "$T/err")"
rc=0; siox_cli hints --analyze --app x >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "--analyze without --job: exit $rc"
rc=0; siox_cli hints --job a --export csv >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "--export csv: exit $rc"
siox_cli hints --help >"$T/hints_help.txt" || fail "--help exit status"
grep -q "^SYNOPSIS" "$T/hints_help.txt" || fail "--help" # a file: grep -q on a pipe may SIGPIPE a long page
log "ok"
