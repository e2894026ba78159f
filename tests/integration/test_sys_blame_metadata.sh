#!/usr/bin/env bash
# System test of blame on metadata paths (issue 10 section 5, scenario (g)),
# on the real GlusterFS testbed: a random brick delays LOOKUP, CREATE and
# OPEN; a job creates and opens files with random names; `siox blame` of its
# slowest open must name the slowed brick, that of its slowest creat the
# slowed brick or nothing (its lookups of the new name are unlinked). Also
# checks the links the metadata path needs: POSIX open/creat/close/fsync/unlink -> GlusterFS
# client create/open/lookup/flush/fsync/unlink -> brick, and that an open
# reaching no component is flagged as unexplained with the time it covers.
# Needs root and /dev/fuse (else 77).
. "$(dirname "$0")/lib.sh"
skip_unless_fuse_testbed
. "$(dirname "$0")/sys_lib.sh"
. "$(dirname "$0")/blame_scenarios.sh"
sys_start
R="m$$"
DELAY_FOPS=$META_FOPS round_start "$R" $((RANDOM % BRICKS + 1))
log "brick $SLOW: $META_FOPS slowed by $DELAY_US us"
scenario_g "$R"
log "(g) slowest open: $OUTCOME: $WHY"
log "(g) slowest creat: $CREAT_OUTCOME"
case $CREAT_OUTCOME in correct:* | no-verdict:*) ;; *) fail "the slowest creat: $CREAT_OUTCOME" ;; esac
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
# fsync, stat and unlink (Python's os calls go through libc): 4 of the
# job's files, written, fsynced, closed, stated and unlinked.
LD_PRELOAD=$ASAN_RT SIOX_JOB_ID="$R-m" "$SIOX_CLI" run --layers posix --socket "$SIOX_SOCKET" -- python3 -c '
import os, sys
for f in sys.argv[1:]:
    fd = os.open(f, os.O_WRONLY)
    os.write(fd, b"x")
    os.fsync(fd)
    os.close(fd)
    os.stat(f)
    os.unlink(f)
' $(ls -d "$MNT/$R"-g-* | head -4) || fail "the fsync/stat/unlink job failed"
wait_job "$R-m"
links() { # POSIX-name-regex client-fop: the job's POSIX calls linked to client fops
  sql "SELECT count(*) FROM causal_links l JOIN activities pa ON pa.aid = l.parent_aid
       JOIN activity_types pt ON pt.type_id = pa.type_id JOIN processes pp ON pp.proc_id = pa.proc_id
       JOIN activities ca ON ca.aid = l.child_aid JOIN activity_types ct ON ct.type_id = ca.type_id
       JOIN nodes cn ON cn.node_id = ca.node_id
       WHERE pp.job = '$R-m' AND pt.name ~ '^($1)' AND ct.name ~ '^($2)$' AND cn.swid = 'GlusterFS-client'"
}
for pair in "fsync:fsync" "unlink:unlink" "close:flush"; do
  n=$(links "${pair%%:*}" "${pair#*:}")
  [ "$n" -ge 4 ] || fail "only $n of 4 POSIX ${pair%%:*} calls of job $R-m are linked to a client ${pair#*:}"
  log "POSIX ${pair%%:*} -> client ${pair#*:}: $n links"
done
# stat(2) reaches the client as stat or lookup, or not at all when the
# kernel's cache answers (instrumentation/glusterfs/README.md): logged only.
log "POSIX stat -> client stat/lookup: $(links 'stat|__xstat|fstatat|newfstatat|statx' 'stat|lookup') links"
n=$(sql "SELECT count(*) FROM causal_links l JOIN activities pa ON pa.aid = l.parent_aid
         JOIN nodes pn ON pn.node_id = pa.node_id JOIN activity_types pt ON pt.type_id = pa.type_id
         JOIN activities ca ON ca.aid = l.child_aid JOIN nodes cn ON cn.node_id = ca.node_id
         WHERE pn.swid = 'GlusterFS-client' AND cn.swid = 'GlusterFS-brick' AND pt.name IN ('create', 'open', 'flush', 'fsync', 'unlink')")
[ "$n" -gt 0 ] || fail "no client create/open/flush is linked to a brick"
[ "$OUTCOME" = correct ] || { cat "$T"/blame-*.txt >&2 2>/dev/null; fail "scenario (g): $WHY"; }
# The blamed creat/open: its time no linked component covers is reported
# with the stretches it covers (they add up).
aid=$(slowest_open "$R-g" 1)
[ "$(json_get "$T/blame-$aid.json" 'abs(sum(g["to_s"] - g["from_s"] for g in j["unlinked"]["stretches"])
     - j["unlinked"]["unlinked_s"]) < 1e-6 and j["unlinked"]["linked_activities"] >= 2
     and "unexplained_s" in j["breakdown"]')" = True ] || { cat "$T/blame-$aid.json" >&2; fail "blame $aid: no unlinked stretches"; }
# An open that reaches no component (a local file): no verdict, and all of
# its time flagged as unexplained, with the time it covers.
: >"$T/local-file"
LD_PRELOAD=$ASAN_RT SIOX_JOB_ID="$R-loc" "$SIOX_CLI" run --layers posix --socket "$SIOX_SOCKET" -- \
  bash -c 'exec 3<"$1"' x "$T/local-file" || fail "local open failed"
wait_job "$R-loc"
aid=$(slowest "$R-loc" POSIX "'open', 'open64', 'openat', 'openat64'")
[ -n "$aid" ] || fail "the local open was not recorded"
siox_cli blame "$aid" --json >"$T/local.json" || fail "siox blame $aid failed"
[ "$(json_get "$T/local.json" 'j["class"] == "none" and j["culprit"] is None and j["unlinked"]["share"] == 1
     and len(j["unlinked"]["stretches"]) == 1 and "unexplained" in j["explanation"]
     and "Unlinked:" in j["explanation"]')" = True ] || { cat "$T/local.json" >&2; fail "blame $aid: the local open is not flagged as unexplained"; }
log "an open reaching no component: no verdict, $(json_get "$T/local.json" 'j["unlinked"]["unlinked_s"]') s unexplained"
log "sys blame metadata test passed"
