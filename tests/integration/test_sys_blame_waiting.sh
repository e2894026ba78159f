#!/usr/bin/env bash
# System test of blame's waiting, classes and verdicts without peers (issue
# 10), on the real GlusterFS testbed: one round of the scenarios of
# blame_scenarios.sh with a random slowed brick and random file placement:
# (a) file per process -> the slowed brick, (b) one shared file on it with
# independent MPI-IO writes -> the slowed brick, (f) a healthy brick
# hammered by job B -> interference naming B, no culprit, (e) a job alone on
# the slowed brick -> named without peers; then on a testbed without a slowed
# brick (h) several jobs -> nothing named. Needs root and /dev/fuse (else 77).
. "$(dirname "$0")/lib.sh"
skip_unless_fuse_testbed
. "$(dirname "$0")/sys_lib.sh"
. "$(dirname "$0")/blame_scenarios.sh"
trap 'tb_stop; cleanup' EXIT

start_server
start_daemon "" --batch-ms 50
R="w$$"
round_start "$R" $((RANDOM % BRICKS + 1))
log "brick $SLOW slowed by $DELAY_US us"
for s in a b f e; do
  "scenario_$s" "$R"
  log "($s) $OUTCOME: $WHY"
  [ "$OUTCOME" = correct ] || { cat "$T"/blame-*.txt >&2 2>/dev/null; fail "scenario ($s): $WHY"; }
done
round_start "$R-h" ""
scenario_h "$R"
log "(h) $OUTCOME: $WHY"
[ "$OUTCOME" = correct ] || { cat "$T"/blame-*.txt >&2 2>/dev/null; fail "scenario (h): $WHY"; }
log "sys blame waiting test passed"
