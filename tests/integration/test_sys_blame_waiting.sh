#!/usr/bin/env bash
# System test of blame's waiting, classes and verdicts without peers (issue
# 10), on the real GlusterFS testbed: one round of the scenarios of
# blame_scenarios.sh with a random slowed brick and random file placement:
# (a) file per process -> the slowed brick, (b) one shared file on it with
# independent MPI-IO writes -> the slowed brick, (f) a healthy brick
# hammered by job B -> interference naming B, no culprit, (e) a job alone on
# the slowed brick -> named without peers; `siox blame --job` of (b) and of
# (f)'s job A; (h) several jobs on the healthy bricks -> nothing named.
# Needs root and /dev/fuse (else 77).
. "$(dirname "$0")/lib.sh"
skip_unless_fuse_testbed
. "$(dirname "$0")/sys_lib.sh"
. "$(dirname "$0")/blame_scenarios.sh"
sys_start
R="w$$"
random_round "$R"
FR=$R # the round whose (f) jobs the job-level check reads
for s in a b f e; do
  "scenario_$s" "$R"
  log "($s) $OUTCOME: $WHY"
  # (f) alone gets a second, fresh round: its healthy brick is hammered on
  # the same 2 cores as everything else, and in 2 of 2 full ASan suites on
  # 2026-12-07 (0 of 6 ASan runs of this test alone) A's slowest write waited
  # for time no traced component covers (a brick starved by untraced
  # processes; the kernel before the FUSE channel), which blame rightly
  # does not pin on B. Two misses in a row still fail.
  if [ "$s" = f ] && [ "$OUTCOME" != correct ]; then
    FR="$R-2"
    scenario_f "$FR"
    log "(f) again in round $FR: $OUTCOME: $WHY"
  fi
  [ "$OUTCOME" = correct ] || { cat "$T"/blame-*.txt >&2 2>/dev/null; fail "scenario ($s): $WHY"; }
done
# Job-level blame: the shared-file job's time is the slowed brick's fault;
# job A's is job B's interference, and no component of A's is at fault.
siox_cli blame --job "$R-b" --calls 8 --json >"$T/job-b.json" || fail "siox blame --job $R-b failed"
[ "$(json_get "$T/job-b.json" '[e for e in j["entries"] if e["kind"] == "component"][0]["name"].split(" ")[0] + " " +
     [e for e in j["entries"] if e["kind"] == "component"][0]["class"]')" = "brick$SLOW:$TB/brick$SLOW fault" ] ||
  { cat "$T/job-b.json" >&2; fail "blame --job $R-b does not put the slowed brick's fault first"; }
# Job B's interference is the largest entry of A's time; a component fault
# may hold no more than a fifth of B's share (one of A's 8 calls was once
# called a fault of the hammered subvolume: an open defect, siox-cli/README.md
# "Job-level blame").
siox_cli blame --job "$FR-fA" --calls 8 --json >"$T/job-fA.json" || fail "siox blame --job $FR-fA failed"
[ "$(json_get "$T/job-fA.json" '(lambda es, b: bool(b) and max(es, key=lambda e: e["time_s"]) is b[0] and
     sum(e["time_s"] for e in es if e["class"] == "fault") <= b[0]["time_s"] / 5)(j["entries"],
     [e for e in j["entries"] if e["kind"] == "job" and e["name"] == "'"$FR-fB"'" and e["class"] == "interference"])')" = True ] ||
  { cat "$T/job-fA.json" >&2; fail "blame --job $FR-fA does not name job $FR-fB's interference first"; }
log "blame --job: $R-b -> brick $SLOW (fault); $FR-fA -> job $FR-fB (interference)"
# (h) on the healthy bricks of the same testbed (bench/bench_blame.sh runs it
# on a testbed without a slowed brick): keeps the test under 3 minutes.
scenario_h "$R"
log "(h) $OUTCOME: $WHY"
# No component may be named, and a verdict is given: a lone outlier under
# time no linked component covers (the kernel before the FUSE channel, seen
# in 2 of 9 bench rounds) reads "nothing stands out", class normal, with the
# withdrawn transient in --json's `withdrawn` (siox_blame_wait_unlinked).
[ "$OUTCOME" = correct ] || { cat "$T"/blame-*.txt >&2 2>/dev/null; fail "scenario (h): $WHY"; }
log "sys blame waiting test passed"
