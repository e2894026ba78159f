#!/usr/bin/env bash
# The whole hint loop on the GlusterFS testbed (issue 4 item 4, test d):
# 4 bricks (none slowed) with the SIOX client and brick translators, a real
# siox-server and siox-daemon, 4 ranks of siox-strided-writes (romio321) on
# the FUSE mount with libsiox-mpi + libsiox-posix preloaded.
#   run 1 (job e2e-run1, no hints): `siox hints --job e2e-run1 --analyze`
#          must store a live romio321 hint set for the workload's file
#          pattern, computed from that job (source_job).
#   run 2 (job e2e-run2, SIOX_HINTS=1): MPI_File_get_info shows every key
#          of that set with its value, and every open records hints_status
#          "applied", the set's id and the same keys in hints_applied.
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
WL=(--blocks 64 --repeat 4)

log "run 1: no hints"
JOB=e2e-run1 strided "$T/run1.out" "$FILE" "${WL[@]}"
wait_opens e2e-run1
sleep 2 # the last batches (POSIX, GlusterFS) of the job

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
[ "$(open_attr e2e-run2 mpi/hint_set | sort -u)" = "$set_id" ] || fail "run 2 opens recorded another hint set"
open_attr e2e-run2 mpi/hints_applied | sort -u >"$T/applied.txt"
[ "$(wc -l <"$T/applied.txt")" -eq 1 ] || fail "the ranks applied different hints: $(cat "$T/applied.txt")"
python3 - "$T/set.json" "$T/applied.txt" <<'PY' || fail "run 2 hints_applied differs from set $set_id"
import json, sys
want = {k: str(v) for k, v in json.load(open(sys.argv[1])).items()}
text = open(sys.argv[2]).read().strip()
got = dict(p.split("=", 1) for p in text.split(";") if p)
assert got == want, f"applied {got}, suggested {want}"
PY
log "run 1 $(grep io_time_s "$T/run1.out"), run 2 $(grep io_time_s "$T/run2.out")"
log "ok"
