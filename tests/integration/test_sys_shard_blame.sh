#!/usr/bin/env bash
# System test: blame across shards (issue 15 §2). Three shards with peers
# and a coordinator (shard_site.sh); daemon 1 (shard 1) takes the
# application's and the GlusterFS client's records, daemon 2 (shard 2) the
# bricks' (siox-testbed --brick-socket). Each client fop -> brick fop pair
# thus has its halves on two shards and is linked on the shard that owns
# its gfid. With a randomly chosen brick slowed, `siox blame` of the
# slowest application-level POSIX write, through the coordinator, must
# name that brick; no pair is linked twice. Needs root and /dev/fuse
# (else 77).
. "$(dirname "$0")/lib.sh"
skip_unless_fuse_testbed
. "$(dirname "$0")/shard_site.sh"
. "$(dirname "$0")/sys_lib.sh"

shard_site_start
trap 'tb_stop; shard_cleanup' EXIT
for d in 1 2; do start_site_daemon $d; done
# sys_lib.sh's queries and `siox` go through the coordinator.
sql() { coord_sql "$1"; }
siox_cli() { "$SIOX_CLI" --data-dir "$COORD" "$@"; }
export SIOX_SOCKET="$T/daemon1.sock"
TB_BRICK_SOCKET="$T/daemon2.sock"

slow=$((RANDOM % BRICKS + 1)) job="sys-shard-$$"
tb_start "$slow" "$job"
pick_files r1
log "brick $slow slowed by $DELAY_US us; client on shard 1, bricks on shard 2"
run_workload "$job" "$T/workload.out" "$SIOX_CLI" run --layers posix,mpi,hdf5 --socket "$SIOX_SOCKET" --
wait_finalized "$job" 4
wait_links

cross=$(sql "SELECT count(*) FROM causal_links l JOIN activities p ON p.aid = l.parent_aid JOIN activities c ON c.aid = l.child_aid
             JOIN nodes pn ON pn.node_id = p.node_id JOIN nodes cn ON cn.node_id = c.node_id
             WHERE pn.swid = 'GlusterFS-client' AND cn.swid = 'GlusterFS-brick'")
per=$(sql "SELECT string_agg(shard || ':' || n, ' ' ORDER BY shard) FROM (SELECT shard, count(*) AS n FROM causal_links
           WHERE (parent_aid >> 56) <> (child_aid >> 56) GROUP BY shard) s")
log "client fop -> brick fop links: $cross; links across shards, by the shard holding them: $per"
[ "$cross" -gt 0 ] || fail "no brick fop is linked to a client fop"
[ "$(sql "SELECT count(*) FROM (SELECT parent_aid, child_aid FROM causal_links GROUP BY 1, 2 HAVING count(*) > 1) d")" -eq 0 ] ||
  fail "a pair is linked on two shards"

aid=$(slowest_app_write "$job")
[ -n "$aid" ] || fail "no application-level POSIX write"
siox_cli blame "$aid" --json >"$T/blame.json" || fail "siox blame $aid through the coordinator failed"
culprit=$(json_get "$T/blame.json" '(j.get("culprit") or {}).get("hwid", "-") + "/" + (j.get("culprit") or {}).get("swid", "-")')
[ "$culprit" = "brick$slow:$TB/brick$slow/GlusterFS-brick" ] ||
  { siox_cli blame "$aid" >&2; fail "blame of pwrite $aid named '$culprit', brick $slow was slowed"; }
log "blame of the slowest pwrite ($aid) through the coordinator names brick $slow"
log "sys shard blame test passed"
