#!/usr/bin/env bash
# Knowledge base on real binaries (issue 4 items 5, 6): siox-server,
# siox-daemon, a 4-brick GlusterFS testbed with SIOX translators and the
# 4-rank HDF5 / MPI-IO / POSIX workload under `siox run`, twice on the same
# testbed (same bricks, so the same components): run 1 with no brick slowed
# teaches the baselines; run 2 with brick 2 slowed by debug/delay-gen.
#   - `siox anomalies` over run 2 flags brick 2's writev as abnormal against
#     its own baseline and no other brick;
#   - `siox blame` of run 2's slowest application write names brick 2 and
#     judges it abnormal for that component;
#   - `siox capacity` charges each brick exactly the bytes of its
#     activities, names as saturating first the brick with the highest peak,
#     and draws its plots with gnuplot.
# Needs root and /dev/fuse (else 77).
. "$(dirname "$0")/lib.sh"
skip_unless_fuse_testbed
. "$(dirname "$0")/sys_lib.sh"
trap 'tb_stop; cleanup' EXIT
# Six steps instead of two: each brick then sees about 30 writes of the
# 64 KiB class per run, above the 20 samples a baseline needs.
WL_ARGS=(--rows 32 --cols 512 --steps 6 --block 65536)
command -v gnuplot >/dev/null || fail "gnuplot is not installed (scripts/install-deps.sh installs gnuplot-nox)"

# tb_restart [--slow N]: the testbed in the same directory each time, so
# that brick n is the same node (HWID brickn:DIR/brickn) in both runs.
tb_restart() {
  tb_stop
  TB="$T/tb"
  local base
  base=$(free_port_block $BRICKS)
  [ -n "$base" ] || fail "no free ports for the bricks"
  LD_PRELOAD=$ASAN_RT "$SIOX_TESTBED" start --dir "$TB" --bricks $BRICKS "$@" --delay-us "$DELAY_US" \
    --base-port "$base" --client-xlator debug/siox-client --brick-xlator debug/siox-brick \
    --xlator-dir "$SIOX_XLATOR_DIR" >"$T/testbed.out" 2>&1 || { cat "$T/testbed.out" >&2; fail "testbed did not start"; }
  MNT="$TB/mnt"
}

# run JOB PREFIX: the workload under siox run, then wait until it is all in.
run() {
  pick_files "$2"
  run_workload "$1" "$T/$1.out" "$SIOX_CLI" run --layers posix,mpi,hdf5 --socket "$SIOX_SOCKET" --
  wait_finalized "$1" 4
  wait_links
}

start_server
start_daemon "" --batch-ms 50
job1="kb-anom-$$-1" job2="kb-anom-$$-2"
brick_write="n.swid = 'GlusterFS-brick' AND t.name = 'writev'"

# ---- run 1: nothing slowed ----------------------------------------------------
t1=$(date +%s)
tb_restart
run "$job1" a
# Everything is in the warehouse: fold without waiting out the settle time.
sql "UPDATE kb_fold_state SET settle_ns = 0"
siox_cli anomalies --update --since "@$t1" --json >"$T/anom1.json" || fail "siox anomalies (run 1) failed"
n=$(sql "SELECT sum(b.n) FROM kb_baselines b JOIN nodes n USING (node_id) JOIN activity_types t USING (type_id)
         WHERE $brick_write")
[ "${n:-0}" -gt 0 ] || fail "no brick writev baselines after run 1: fold state $(sql "SELECT name, watermark_ns, folded
  FROM kb_fold_state"), activities $(sql "SELECT n.swid, t.name, count(*) FROM activities a
  JOIN nodes n USING (node_id) JOIN activity_types t USING (type_id) GROUP BY 1, 2 ORDER BY 1, 2" | tr "\n" " ")"
log "run 1: $n brick writevs in the baselines ($(sql "SELECT string_agg(x, ', ') FROM (SELECT split_part(n.hwid, ':', 1)
  || ' ' || sum(b.n) x FROM kb_baselines b JOIN nodes n USING (node_id) JOIN activity_types t USING (type_id)
  WHERE $brick_write GROUP BY split_part(n.hwid, ':', 1) ORDER BY 1) y"))"

# ---- run 2: brick 2 slowed --------------------------------------------------------
sleep 1
t2=$(date +%s)
tb_restart --slow 2
run "$job2" b
siox_cli anomalies --update --since "@$t2" --all --json >"$T/anom2.json" || fail "siox anomalies (run 2) failed"
# Brick 2 is flagged, with its median at or above p95 of its own baseline.
# Other bricks may drift too when the machine is busy (their latency really
# changed), but by far less: brick 2's window median over its baseline
# median must exceed theirs tenfold.
flagged=$(json_get "$T/anom2.json" '" ".join(sorted(set(c["hwid"].split(":")[0] for c in j["components"]
  if c["abnormal"] and c["swid"] == "GlusterFS-brick" and c["name"] == "writev")))')
[[ " $flagged " == *" brick2 "* ]] || { siox_cli anomalies --since "@$t2" --all >&2; fail "abnormal brick writevs: '$flagged', want brick2"; }
ratios=$(json_get "$T/anom2.json" '" ".join("%s=%.2f" % (c["hwid"].split(":")[0], c["p50_s"] / c["baseline_p50_s"])
  for c in j["components"] if c["swid"] == "GlusterFS-brick" and c["name"] == "writev" and c["baseline_samples"] >= 20
  and c["samples"] >= 5)')
log "run 2: flagged: $flagged; window median / baseline median per brick and size class: $ratios"
python3 - "$ratios" <<'PY' || { siox_cli anomalies --since "@$t2" --all >&2; fail "slowed brick not set apart: $ratios"; }
import sys
r = [kv.split("=") for kv in sys.argv[1].split()]
slow = min(float(v) for k, v in r if k == "brick2")
other = max([float(v) for k, v in r if k != "brick2"] or [0])
sys.exit(0 if slow >= 10 * other and slow > 5 else 1)
PY
pct=$(json_get "$T/anom2.json" 'max(c["percentile"] or 0 for c in j["components"]
  if c["hwid"].startswith("brick2:") and c["swid"] == "GlusterFS-brick" and c["name"] == "writev")')
python3 -c "import sys; sys.exit(0 if float('$pct') >= 95 else 1)" || fail "slowed brick at p$pct of its baseline"
[ "$(json_get "$T/anom2.json" 'j["abnormal"] >= 1')" = True ] || fail "anomalies counts no abnormal component"

# ---- blame: the culprit is abnormal for its component ---------------------------
aid=$(slowest_app_write "$job2")
[ -n "$aid" ] || fail "no application-level POSIX write in run 2"
siox_cli blame "$aid" --json >"$T/blame.json" || fail "siox blame $aid failed"
culprit=$(json_get "$T/blame.json" '(j.get("culprit") or {}).get("hwid", "-")')
[ "$culprit" = "brick2:$TB/brick2" ] || { siox_cli blame "$aid" >&2; fail "blame named '$culprit'"; }
judged=$(json_get "$T/blame.json" 'j["baseline"]["judgement"] + " " + str(j["baseline"]["aid"] == j["culprit"]["aid"])')
[ "$judged" = "abnormal True" ] || { siox_cli blame "$aid" >&2; fail "blame baseline judgement: '$judged'"; }
siox_cli blame "$aid" | grep -q "^Baseline: at p.*ABNORMAL for this component" || fail "blame text lacks the baseline line"
log "blame $aid: brick 2, abnormal for it (p$(json_get "$T/blame.json" 'round(j["baseline"]["percentile"], 1)'))"

# ---- capacity -------------------------------------------------------------------------
now=$(($(date +%s) + 1))
siox_cli capacity --update --since "@$t1" --until "@$now" --kind node --component brick --what-if 2 \
  --plot "$T/plots" --json >"$T/cap.json" || fail "siox capacity failed"
nb=$(json_get "$T/cap.json" 'len([c for c in j["components"] if c["role"] == "brick"])')
[ "$nb" = "$BRICKS" ] || fail "capacity lists $nb bricks, want $BRICKS"
# Each brick's bytes equal the io/bytes of its activities in the warehouse.
want=$(sql "SELECT string_agg(n.node_id || '=' || s, ' ' ORDER BY n.node_id) FROM (
              SELECT a.node_id, sum(a.attr_vals[array_position(a.attr_ids, o.id)]) s FROM activities a, ontology o
               WHERE o.name = 'io/bytes' GROUP BY 1) x JOIN nodes n USING (node_id) WHERE n.swid = 'GlusterFS-brick'")
got=$(json_get "$T/cap.json" '" ".join(c["key"] + "=" + str(c["bytes"]) for c in sorted(j["components"], key=lambda c: int(c["key"])))')
[ "$got" = "$want" ] || fail "capacity bytes per brick: '$got', warehouse says '$want'"
first=$(json_get "$T/cap.json" 'j["saturates_first"]["key"]')
hardest=$(json_get "$T/cap.json" 'max(j["components"], key=lambda c: c["peak"])["key"]')
[ "$first" = "$hardest" ] || fail "saturates first: node $first, but node $hardest had the highest peak"
[ "$(json_get "$T/cap.json" 'abs(j["saturates_first"]["utilization"] - 1) < 1e-9')" = True ] ||
  { cat "$T/cap.json" >&2; fail "the hardest-driven brick is not at 100 %"; }
[ "$(json_get "$T/cap.json" 'abs(j["saturates_first"]["projected_utilization"] - 2) < 1e-9')" = True ] ||
  fail "what-if 2 did not project 200 %"
for p in load latency_vs_load utilization; do
  [ -s "$T/plots/$p.png" ] || fail "no plot $p.png"
  head -c 8 "$T/plots/$p.png" | od -An -c | grep -q "P   N   G" || fail "$p.png is not a PNG"
done
siox_cli capacity --since "@$t1" --until "@$now" --component brick --what-if 2 >"$T/cap.txt"
label=$(json_get "$T/cap.json" 'j["saturates_first"]["label"]')
grep -qF "Saturates first: $label (brick)" "$T/cap.txt" && grep -q "^What if the load grows x2.00: its peak would be 200%" "$T/cap.txt" ||
  { cat "$T/cap.txt" >&2; fail "capacity text lacks the saturation or the projection"; }
log "capacity: node $first saturates first; bytes per brick match the warehouse; plots drawn"
log "kb anomalies test passed"
