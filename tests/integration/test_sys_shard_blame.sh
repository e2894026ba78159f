#!/usr/bin/env bash
# System test: blame across shards (issue 15 §2). Three shards with peers
# and a coordinator (shard_site.sh); daemon 1 (shard 1) takes the
# application's and the GlusterFS client's records, daemon 2 (shard 2) the
# bricks' (siox-testbed --brick-socket). Each client fop -> brick fop pair
# thus has its halves on two shards and is linked on the shard that owns
# its gfid. With a randomly chosen brick slowed, `siox blame` of the
# slowest application-level POSIX write, through the coordinator, must
# name that brick; no pair is linked twice. Also through the coordinator:
# every H5Dwrite's tree reaches a brick, blame of the slowest H5Dwrite names
# the brick, and the job's account says every activity its processes made
# is stored (none dropped or unaccounted), each aid once. Needs root and
# /dev/fuse (else 77).
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
blames_brick "$aid" "$slow" pwrite
log "blame of the slowest pwrite ($aid) through the coordinator names brick $slow"

# Every collective H5Dwrite's tree reaches a brick across the shards, and
# blame of the slowest one names the slowed brick too.
h5=$(sql "WITH RECURSIVE t(root, aid) AS (
            SELECT a.aid, a.aid FROM activities a JOIN activity_types ty USING (type_id) JOIN processes p USING (proc_id)
             WHERE ty.name = 'H5Dwrite' AND p.job = '$job'
            UNION SELECT t.root, e.child_aid FROM t JOIN causal_edges e ON e.parent_aid = t.aid)
          SELECT count(DISTINCT t.root) FILTER (WHERE n.swid = 'GlusterFS-brick') || ' ' || count(DISTINCT t.root)
            FROM t JOIN activities a ON a.aid = t.aid JOIN nodes n ON n.node_id = a.node_id")
read -r reached all <<<"$h5"
[ "$all" -gt 0 ] && [ "$reached" = "$all" ] || fail "H5Dwrite trees reaching a brick through the coordinator: $reached of $all"
siox_cli top --job "$job" --layer HDF5 --name H5Dwrite -n 1 --json >"$T/top.json" || fail "siox top failed"
h5aid=$(json_get "$T/top.json" 'j["activities"][0]["aid"]')
blames_brick "$h5aid" "$slow" H5Dwrite
log "all $all H5Dwrite trees reach a brick; blame of the slowest ($h5aid) names brick $slow"

# The job's account through the coordinator (siox graph's trace
# completeness): everything the job's processes made is stored.
siox_cli graph "$h5aid" --json >"$T/graph.json" 2>"$T/graph.err" ||
  fail "siox graph $h5aid through the coordinator failed: $(cat "$T/graph.err")"
acct=$(json_get "$T/graph.json" '"%d %d %d" % (j["trace_completeness"]["job"]["made"], j["trace_completeness"]["job"]["stored"], j["trace_completeness"]["job"]["unaccounted"])')
read -r made stored unacc <<<"$acct"
[ "$made" -gt 0 ] && [ "$stored" = "$made" ] && [ "$unacc" = 0 ] ||
  fail "job $job through the coordinator: made $made stored $stored unaccounted $unacc"
log "the job's $made activities are all stored, once (distinct aids: $(sql "SELECT count(DISTINCT a.aid) = count(*) FROM activities a JOIN processes p USING (proc_id) WHERE p.job = '$job'"))"
log "sys shard blame test passed"
