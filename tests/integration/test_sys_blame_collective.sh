#!/usr/bin/env bash
# System test of blame through collective MPI-IO (issue 10, scenarios (c)
# and (d) of blame_scenarios.sh) on the real GlusterFS testbed, with a
# random slowed brick and the shared file placed on it: (c) 4 ranks write
# one shared file with MPI_File_write_all (ROMIO's aggregator makes the
# pwrites for all) -> the slowed brick, fault, for the slowest call and for
# the slowest call of a rank that only waited for the aggregator; (d) the
# same with one collective H5Dwrite on top -> the slowed brick, fault.
# Needs root and /dev/fuse (else 77).
. "$(dirname "$0")/lib.sh"
skip_unless_fuse_testbed
. "$(dirname "$0")/sys_lib.sh"
. "$(dirname "$0")/blame_scenarios.sh"
sys_start
R="k$$"
random_round "$R"
for s in c d; do
  "scenario_$s" "$R"
  log "($s) $OUTCOME: $WHY"
  [ "$OUTCOME" = correct ] || { cat "$T"/blame-*.txt >&2 2>/dev/null; fail "scenario ($s): $WHY"; }
done
log "sys blame collective test passed"
