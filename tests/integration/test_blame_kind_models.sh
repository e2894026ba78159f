#!/usr/bin/env bash
# The kinds' latency models kept in the warehouse (schema 024,
# warehouse/src/wh_kind_models.c): blame reads the model the fold fitted
# instead of refitting it from history on every call, with the same
# verdicts.
#   1. A GlusterFS-like template (bench_blame_fill: 4 client hosts, 4
#      bricks, POSIX write -> client writev -> brick writev, slowed bricks in
#      some epochs) through a real siox-server, then one copy of it two
#      minutes later (as bench/bench_blame_latency.sh copies it).
#   2. `siox anomalies --update` folds the models: one per kind at each
#      minute boundary after a minute the kind had operations in; the fold
#      moves its watermark and a second update writes nothing.
#   3. A call of the copy is blamed with the kept model (kind_model.source
#      "kept", history up to the boundary before the call, the same line as
#      the fold stored) and with --refit-kind-model (source "fitted", history
#      up to the call's start): verdict, class, evidence and resource agree.
#   4. A call of the template (before the first boundary: no model kept)
#      falls back to fitting it.
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT
: "${SIOX_BLAME_FILL:?SIOX_BLAME_FILL not set}"
start_server --no-analyze --match-ms 200
n=$("$SIOX_BLAME_FILL" "$SERVER_PORT" "$MUNGE_SOCK" 2 60) || fail "bench_blame_fill failed"
wait_activities "$n" 120
for _ in $(seq 600); do
  [ "$(sql "SELECT ((SELECT watermark FROM match_state) >= (SELECT max(rc_id) FROM remote_calls))::int")" = 1 ] && break
  sleep 0.2
done
links=$(sql "SELECT count(*) FROM causal_links")
[ "$links" -gt 0 ] || fail "the template has no causal links"
log "template: $n activities, $links links"

# One copy, 120 s later: new processes (aids), the same nodes.
SHIFT=120000000000
pmax=$(sql "SELECT max(proc_id) FROM processes")
sql "INSERT INTO processes (proc_id, daemon_id, host, pid, uid, nonce, exe, args, job, first_seen)
     SELECT proc_id + $pmax, daemon_id, host, pid, uid, nonce + 100000, exe, args,
            CASE WHEN job = '' THEN '' ELSE job || '.c1' END, first_seen FROM processes;
     INSERT INTO activities (aid, proc_id, parent_aid, node_id, type_id, start_ns, end_ns, err,
                             attr_ids, attr_vals, real_ids, real_vals)
     SELECT aid + ($pmax::bigint << 32), proc_id + $pmax, parent_aid + ($pmax::bigint << 32), node_id, type_id,
            start_ns + $SHIFT, end_ns + $SHIFT, err, attr_ids, attr_vals, real_ids, real_vals FROM activities;
     INSERT INTO activity_text_attrs (aid, attr_id, value)
     SELECT aid + ($pmax::bigint << 32), attr_id, value FROM activity_text_attrs;
     INSERT INTO causal_links (parent_aid, child_aid, confidence, overlap_bytes, flags)
     SELECT parent_aid + ($pmax::bigint << 32), child_aid + ($pmax::bigint << 32), confidence, overlap_bytes, flags
       FROM causal_links" >/dev/null

siox_cli anomalies --update >"$T/anomalies.out" 2>&1 || fail "siox anomalies --update: $(cat "$T/anomalies.out")"
kept=$(sql "SELECT count(*) FROM kb_kind_models")
bounds=$(sql "SELECT count(DISTINCT to_ns) FROM kb_kind_models")
[ "$kept" -gt 0 ] || fail "the fold kept no kind model"
# The template and its copy each sit inside one minute (less than 60 s of
# activity): two boundaries with models, none at the empty minute between.
[ "$bounds" = 2 ] || fail "models at $bounds minute boundaries, want 2: $(sql "SELECT swid, name, to_ns FROM kb_kind_models")"
wm=$(sql "SELECT watermark_ns FROM kb_fold_state WHERE name = 'kind_models'")
[ "$wm" -ge "$(sql "SELECT max(to_ns) FROM kb_kind_models")" ] || fail "watermark $wm behind the models"
sql "SELECT 1 FROM kb_kind_models WHERE swid = 'GlusterFS-brick' AND name = 'writev' AND fitted" | grep -q 1 ||
  fail "no fitted model of GlusterFS-brick writev: $(sql "SELECT * FROM kb_kind_models")"
siox_cli anomalies --update >/dev/null 2>&1 || fail "second siox anomalies --update failed"
[ "$(sql "SELECT count(*) FROM kb_kind_models")" = "$kept" ] || fail "a second fold wrote models again"
log "kept $kept models at $bounds boundaries"

# blame_pair AID: blames AID both ways, checks the verdicts agree; prints
# the kept run's kind_model source.
blame_pair() {
  siox_cli blame "$1" --json >"$T/kept.json" 2>"$T/err" || fail "siox blame $1: $(cat "$T/err")"
  siox_cli blame "$1" --json --refit-kind-model >"$T/fit.json" 2>"$T/err" ||
    fail "siox blame $1 --refit-kind-model: $(cat "$T/err")"
  [ "$(json_get "$T/fit.json" "j['kind_model']['source']")" = fitted ] || fail "--refit-kind-model did not fit"
  local f
  for f in "j['verdict']" "j['class']" "j['decided_by']" "(j['resource'] or {}).get('aid')" \
           "(j['culprit'] or {}).get('aid')"; do
    [ "$(json_get "$T/kept.json" "$f")" = "$(json_get "$T/fit.json" "$f")" ] ||
      fail "blame $1: $f differs: kept $(json_get "$T/kept.json" "$f"), fitted $(json_get "$T/fit.json" "$f")"
  done
  json_get "$T/kept.json" "j['kind_model']['source']"
}

# The slowest POSIX write of the copy: its brick writev's kind has a model
# kept at the boundary after the template.
aid=$(sql "SELECT a.aid FROM activities a JOIN activity_types t ON t.type_id = a.type_id
            WHERE t.name = 'write' AND a.parent_aid IS NULL AND a.proc_id > $pmax
            ORDER BY a.end_ns - a.start_ns DESC LIMIT 1")
[ -n "$aid" ] || fail "no write in the copy"
[ "$(blame_pair "$aid")" = kept ] || fail "blame $aid did not use the kept model"
to=$(json_get "$T/kept.json" "j['kind_model']['history_to_ns']")
start=$(sql "SELECT start_ns FROM activities WHERE aid = $aid")
[ "$to" -le "$start" ] || fail "the kept model's history ($to) reaches past the call ($start)"
swid=$(json_get "$T/kept.json" "j['resource']['swid']")
name=$(json_get "$T/kept.json" "j['resource']['name']")
row=$(sql "SELECT a_s, b_s FROM kb_kind_models WHERE swid = '$swid' AND name = '$name' AND to_ns = $to")
got=$(json_get "$T/kept.json" "'%.6g|%.6g' % (j['kind_model']['a_s'], j['kind_model']['b_s_per_byte'])")
want=$(python3 -c "a, b = '$row'.split('|'); print('%.6g|%.6g' % (float(a), float(b)))")
[ "$got" = "$want" ] || fail "blame's kind model $got is not the kept one $want ($swid $name at $to)"
log "copy's call $aid: kept model of $swid $name at $to, same verdict as refitted"

# The slowest write of the template: no boundary before it, blame fits.
aid0=$(sql "SELECT a.aid FROM activities a JOIN activity_types t ON t.type_id = a.type_id
             WHERE t.name = 'write' AND a.parent_aid IS NULL AND a.proc_id <= $pmax
             ORDER BY a.end_ns - a.start_ns DESC LIMIT 1")
[ "$(blame_pair "$aid0")" = fitted ] || fail "blame $aid0 (before any kept model) did not fit the model"
log "PASS"
