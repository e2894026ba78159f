#!/usr/bin/env bash
# A site of 3 shards on loopback (issue 15 §2, §4): 3 siox-servers with
# --shard K/3, each with its own private PostgreSQL, a coordinator
# (siox-server --coordinator: its own PostgreSQL, postgres_fdw partitions
# on the shards) and 3 daemons given the same --server list, routed by
# daemon id mod 3 to one shard each. Checks, through the coordinator:
#  1. every activity of every daemon exactly once (counts, distinct aids,
#     each write offset equally often per process), each on its daemon's
#     shard; `siox top`, `siox graph` and `siox blame` see the whole site;
#  2. kill -9 of shard 2's server mid-stream: shards 1 and 3 keep storing
#     their daemons' work while it is down (a shard down delays only its
#     own daemons), the coordinator refuses to answer and names shard 2;
#     after the restart every activity is there exactly once;
#  3. shard 3's PostgreSQL stopped: coordinator queries fail naming it;
#  4. the coordinator restarted meanwhile fails its build naming shard 3
#     (exit 1), and builds once shard 3 is back: the build resumes after a
#     failure, and every activity is still there exactly once.
. "$(dirname "$0")/lib.sh"

WRITES=150
SHARD_PEERS=0 # the shards know nothing of each other: no forwarding here
. "$(dirname "$0")/shard_site.sh"
trap shard_cleanup EXIT

# chain D NAME: one run of the example chain (2 processes, 4 activities per
# write) under daemon D, in the background; its pid in CHAIN[D].
CHAIN=()
chain() {
  SIOX_JOB_ID="shards-$2" SIOX_SOCKET="$T/daemon$1.sock" "$SIOX_CHAIN" --writes $WRITES --slow-device -1 --fast-us 300 --object "$2" \
    >>"$T/chain.log" 2>&1 &
  CHAIN[$1]=$!
  PIDS+=("${CHAIN[$1]}")
}

# wait_count FN ARG WANT: until `FN ARG "SELECT count(*) FROM activities"`
# says WANT (fails on more, or after 60 s).
wait_count() {
  local n=0
  for _ in $(seq 300); do
    n=$("$1" "$2" "SELECT count(*) FROM activities" 2>/dev/null || echo 0)
    [ "$n" -gt "$3" ] && fail "$1 $2: $n activities, more than the $3 made"
    [ "$n" -eq "$3" ] && return 0
    sleep 0.2
  done
  fail "$1 $2: $n activities after 60 s, want $3"
}
coord_count() { coord_sql "$2"; }

# Through the coordinator: WANT activities in all, no aid twice, per shard
# WANT/3, each process's write offsets all present equally often.
check_exact() {
  local want=$1
  wait_count coord_count - "$want"
  [ "$(coord_sql "SELECT count(DISTINCT aid) FROM activities")" -eq "$want" ] || fail "an aid is stored twice"
  local per
  per=$(coord_sql "SELECT string_agg(shard || ':' || n, ' ' ORDER BY shard) FROM
                     (SELECT shard, count(*) AS n FROM activities GROUP BY shard) s")
  [ "$per" = "1:$((want / 3)) 2:$((want / 3)) 3:$((want / 3))" ] || fail "per shard: $per"
  local bad
  bad=$(coord_sql "SELECT count(*) FROM (
             SELECT proc_id, count(*) AS offsets, min(n) AS lo, max(n) AS hi FROM (
               SELECT a.proc_id, x.value, count(*) AS n
                 FROM activities a JOIN activity_attributes x ON x.aid = a.aid AND x.name = 'io/offset'
                GROUP BY 1, 2) o
              GROUP BY 1) g
            WHERE offsets <> $WRITES OR lo <> hi")
  [ "$bad" -eq 0 ] || fail "$bad processes hold a write offset missing or more often than the others"
}

# The shards in another order than their numbers: the coordinator reads
# each one's K from the shard itself.
start_coordinator() {
  rm -f "$COORD/conninfo"
  "$SIOX_SERVER" --coordinator --data-dir "$COORD" --shard-db "host=$T/shard3/pg/run dbname=siox" \
    --shard-db "host=$T/shard1/pg/run dbname=siox" --shard-db "host=$T/shard2/pg/run dbname=siox" \
    >>"$T/coord.log" 2>&1 &
  COORD_PID=$!
  PIDS+=("$COORD_PID")
}
wait_coordinator() {
  for _ in $(seq 600); do [ -s "$COORD/conninfo" ] && return 0; sleep 0.1; done
  fail "the coordinator wrote no conninfo"
}

log "3 shards, a coordinator, 3 daemons"
for k in 1 2 3; do start_shard $k; done
for k in 1 2 3; do wait_port "${PORTS[$k]}" "shard $k"; done
start_coordinator
wait_coordinator
for d in 1 2 3; do start_site_daemon $d; done

log "1: one chain per daemon, exactly once through the coordinator"
for d in 1 2 3; do chain $d first-$d; done
for d in 1 2 3; do wait "${CHAIN[$d]}" || fail "chain $d failed"; done
check_exact $((3 * 4 * WRITES))
# Each daemon's processes on its own shard, ids in that shard's range.
for k in 1 2 3; do
  r=$(shard_sql $k "SELECT count(*), min(proc_id) >> 24, max(proc_id) >> 24 FROM processes")
  [ "$r" = "2|$k|$k" ] || fail "shard $k: processes (count, range) = $r"
done
# siox top through the coordinator: every activity of the site (n = all of
# them) in one order, the same as the union of the shards' own answers.
"$SIOX_CLI" --data-dir "$COORD" top -n 100000 --json >"$T/top.json" || fail "siox top through the coordinator"
[ "$(json_get "$T/top.json" 'len(set(r["aid"] for r in (j.get("activities", j) if isinstance(j, dict) else j)))')" \
  -eq $((3 * 4 * WRITES)) ] || fail "siox top -n 100000 through the coordinator does not list every activity"
for k in 1 2 3; do
  "$SIOX_CLI" --data-dir "$T/shard$k" top -n 5 --json >"$T/top$k.json" || fail "siox top on shard $k"
done
want=$(python3 - "$T"/top[123].json <<'PY'
import json, sys
rows = []
for f in sys.argv[1:]:
    j = json.load(open(f))
    rows += j.get("activities", j) if isinstance(j, dict) else j
print(" ".join(str(r["aid"]) for r in sorted(rows, key=lambda r: (-r["duration_ns"], r["aid"]))[:5]))
PY
)
got=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); r=j.get("activities", j) if isinstance(j, dict) else j; print(" ".join(str(x["aid"]) for x in r[:5]))' "$T/top.json")
[ "$got" = "$want" ] || fail "siox top through the coordinator: $got, the shards' own top 5 merged: $want"
# With a small -n each shard sends only its own first N (siox_wh_fanout):
# the same rows as the first N of the whole list, with each filter.
aids() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); r=j.get("activities", j) if isinstance(j, dict) else j; print(" ".join(str(x["aid"]) for x in r[:int(sys.argv[2])]))' "$@"; }
layer=$(coord_sql "SELECT n.swid FROM nodes n JOIN activity_types t USING (node_id) WHERE t.name = 'write' LIMIT 1")
roots=$(coord_sql "SELECT n.swid FROM activities a JOIN nodes n USING (node_id) WHERE a.parent_aid IS NULL
                    AND NOT EXISTS (SELECT 1 FROM causal_links l WHERE l.child_aid = a.aid) LIMIT 1")
for f in "" "--layer $layer" "--name write" "--roots" "--layer $roots --roots"; do
  # shellcheck disable=SC2086
  "$SIOX_CLI" --data-dir "$COORD" top -n 100000 $f --json >"$T/topall.json" || fail "siox top $f through the coordinator"
  # shellcheck disable=SC2086
  "$SIOX_CLI" --data-dir "$COORD" top -n 5 $f --json >"$T/top5.json" || fail "siox top -n 5 $f through the coordinator"
  [ -n "$(aids "$T/top5.json" 5)" ] || fail "siox top -n 5 $f through the coordinator: no rows"
  [ "$(aids "$T/top5.json" 5)" = "$(aids "$T/topall.json" 5)" ] ||
    fail "siox top -n 5 $f through the coordinator: $(aids "$T/top5.json" 5), the first 5 of all: $(aids "$T/topall.json" 5)"
done
for k in 1 2 3; do
  aid=$(coord_sql "SELECT a.aid FROM activities a JOIN activity_types t USING (type_id)
                    WHERE a.shard = $k AND t.name = 'write' AND a.parent_aid IS NULL ORDER BY a.aid LIMIT 1")
  "$SIOX_CLI" --data-dir "$COORD" graph "$aid" --json >"$T/graph$k.json" || fail "siox graph $aid"
  assert_graph "$T/graph$k.json" app fs-client server device || fail "tree of $aid on shard $k"
  "$SIOX_CLI" --data-dir "$COORD" blame "$aid" >"$T/blame$k.txt" || fail "siox blame $aid"
done
# The knowledge base's reads through the coordinator: its statements name
# the warehouse's functions (schema 032, kb_hist_*), which the coordinator
# takes from the shards with their tables.
"$SIOX_CLI" --data-dir "$COORD" capacity --since 1h --json >"$T/capacity.json" 2>"$T/capacity.err" ||
  fail "siox capacity through the coordinator: $(cat "$T/capacity.err")"
# A job view through the coordinator stores its counts there (a local
# job_aggregates: wh_coordinator.c), and the next view serves them.
job=$(coord_sql "SELECT job FROM processes WHERE job LIKE 'shards-%' ORDER BY job LIMIT 1")
[ -n "$job" ] || fail "no job of the site's chains"
for view in 1 2; do
  "$SIOX_CLI" --data-dir "$COORD" jobs --json >"$T/jobs$view.json" 2>"$T/jobs$view.err" ||
    fail "siox jobs through the coordinator: $(cat "$T/jobs$view.err")"
done
cmp -s "$T/jobs1.json" "$T/jobs2.json" || fail "the stored job counts differ from the computed ones"
[ "$(coord_sql "SELECT count(*) FROM job_aggregates WHERE job = '$job' AND kind = 'jobs'")" = 1 ] ||
  fail "the coordinator stored no counts of $job"

log "2: kill -9 shard 2's server mid-stream"
chain 2 second-2
for _ in $(seq 300); do
  [ "$(shard_sql 2 "SELECT count(*) FROM activities")" -gt $((4 * WRITES)) ] && break
  sleep 0.05
done
kill -KILL "${SHARD_PIDS[2]}"
wait "${SHARD_PIDS[2]}" 2>/dev/null || true
stop_postmaster "$T/shard2" # the shard's PostgreSQL goes too, until its server is back
# The other shards' daemons are not delayed.
chain 1 second-1
chain 3 second-3
wait "${CHAIN[1]}" || fail "chain 1 failed"
wait "${CHAIN[3]}" || fail "chain 3 failed"
wait_count shard_sql 1 $((8 * WRITES))
wait_count shard_sql 3 $((8 * WRITES))
if out=$("$SIOX_CLI" --data-dir "$COORD" top 2>&1); then fail "siox top answered with shard 2 down: $out"; fi
echo "$out" | grep -q 'siox_shard_2' || fail "the coordinator's error does not name shard 2: $out"
wait "${CHAIN[2]}" || fail "chain 2 failed while its shard was down"
start_shard 2
wait_port "${PORTS[2]}" "shard 2 again"
check_exact $((3 * 8 * WRITES))

log "3: shard 3's PostgreSQL stopped"
stop_pid "${SHARD_PIDS[3]}" # a clean stop takes its PostgreSQL down with it
[ -f "$T/shard3/pg/postmaster.pid" ] && fail "shard 3's PostgreSQL still runs"
for cmd in "top" "graph $aid" "jobs"; do
  # shellcheck disable=SC2086
  if out=$("$SIOX_CLI" --data-dir "$COORD" $cmd 2>&1); then fail "siox $cmd answered with shard 3 down: $out"; fi
  echo "$out" | grep -q 'could not connect to server "siox_shard_3"' || fail "siox $cmd: error without shard 3: $out"
done
log "4: the coordinator rebuilt while shard 3 is down, then after it is back"
stop_pid "$COORD_PID"
start_coordinator
rc=0
wait "$COORD_PID" || rc=$?
[ "$rc" -eq 1 ] || fail "the coordinator's build with shard 3 down exited $rc, want 1"
grep -q "coordinator: shard at host=$T/shard3/pg/run dbname=siox: cannot connect" "$T/coord.log" ||
  fail "the coordinator's failed build does not name shard 3"
start_shard 3
wait_port "${PORTS[3]}" "shard 3 again"
start_coordinator
wait_coordinator
check_exact $((3 * 8 * WRITES))
log "ok"
