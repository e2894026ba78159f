#!/usr/bin/env bash
# System test of blame on metadata paths (issue 10 section 5, scenario (g)),
# on the real GlusterFS testbed: a random brick delays LOOKUP, CREATE and
# OPEN; a job creates and opens files with random names; `siox blame` of its
# slowest open/creat must name the slowed brick. Also checks the links the
# metadata path needs: POSIX open/creat/close -> GlusterFS client
# create/open/lookup/flush -> brick. Needs root and /dev/fuse (else 77).
. "$(dirname "$0")/lib.sh"
skip_unless_fuse_testbed
. "$(dirname "$0")/sys_lib.sh"
. "$(dirname "$0")/blame_scenarios.sh"
trap 'tb_stop; cleanup' EXIT

start_server
start_daemon "" --batch-ms 50
R="m$$"
DELAY_FOPS=$META_FOPS round_start "$R" $((RANDOM % BRICKS + 1))
log "brick $SLOW: $META_FOPS slowed by $DELAY_US us"
scenario_g "$R"
log "(g) $OUTCOME: $WHY"
# The links: each kind of POSIX metadata call of the job reaches a client fop.
for pair in "creat|open:create" "open:lookup" "open:open" "close:flush"; do
  p=${pair%%:*} c=${pair#*:}
  n=$(sql "SELECT count(*) FROM causal_links l JOIN activities pa ON pa.aid = l.parent_aid
           JOIN activity_types pt ON pt.type_id = pa.type_id JOIN processes pp ON pp.proc_id = pa.proc_id
           JOIN activities ca ON ca.aid = l.child_aid JOIN activity_types ct ON ct.type_id = ca.type_id
           JOIN nodes cn ON cn.node_id = ca.node_id
           WHERE pp.job = '$R-g' AND pt.name ~ '^($p)' AND ct.name = '$c' AND cn.swid = 'GlusterFS-client'")
  [ "$n" -gt 0 ] || fail "no POSIX ${p} of job $R-g is linked to a client $c"
  log "POSIX $p -> client $c: $n links"
done
n=$(sql "SELECT count(*) FROM causal_links l JOIN activities pa ON pa.aid = l.parent_aid
         JOIN nodes pn ON pn.node_id = pa.node_id JOIN activity_types pt ON pt.type_id = pa.type_id
         JOIN activities ca ON ca.aid = l.child_aid JOIN nodes cn ON cn.node_id = ca.node_id
         WHERE pn.swid = 'GlusterFS-client' AND cn.swid = 'GlusterFS-brick' AND pt.name IN ('create', 'open', 'flush')")
[ "$n" -gt 0 ] || fail "no client create/open/flush is linked to a brick"
[ "$OUTCOME" = correct ] || { cat "$T"/blame-*.txt >&2 2>/dev/null; fail "scenario (g): $WHY"; }
log "sys blame metadata test passed"
