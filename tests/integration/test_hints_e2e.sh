#!/usr/bin/env bash
# The whole hint loop on the GlusterFS testbed (issue 4 item 4, test d):
# 4 bricks (none slowed) with the SIOX client and brick translators, a real
# siox-server and siox-daemon, 4 ranks of siox-strided-writes (romio321) on
# the FUSE mount with libsiox-mpi + libsiox-posix preloaded, in the SPARSE
# layout where the hints matter: each rank's 4 KiB blocks 1 MiB apart (a
# column of a large row-major array), so ROMIO's default data sieving reads
# and writes back a 512 KiB window per 4 KiB block.
#   run 1 (job e2e-run1, no hints): `siox hints --job e2e-run1 --analyze`
#          must store a live romio321 hint set for the workload's file
#          pattern, computed from that job (source_job), that disables data
#          sieving (the cost model fitted to run 1's POSIX operations
#          predicts one pwrite per block to be cheaper).
#   run 2 (job e2e-run2, SIOX_HINTS=1): MPI_File_get_info shows every key
#          of that set with its value, every open records hints_status
#          "applied", the set's id and the same keys in hints_applied, and
#          SIOX's POSIX layer shows the hint took effect: run 2's
#          MPI_File_write calls made one pwrite per block and no reads,
#          where run 1's read and wrote back windows.
# Needs root and /dev/fuse (exits 77, a ctest skip, otherwise), and the
# analyses of siox_kb_analyze_job (siox hints --analyze).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kb_delivery_lib.sh"
skip_unless_fuse_testbed
BRICKS=4
TB="$T/tb"
trap '"$SIOX_TESTBED" stop --dir "$TB" >/dev/null 2>&1 || true; cleanup' EXIT

start_server
start_daemon "" --batch-ms 50 --hints-ttl 1
wait_uplink 1
base=$(free_port_block $BRICKS)
[ -n "$base" ] || fail "no free ports for the bricks"
LD_PRELOAD=$ASAN_RT SIOX_JOB_ID=e2e-testbed "$SIOX_TESTBED" start --dir "$TB" --bricks $BRICKS --base-port "$base" \
  --client-xlator debug/siox-client --brick-xlator debug/siox-brick --xlator-dir "$SIOX_XLATOR_DIR" \
  >"$T/testbed.out" 2>&1 || { cat "$T/testbed.out" >&2; fail "testbed did not start"; }
FILE="$TB/mnt/strided.dat"
BLOCKS=16 REPEAT=4
WL=(--blocks $BLOCKS --repeat $REPEAT --stride 1048576)

# wait_writes JOB: until the job's RANKS x REPEAT MPI_File_write calls are in.
wait_writes() {
  local q="SELECT count(*) FROM activities a JOIN activity_types t USING (type_id) JOIN processes p USING (proc_id)
           WHERE t.name = 'MPI_File_write' AND p.job = '$1'"
  for _ in $(seq 300); do [ "$(sql "$q" 2>/dev/null || echo 0)" -ge $((RANKS * REPEAT)) ] && return 0; sleep 0.2; done
  fail "the MPI_File_write calls of job $1 did not reach the warehouse"
}

# posix_under JOB NAME: how many POSIX NAME (or NAME64) operations the job's
# MPI_File_write calls made (their explicit children).
posix_under() {
  sql "SELECT count(*) FROM activities c JOIN activity_types ct ON ct.type_id = c.type_id
       JOIN activities m ON m.aid = c.parent_aid JOIN activity_types mt ON mt.type_id = m.type_id
       JOIN processes p ON p.proc_id = m.proc_id
       WHERE p.job = '$1' AND mt.name = 'MPI_File_write' AND ct.name IN ('$2', '${2}64')"
}

log "run 1: no hints"
JOB=e2e-run1 strided "$T/run1.out" "$FILE" "${WL[@]}"
wait_opens e2e-run1
wait_writes e2e-run1 # a call is recorded after its POSIX children: then they are in too
sleep 2 # the last batches (GlusterFS) of the job

log "analysis of run 1"
siox_cli hints --job e2e-run1 --analyze --json >"$T/hints1.json" 2>"$T/hints1.err" ||
  { cat "$T/hints1.err" >&2; fail "siox hints --job e2e-run1 --analyze failed"; }
set_row=$(sql "SELECT hint_set_id, hints::text FROM kb_hint_sets JOIN kb_apps USING (app_id)
               WHERE exe = '$SIOX_STRIDED' AND component = 'romio321' AND NOT superseded
                 AND file_pattern = '$(kb_pattern "$FILE")' AND source_job = 'e2e-run1'
               ORDER BY created_at DESC, hint_set_id DESC LIMIT 1")
[ -n "$set_row" ] || { cat "$T/hints1.json" >&2; fail "run 1 produced no romio321 hint set for $FILE"; }
set_id=${set_row%%|*}
set_json=${set_row#*|}
log "run 1 suggested set $set_id: $set_json"
echo "$set_json" >"$T/set.json"
[ "$(json_get "$T/set.json" 'len(j)')" -gt 0 ] || fail "hint set $set_id is empty"
[ "$(json_get "$T/set.json" 'j.get("romio_ds_write")')" = disable ] ||
  { cat "$T/hints1.json" >&2; fail "run 1 (sparse, data sieving) should suggest romio_ds_write disable: $set_json"; }
[ "$(json_get "$T/hints1.json" '[f["evidence"]["calls_sieved"] for f in j["findings"] if f["kind"] == "data_sieving_write"][0]')" \
  -eq $((RANKS * REPEAT)) ] || { cat "$T/hints1.json" >&2; fail "run 1's analysis did not see every MPI_File_write sieved"; }
run1_reads=$(posix_under e2e-run1 pread)
[ "$run1_reads" -gt 0 ] || fail "run 1's writes made no reads: no data sieving to replace"

log "run 2: SIOX_HINTS=1"
sleep 1.2 # the daemon's cache TTL (run 1 asked nothing, but keep runs independent)
SIOX_HINTS=1 JOB=e2e-run2 strided "$T/run2.out" "$FILE" "${WL[@]}"
python3 - "$T/set.json" "$T/run2.out" <<'PY' || fail "run 2's MPI_File_get_info does not show hint set $set_id"
import json, sys
want = json.load(open(sys.argv[1]))
got = {}
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) == 3 and f[0] == "info": got[f[1]] = f[2]
bad = {k: (v, got.get(k)) for k, v in want.items() if got.get(k) != str(v)}
assert not bad, f"key: (suggested, get_info) {bad}"
PY
wait_opens e2e-run2
[ "$(open_attr e2e-run2 mpi/hints_status | sort -u)" = applied ] ||
  fail "run 2 opens recorded '$(open_attr e2e-run2 mpi/hints_status | tr '\n' ' ')'"
[ "$(open_attr e2e-run2 mpi/hint_set | sort -u)" = "$set_id" ] ||
  fail "run 2 opens recorded hint set(s) '$(open_attr e2e-run2 mpi/hint_set | sort -u | tr '\n' ' ')', not $set_id"
open_attr e2e-run2 mpi/hints_applied | sort -u >"$T/applied.txt"
[ "$(wc -l <"$T/applied.txt")" -eq 1 ] || fail "the ranks applied different hints: $(cat "$T/applied.txt")"
python3 - "$T/set.json" "$T/applied.txt" <<'PY' || fail "run 2 hints_applied differs from set $set_id"
import json, sys
want = {k: str(v) for k, v in json.load(open(sys.argv[1])).items()}
text = open(sys.argv[2]).read().strip()
got = dict(p.split("=", 1) for p in text.split(";") if p)
assert got == want, f"applied {got}, suggested {want}"
PY
wait_writes e2e-run2
# The hint took effect in ROMIO, not only in MPI_File_get_info (that
# only echoes the keys given): no window reads any more, one pwrite per block.
[ "$(posix_under e2e-run2 pread)" -eq 0 ] || fail "run 2's writes still read (data sieving still on)"
[ "$(posix_under e2e-run2 pwrite)" -eq $((RANKS * REPEAT * BLOCKS)) ] ||
  fail "run 2 made $(posix_under e2e-run2 pwrite) pwrites under MPI_File_write, want one per block ($((RANKS * REPEAT * BLOCKS)))"
log "run 1 $(grep io_time_s "$T/run1.out") ($run1_reads window reads), run 2 $(grep io_time_s "$T/run2.out")"
log "ok"
