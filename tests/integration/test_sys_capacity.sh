#!/usr/bin/env bash
# Capacity planning on the testbed (issue 13 sections 3-4): 4 GlusterFS
# bricks, brick 3 slowed, the 4-rank HDF5 / MPI-IO / POSIX job under
# `siox run`. Asserts structure and direction, never timing thresholds:
# - GlusterFS put every file on the brick the model's DHT rule names
#   (`siox capacity place`);
# - `siox capacity model` fits every brick's writes, with standard errors,
#   and finds the slowed brick slower and of less capacity than the others;
# - `siox capacity what-if` on the extracted job: healing the slow brick
#   predicts less I/O time; on bricks made alike, halving them never
#   predicts more throughput (bottleneck law: the busiest brick's busy time); the slow brick saturates first; an unknown brick
#   is refused;
# - the job's replay (`siox replay` into the volume) writes on each brick
#   exactly the bytes the model predicted for it (placement and accounting).
# Needs root and /dev/fuse (else 77).
. "$(dirname "$0")/lib.sh"
skip_unless_fuse_testbed
. "$(dirname "$0")/sys_lib.sh"
trap 'tb_stop; cleanup' EXIT

start_server
start_daemon "" --batch-ms 50
JOB="sys-cap-$$"
SLOW=3
tb_start "$SLOW" "$JOB-fs"
SLOWB="brick$SLOW:$TB/brick$SLOW"

log "the job, brick $SLOW slowed"
traced_job "$JOB" cap

log "placement: the DHT rule against GlusterFS"
n=0
for f in "${H5_ON[@]}" "${P_ON[@]}" "$MPIIO" "$STDIO"; do
  want="brick$(brick_of "$f")"
  got=$(siox_cli capacity place --bricks $BRICKS --mount "$MNT" "$MNT/$f" | awk '{print $2}')
  [ "$got" = "$want" ] || fail "DHT rule puts $f on $got, GlusterFS put it on $want"
  n=$((n + 1))
done
log "  $n files where GlusterFS put them"

log "the calibrated model"
siox_cli capacity model >"$T/model.txt" || fail "siox capacity model failed"
cat "$T/model.txt"
siox_cli capacity model --json >"$T/model.json" || fail "siox capacity model --json failed"
python3 - "$T/model.json" "$SLOWB" "$BRICKS" <<'PY' || fail "the model is wrong (see above)"
import json, sys
m, slow, nb = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3])
bricks = {c["name"]: c for c in m["components"] if c["kind"] == "brick"}
assert len(bricks) == nb, f"{len(bricks)} bricks in the model, want {nb}"
assert any(c["kind"] == "client" for c in m["components"]), "no client component"
for name, c in bricks.items():
    w = c["classes"].get("write")
    assert w and w["n"] >= 3, f"{name}: no write fit"
    assert w["se_a_ns"] > 0, f"{name}: no standard error"
    assert c["servers"] >= 1
t = lambda c: c["classes"]["write"]["a_ns"] + c["classes"]["write"]["b_ns_per_byte"] * m["chunk_bytes"]
for name, c in bricks.items():
    if name != slow:
        assert t(bricks[slow]) > t(c), f"the slowed {slow} is not slower than {name}"
        assert bricks[slow]["classes"]["write"]["capacity"] < c["classes"]["write"]["capacity"], \
            f"the slowed {slow} has no less capacity than {name}"
print("model ok:", {n: round(t(c) / 1e6, 2) for n, c in bricks.items()}, "ms per full write")
PY

log "what-if"
siox_cli workload extract --job "$JOB" --prefix "$MNT/" -o "$T/job.wl" 2>"$T/extract.txt" \
  || fail "extract failed: $(cat "$T/extract.txt")"
# Halving is compared on bricks made alike (device=all; the measured healthy
# bricks differ by their calibration) by the throughput the bottleneck law
# gives, one copy per D_max (the busiest brick's demand per copy). Not by the
# span: this job's span is its ranks' synchronization, where which requests
# DHT puts together decides, and 2 bricks may rightly finish first (at 60 ms
# a request: 9.2 s on 2 bricks against 10.3 s on 4 once; 59.6 s against 62.0 s
# for 8 copies, the bricks under half busy).
ALIKE="device=all:60000:100"
siox_cli capacity what-if "heal=$SLOWB" "$ALIKE+bricks=4" "$ALIKE+bricks=2" load=2 \
  --workload "$T/job.wl" --mount "$MNT" || fail "what-if failed"
siox_cli capacity what-if "heal=$SLOWB" "$ALIKE+bricks=4" "$ALIKE+bricks=2" load=2 \
  --workload "$T/job.wl" --mount "$MNT" --json >"$T/whatif.json" || fail "what-if --json failed"
python3 - "$T/whatif.json" "$SLOWB" "$ALIKE" "$T/model.json" <<'PY' || fail "a what-if answer goes the wrong way (see above)"
import json, sys
r, slow, alike = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
servers = {c["name"]: c["servers"] for c in json.load(open(sys.argv[4]))["components"]}
sc = {s["scenario"]: s for s in r["workloads"][0]["scenarios"]}
asis, heal = sc["as-is"], sc[f"heal={slow}"]
four, two = sc[f"{alike}+bricks=4"], sc[f"{alike}+bricks=2"]
assert heal["io_time_ns"][0] < asis["io_time_ns"][0], "healing the slow brick does not predict less time"
# The same requests on half the bricks: a busier busiest brick, less throughput.
# Busy time per copy (demand x servers): device=all makes the service alike,
# not the concurrency each brick was calibrated with (2 on a brick whose
# recorded requests overlapped), which the demand divides by.
dmax = lambda s: max(c["demand_ns"] * servers[c["name"]] for c in s["components"] if c["kind"] == "brick")
assert dmax(two) > dmax(four), \
    "2 bricks alike predict no less throughput than 4: busiest brick %.0f ns a copy, on 4 %.0f ns" % (dmax(two), dmax(four))
assert asis["saturates_first"] == slow, f"{asis['saturates_first']} saturates first, not the slow {slow}"
assert len(sc["load=2"]["io_time_ns"]) == 2
# The explanation: per rank of copy 0 its time and its parts per kind of
# operation, which add up to it; the slowest rank's is the copy's time.
for name, s in sc.items():
    rk = s["ranks"]
    assert max(x["io_time_ns"] for x in rk) == s["io_time_ns"][0], f"{name}: no rank has the copy's time"
    for x in rk:
        assert sum(x["by_op_ns"].values()) == x["io_time_ns"], f"{name}: rank {x['rank']}'s parts do not add up"
print("what-if ok: as-is %.1f ms, healed %.1f ms, busiest of 4 bricks %.1f ms a copy, of 2 bricks %.1f ms" % (
    asis["io_time_ns"][0] / 1e6, heal["io_time_ns"][0] / 1e6, dmax(four) / 1e6, dmax(two) / 1e6))
PY
if siox_cli capacity what-if heal=brick9:/nowhere --workload "$T/job.wl" 2>"$T/unknown.txt"; then
  fail "an unknown brick was accepted"
fi
grep -q "no brick 'brick9:/nowhere' in the model (bricks: brick1:" "$T/unknown.txt" \
  || fail "unknown brick: $(cat "$T/unknown.txt")"

log "the replay: bytes per brick as predicted"
mkdir -p "$MNT/replay"
siox_cli capacity what-if --workload "$T/job.wl" --mount "$MNT" --replay-dir "$MNT/replay" --json \
  >"$T/replay_pred.json" || fail "predicting the replay failed"
t0=$(date +%s%N)
LD_PRELOAD=$ASAN_RT SIOX_JOB_ID="$JOB-replay" "$SIOX_CLI" run --layers posix,mpi --socket "$SIOX_SOCKET" -- \
  "$SIOX_CLI" replay "$T/job.wl" --dir "$MNT/replay" --mpirun "mpirun --oversubscribe -x ASAN_OPTIONS" \
  >"$T/replay.out" 2>&1 || { cat "$T/replay.out" >&2; fail "the replay failed"; }
t1=$(date +%s%N)
wait_finalized "$JOB-replay" 4
wait_links
wait_settled # the bricks' writev come from glusterfsd, not the finalized ranks
sql "SELECT n.hwid, sum(a.attr_vals[array_position(a.attr_ids, (SELECT id FROM ontology WHERE name = 'io/bytes'))])
       FROM activities a JOIN nodes n USING (node_id) JOIN activity_types t USING (type_id)
      WHERE n.swid = 'GlusterFS-brick' AND t.name = 'writev' AND a.err = 0
        AND a.start_ns >= $t0 AND a.start_ns < $t1 GROUP BY 1 ORDER BY 1" >"$T/measured.txt"
cat "$T/measured.txt"
python3 - "$T/replay_pred.json" "$T/measured.txt" <<'PY' || fail "bytes per brick differ (see above)"
import json, sys
pred = {c["name"]: c["bytes_written"] for c in json.load(open(sys.argv[1]))["workloads"][0]["scenarios"][0]["components"]
        if c["kind"] == "brick"}
meas = {}
for line in open(sys.argv[2]):
    if line.strip():
        k, v = line.strip().split("|")
        meas[k] = int(v)
for b in sorted(set(pred) | set(meas)):
    print(f"  {b}: predicted {pred.get(b, 0)} B written, measured {meas.get(b, 0)} B")
    assert pred.get(b, 0) == meas.get(b, 0), f"{b} differs"
assert sum(pred.values()) > 0
PY
log "ok"
