#!/usr/bin/env bash
# `siox capacity validate` on the testbed (issue 13 section 5): 4 GlusterFS
# bricks, brick 3 slowed; the demo job (calibrates every brick) and the
# strided-writes job (one shared file) under `siox run`; then two cases
# run for real: the recorded workload replayed as is (shared file) and its
# file-per-process transform (siox workload transform), each a traced
# `siox replay` into the volume. Asserts, with no timing threshold beyond a
# sanity bound (0 < time < 10 min):
# - validate names each case, with its prediction, measurement, error and
#   a verdict;
# - each measured value is the real run's: the I/O time of that job's own
#   trace (siox workload extract, computed here apart); the as-is case is
#   run twice (CV_REPEAT=2): measured is the median of its two runs, and
#   MIN .. MAX are theirs;
# - a run that is missing, or that is not a run of the case (no I/O under
#   its replay directory), or too few runs for load=2 (or runs that are no
#   whole repeats of its 2 copies), is an error naming it;
# - the calibration job (cv_calibrate, 2 MiB per brick) reads from every
#   brick: each brick served at least its file's 2 MiB of `readv` while
#   the read-back ran (its reads are not all served by the client's page
#   cache), and is in validate's window.
# Needs root and /dev/fuse (else 77).
. "$(dirname "$0")/lib.sh"
skip_unless_fuse_testbed
. "$(dirname "$0")/sys_lib.sh"
. "$(dirname "$0")/capacity_validate_lib.sh"
trap 'tb_stop; cleanup' EXIT
DELAY_US=20000
start_server
start_daemon "" --batch-ms 50
JOB="sys-cv-$$"

tb_start 3 "$JOB-fs"
t0=$(date +%s)
log "calibration: the calibration job"
cv_calibrate "$JOB-cal" 2
win=$(sql "SELECT min(a.start_ns) || ' AND ' || max(a.end_ns) FROM activities a JOIN processes p USING (proc_id)
           WHERE p.job = '$JOB-cal-r'")
read_per_brick=$(sql "SELECT n.hwid || '=' || sum(a.attr_vals[array_position(a.attr_ids,
                        (SELECT id FROM ontology WHERE name = 'io/bytes'))])
                  FROM activities a JOIN nodes n USING (node_id) JOIN activity_types t USING (type_id)
                 WHERE n.swid = 'GlusterFS-brick' AND t.name = 'readv' AND a.start_ns BETWEEN $win GROUP BY n.hwid")
log "calibration reads per brick (bytes): $(echo $read_per_brick)"
[ "$(echo "$read_per_brick" | awk -F= '$2 >= 2097152' | wc -l)" = "$BRICKS" ] \
  || fail "the calibration job's reads did not reach every brick: $(echo $read_per_brick)"
log "calibration: the demo job"
pick_files cal
run_workload "$JOB-demo" "$T/demo.out" "$SIOX_CLI" run --layers posix,mpi,hdf5 --socket "$SIOX_SOCKET" --
wait_finalized "$JOB-demo" 4 300
log "the recorded job: strided writes"
cv_record "$JOB"
t1=$(($(date +%s) + 1))
siox_cli workload transform "$T/$JOB.wl" --file-per-process -o "$T/fpp.wl" || fail "transform failed"
sleep 1
log "the cases, run for real"
CV_REPEAT=2 cv_replay asis "$T/$JOB.wl" 1 as-is
cv_replay fpp "$T/fpp.wl" 1 as-is
wait_settled
base=(--job "$JOB" --prefix "$REC_MNT/job/" --mount "$REC_MNT" --since "@$t0" --until "@$t1")

log "validate"
siox_cli capacity validate "${base[@]}" "${CV_CASES[@]}" >"$T/validate.txt" 2>&1 \
  || { cat "$T/validate.txt"; fail "validate failed"; }
cat "$T/validate.txt"
grep -Eq "^asis +4 +1 +2 .*%  (ok|OFF) +as-is on " "$T/validate.txt" || fail "validate does not show case asis"
grep -Eq "^fpp +4 +1 +1 .*%  (ok|OFF) +as-is on " "$T/validate.txt" || fail "validate does not show case fpp"
grep -Eq "^verdict: (VALIDATED|NOT VALIDATED)" "$T/validate.txt" || fail "no verdict"
siox_cli capacity validate "${base[@]}" "${CV_CASES[@]}" --json >"$T/validate.json" || fail "validate --json failed"
for j in asis-1 asis-r2-1 fpp-1; do
  siox_cli workload extract --job "$j" --prefix "$MNT/r-${j%%-*}/" -o "$T/run-$j.wl" 2>/dev/null || fail "extract $j"
  awk '$1 == "r" { t[$2] += $8 } END { m = 0; for (r in t) if (t[r] > m) m = t[r]; printf "%.0f\n", m }' "$T/run-$j.wl" \
    >"$T/run-$j.ns"
done
python3 - "$T/validate.json" "$T"/run-{asis-1,asis-r2-1,fpp-1}.ns <<'PY' || fail "validate's figures are wrong (see above)"
import json, sys
v = json.load(open(sys.argv[1]))
t = [int(open(f).read()) for f in sys.argv[2:]]
# The runs' own traces: asis twice (the median of two is their mean), fpp once.
runs = {"asis": [t[0], t[1]], "fpp": [t[2]]}
jobs = {"asis": ["asis-1", "asis-r2-1"], "fpp": ["fpp-1"]}
cases = {c["case"]: c for c in v["cases"]}
assert sorted(cases) == ["asis", "fpp"], cases.keys()
for n, c in cases.items():
    m, p = c["measured_io_time_ns"], c["predicted_io_time_ns"]
    want = round(sum(runs[n]) / len(runs[n]))
    print(f"{n}: predicted {p / 1e6:.1f} ms, measured {m / 1e6:.1f} ms (the runs' own traces: {runs[n]} ns)")
    assert c["measured_jobs"] == jobs[n], c["measured_jobs"]
    assert c["repeats"] == len(runs[n]) and c["copies"] == 1, (c["repeats"], c["copies"])
    assert abs(m - want) <= 1, f"{n}: measured {m} is not the median of the runs' I/O times {runs[n]}"
    assert (c["measured_min_ns"], c["measured_max_ns"]) == (min(runs[n]), max(runs[n])), c
    assert 0 < m < 600e9 and 0 < p < 600e9, f"{n}: out of the sanity bound"
    assert abs(c["error_pct"] - abs(p - m) / m * 100) < 0.01, f"{n}: error {c['error_pct']}"
    assert c["within"] == (c["error_pct"] <= v["tolerance_pct"])
assert v["validated"] == all(c["within"] for c in cases.values())
PY

log "a missing run, a run of something else, too few runs"
expect_refused() { # MESSAGE ARGS...
  local msg=$1
  shift
  if siox_cli capacity validate "${base[@]}" "$@" >"$T/refused.txt" 2>&1; then
    cat "$T/refused.txt"
    fail "validate accepted: $*"
  fi
  grep -qF "$msg" "$T/refused.txt" || fail "validate said: $(cat "$T/refused.txt") (want: $msg)"
}
expect_refused "asis: no run of job 'never-ran' in the warehouse" \
  --case asis --replay-dir "$MNT/r-asis" --run-mount "$MNT" --measured never-ran
expect_refused "asis: job 'fpp-1' is not a run of this scenario" \
  --case asis --replay-dir "$MNT/r-asis" --run-mount "$MNT" --measured fpp-1
expect_refused "load2: the scenario runs 2 concurrent copies: give 2 measured runs, not 1" \
  --case load2 --scenario load=2 --replay-dir "$MNT/r-asis" --run-mount "$MNT" --measured asis-1
# Repeats are whole: 3 jobs are not repeats of 2 copies.
expect_refused "load2: the scenario runs 2 concurrent copies: give 2 measured runs, not 3 (or a multiple of 2" \
  --case load2 --scenario load=2 --replay-dir "$MNT/r-asis" --run-mount "$MNT" --measured asis-1 \
  --measured asis-r2-1 --measured asis-1
log "ok"
