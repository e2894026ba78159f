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
#   trace (siox workload extract, computed here apart);
# - a run that is missing, or that is not a run of the case (no I/O under
#   its replay directory), or too few runs for load=2, is an error naming it.
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
cv_replay asis "$T/$JOB.wl" 1 as-is
cv_replay fpp "$T/fpp.wl" 1 as-is
wait_settled
base=(--job "$JOB" --prefix "$REC_MNT/job/" --mount "$REC_MNT" --since "@$t0" --until "@$t1")

log "validate"
siox_cli capacity validate "${base[@]}" "${CV_CASES[@]}" >"$T/validate.txt" 2>&1 \
  || { cat "$T/validate.txt"; fail "validate failed"; }
cat "$T/validate.txt"
for c in asis fpp; do
  grep -Eq "^$c +4 +1 .*%  (ok|OFF) +as-is on " "$T/validate.txt" || fail "validate does not show case $c"
done
grep -Eq "^verdict: (VALIDATED|NOT VALIDATED)" "$T/validate.txt" || fail "no verdict"
siox_cli capacity validate "${base[@]}" "${CV_CASES[@]}" --json >"$T/validate.json" || fail "validate --json failed"
for c in asis fpp; do
  siox_cli workload extract --job "$c-1" --prefix "$MNT/r-$c/" -o "$T/run-$c.wl" 2>/dev/null || fail "extract $c-1"
  awk '$1 == "r" { t[$2] += $8 } END { m = 0; for (r in t) if (t[r] > m) m = t[r]; printf "%.0f\n", m }' "$T/run-$c.wl" \
    >"$T/run-$c.ns"
done
python3 - "$T/validate.json" "$T/run-asis.ns" "$T/run-fpp.ns" <<'PY' || fail "validate's figures are wrong (see above)"
import json, sys
v = json.load(open(sys.argv[1]))
runs = {"asis": int(open(sys.argv[2]).read()), "fpp": int(open(sys.argv[3]).read())}
cases = {c["case"]: c for c in v["cases"]}
assert sorted(cases) == ["asis", "fpp"], cases.keys()
for n, c in cases.items():
    m, p = c["measured_io_time_ns"], c["predicted_io_time_ns"]
    print(f"{n}: predicted {p / 1e6:.1f} ms, measured {m / 1e6:.1f} ms (the run's own trace: {runs[n] / 1e6:.1f} ms)")
    assert c["measured_jobs"] == [f"{n}-1"], c["measured_jobs"]
    assert m == runs[n], f"{n}: measured {m} is not the run's I/O time {runs[n]}"
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
log "ok"
