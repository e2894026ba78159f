#!/usr/bin/env bash
# Latency of `siox blame AID --json` (the whole command, as users run it:
# process start, connection, every query, the JSON) on a warehouse of at
# least 10M activities (issue 10). Prints:
#   blame_ms_p50 / blame_ms_p95        over CALLS sampled calls (default 60)
#   blame_warehouse_activities         the warehouse's size
#   blame_warehouse_fill_s             seconds to build it (0: from the cache)
#   blame_ms_refit_p50 / _p95          the same calls with --refit-kind-model
#                                      (the kind's model fitted from history per
#                                      call, the behaviour before schema 024),
#                                      interleaved with the calls above in
#                                      alternating order; BLAME_REFIT=0 skips it
#   blame_kind_model_kept_percent      calls whose kind model was the kept one
#   blame_refit_agree_percent          calls whose verdict, class, evidence,
#                                      resource and culprit are the same both ways
#   blame_ms_base_p50 / _p95           with BLAME_BASE_CLI=PATH (another build's
#                                      siox, e.g. of the commit before a change):
#                                      the same calls blamed by it, interleaved
#                                      with the calls above in alternating order
#   blame_base_same_json_percent       calls whose whole --json is byte-identical
#                                      from both binaries
#   blame_web_ms_p50 / _p95            the same calls through `siox web` on
#                                      loopback (GET /api/blame?aid=A, curl's
#                                      whole request: connect, blame on the
#                                      web's warm pooled connection, the
#                                      reply), interleaved with the CLI calls
#                                      in alternating order; BLAME_WEB=0 skips
#   blame_web_same_json_percent        calls whose web document equals the
#                                      CLI's --json (parsed, key order kept:
#                                      the web prints it unindented)
#
# Size: BLAME_ACTIVITIES (default 10000000) is the least the warehouse holds;
# the template is copied until it does (e.g. BLAME_ACTIVITIES=2000000 for a
# 2M warehouse, about 2 minutes to fill; it is cached per size under
# BLAME_WAREHOUSE, default BUILD/bench/blame-warehouse, so a second size
# replaces the first unless BLAME_WAREHOUSE differs).
#
# How the warehouse is made (cached in BUILD/bench/blame-warehouse, rebuilt
# when missing, when bench_blame_fill.c, the schema or this script's
# FILL_VERSION changed, or with BLAME_REFILL=1; about 15 min from scratch on
# the loaded 2-core machine, 10-20 s from the cache plus the calls):
#  1. Ingest: bench_blame_fill pushes a GlusterFS-like template through a
#     real siox-server (real Batch frames from 8 daemons, MUNGE Hellos, the
#     server's ingest and remote-call matcher): JOBS jobs of 4 ranks on 4
#     client hosts, POSIX write -> GlusterFS-client writev -> GlusterFS-brick
#     writev on 4 bricks, plus client-own lookups, slowed bricks in some
#     epochs (see its header). About 150k activities, all linked.
#  2. Bulk copy (documented shortcut: the matcher links ~7k pairs/s here, so
#     ingesting 10M linked activities would take most of an hour): SQL
#     copies the template's processes, activities, text attributes and
#     causal links COPIES times, each copy a new set of processes (new
#     proc_ids, so new aids; jobs renamed job-J.cK) shifted later in time by
#     SPAN, on the same nodes (the same hosts, clients and bricks keep
#     serving). So the warehouse looks like the same cluster running jobs
#     for an hour: what blame reads around one call (peers in its window,
#     what its brick served, the kind's history, the baseline) sits among
#     10M rows on the same nodes.
#  3. ANALYZE, and `siox anomalies --update` folds the baselines once.
# The copies and the timing run on the warehouse's PostgreSQL alone (pg_ctl,
# as siox-server starts it), not under a server: a server's own background
# passes (a restart re-runs the role grants over every link) are not blame's
# cost. The warehouse is at rest while blame is timed.
# Then CALLS calls are picked at random among the slowest 5% of the roots of
# each layer (POSIX writes of the ranks, the GlusterFS clients' own
# lookups), spread over the whole timeline, and each is blamed once.
# usage: bench_blame_latency.sh BUILD_DIR [CALLS]
B=$(cd "$1" && pwd)
CALLS=${2:-${BLAME_CALLS:-60}}
top=$(cd "$(dirname "$0")/.." && pwd)
export SIOX_SERVER=$B/siox-server/siox-server SIOX_CLI=$B/siox-cli/siox
. "$top/tests/integration/lib.sh"
. "$top/bench/copy_in_time.sh"
FILL_VERSION=2
WANT=${BLAME_ACTIVITIES:-10000000}
JOBS=8 WRITES=1500 SPAN_NS=60000000000
CACHE=${BLAME_WAREHOUSE:-$B/bench/blame-warehouse}
# The cache is rebuilt when the generator or the schema (its indexes) changed.
stamp="v$FILL_VERSION $(cat "$top/bench/bench_blame_fill.c" "$top"/warehouse/schema/*.sql | sha1sum | cut -c1-12) $WANT"
SERVER_DIR=$CACHE
trap 'cleanup; pg stop >/dev/null 2>&1; stop_postmaster "$CACHE"' EXIT
PG_BIN=$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)
# The warehouse's PostgreSQL alone (as siox-server starts it: pg_ctl as the
# postgres user on DIR/pg), for the SQL copies and the timing: a server
# would add its own background passes (a restart re-runs the role grants
# over every link) to what is measured.
pg() {
  local as=()
  [ "$(id -u)" = 0 ] && as=(runuser -u postgres --)
  if [ "$1" = stop ]; then set -- -m fast stop; fi
  "${as[@]}" "$PG_BIN/pg_ctl" -D "$CACHE/pg" -l "$CACHE/pg/log" -w -t 300 "$@"
}

fill() {
  rm -rf "$CACHE"
  mkdir -p "$CACHE"
  chmod 755 "$CACHE"
  start_server --no-analyze --match-ms 200
  local n
  n=$("$B/bench/bench_blame_fill" "$SERVER_PORT" "$MUNGE_SOCK" "$JOBS" "$WRITES") || fail "bench_blame_fill failed"
  wait_activities "$n" 600
  # Until a matcher pass has seen every remote call (as server_test_waiting).
  for _ in $(seq 1200); do
    [ "$(sql "SELECT ((SELECT watermark FROM match_state) >= (SELECT max(rc_id) FROM remote_calls))::int")" = 1 ] && break
    sleep 0.5
  done
  echo "# template: $n activities, $(sql "SELECT count(*) FROM causal_links") links, $(($(date +%s) - t0)) s" >&2
  stop_pid "$SERVER_PID"
  local copies=$(((WANT + n - 1) / n - 1))
  pg start >/dev/null
  echo "# copying the template $copies times" >&2
  copy_in_time sql "$copies" "$SPAN_NS"
  sql "ANALYZE" >/dev/null
  # Folds the baselines and the kinds' latency models (schema 024), as a
  # live server's analysis thread does.
  "$SIOX_CLI" --data-dir "$SERVER_DIR" anomalies --update >/dev/null 2>&1 ||
    echo "# siox anomalies --update failed; blame runs without baselines or kept models" >&2
  pg stop >/dev/null
  echo "$stamp" >"$CACHE/ready"
}

t0=$(date +%s)
fill_s=0
if [ "${BLAME_REFILL:-0}" = 1 ] || [ "$(cat "$CACHE/ready" 2>/dev/null)" != "$stamp" ]; then
  fill
  fill_s=$(($(date +%s) - t0))
fi
pg start >/dev/null
n=$(sql "SELECT count(*) FROM activities")
[ "$n" -ge "$WANT" ] || fail "the warehouse holds $n activities, fewer than $WANT"

# The sample: per layer, random calls among the slowest 5% of its roots (in
# a 2% block sample of the table: a full pass takes minutes here).
mapfile -t AIDS < <(sql "
  WITH r AS (
    SELECT a.aid, n.swid, a.end_ns - a.start_ns AS d
      FROM activities a TABLESAMPLE SYSTEM (2) REPEATABLE ($RANDOM) JOIN nodes n ON n.node_id = a.node_id
     WHERE a.parent_aid IS NULL AND NOT EXISTS (SELECT 1 FROM causal_links l WHERE l.child_aid = a.aid)),
  s AS (SELECT aid, swid, percent_rank() OVER (PARTITION BY swid ORDER BY d DESC) pr FROM r)
  SELECT aid FROM (SELECT aid, row_number() OVER (PARTITION BY swid ORDER BY random()) i FROM s WHERE pr <= 0.05) x
   ORDER BY i, aid LIMIT $CALLS")
[ "${#AIDS[@]}" -gt 0 ] || fail "no calls to blame"

REFIT=${BLAME_REFIT:-1}
# blame_one AID OUT [--refit-kind-model]: times one call into ms_last.
blame_one() {
  local aid=$1 out=$2 t
  shift 2
  t=$(date +%s%N)
  "$SIOX_CLI" --data-dir "$SERVER_DIR" blame "$aid" --json "$@" >"$out" 2>"$T/blame.err" ||
    fail "siox blame $aid $*: $(cat "$T/blame.err")"
  ms_last=$((($(date +%s%N) - t) / 1000000))
}
# The fields a verdict is made of (the same both ways: the kept model agrees).
verdict_of() {
  json_get "$1" "(j['verdict'], j['class'], j['decided_by'], (j['resource'] or {}).get('aid'), (j['culprit'] or {}).get('aid'))"
}
BASE_CLI=${BLAME_BASE_CLI:-}
# blame_base AID: the same call by the other build, into ms_base.
blame_base() {
  local t
  t=$(date +%s%N)
  "$BASE_CLI" --data-dir "$SERVER_DIR" blame "$1" --json >"$T/base.json" 2>"$T/blame.err" ||
    fail "$BASE_CLI blame $1: $(cat "$T/blame.err")"
  ms_base+=($((($(date +%s%N) - t) / 1000000)))
}
WEB=${BLAME_WEB:-1}
# The web server on the warehouse, as a user starts it (its pool of warm
# connections is opened at start, before any call is timed).
if [ "$WEB" = 1 ]; then
  WEB_PORT=$(free_port)
  "$SIOX_CLI" --data-dir "$SERVER_DIR" web --listen "127.0.0.1:$WEB_PORT" >"$T/web.log" 2>&1 &
  PIDS+=($!)
  wait_port "$WEB_PORT" "siox web"
fi
# blame_web AID: the call through the web's API, into ms_web (curl's whole
# request), and whether its document equals the CLI's (web_same).
blame_web() {
  local code t
  read -r code t < <(curl -s -o "$T/web.json" -w '%{http_code} %{time_total}\n' "http://127.0.0.1:$WEB_PORT/api/blame?aid=$1")
  [ "$code" = 200 ] || fail "GET /api/blame?aid=$1: HTTP $code $(cat "$T/web.json")"
  ms_web+=("$(awk -v t="$t" 'BEGIN { printf "%d", t * 1000 }')")
}
ms=() ms_refit=() ms_base=() ms_web=() kept=0 agree=0 same=0 web_same=0 i=0
for aid in "${AIDS[@]}"; do
  [ -n "$BASE_CLI" ] && [ $((i % 2)) = 0 ] && blame_base "$aid"
  [ "$WEB" = 1 ] && [ $((i % 2)) = 1 ] && blame_web "$aid"
  # Alternating order: the second run of a call finds its pages warm.
  if [ "$REFIT" = 1 ] && [ $((i % 2)) = 1 ]; then
    blame_one "$aid" "$T/refit.json" --refit-kind-model
    ms_refit+=("$ms_last")
  fi
  blame_one "$aid" "$T/blame.json"
  ms+=("$ms_last")
  [ -n "$BASE_CLI" ] && [ $((i % 2)) = 1 ] && blame_base "$aid"
  [ "$WEB" = 1 ] && [ $((i % 2)) = 0 ] && blame_web "$aid"
  if [ "$REFIT" = 1 ] && [ $((i % 2)) = 0 ]; then
    blame_one "$aid" "$T/refit.json" --refit-kind-model
    ms_refit+=("$ms_last")
  fi
  src=$(json_get "$T/blame.json" "(j['kind_model'] or {}).get('source')")
  [ "$src" = kept ] && kept=$((kept + 1))
  line="# blame $aid: ${ms[-1]} ms ($src), $(json_get "$T/blame.json" "j['verdict'] + ' ' + j['class']")"
  if [ "$REFIT" = 1 ]; then
    line+="; refit ${ms_refit[-1]} ms"
    if [ "$(verdict_of "$T/blame.json")" = "$(verdict_of "$T/refit.json")" ]; then agree=$((agree + 1))
    else line+=", DIFFERS: $(verdict_of "$T/refit.json")"; fi
  fi
  if [ -n "$BASE_CLI" ]; then
    line+="; base ${ms_base[-1]} ms"
    if cmp -s "$T/blame.json" "$T/base.json"; then same=$((same + 1)); else line+=", JSON DIFFERS"; fi
  fi
  if [ "$WEB" = 1 ]; then
    line+="; web ${ms_web[-1]} ms"
    if python3 -c 'import json,sys; sys.exit(json.dumps(json.load(open(sys.argv[1]))) != json.dumps(json.load(open(sys.argv[2]))))' \
      "$T/blame.json" "$T/web.json"; then web_same=$((web_same + 1)); else line+=", WEB JSON DIFFERS"; fi
  fi
  echo "$line" >&2
  i=$((i + 1))
done
# pct NAME MS...: p50 and p95 (nearest rank) lines.
pct() {
  local name=$1
  shift
  printf '%s\n' "$@" | sort -n | awk -v n="$name" '{v[NR] = $1} END {
    p50 = v[int((NR + 1) / 2)]; i = int(0.95 * NR + 0.999); if (i < 1) i = 1
    print n "_p50 " p50 " ms"; print n "_p95 " v[i] " ms" }'
}
pct blame_ms "${ms[@]}"
if [ "$REFIT" = 1 ]; then
  pct blame_ms_refit "${ms_refit[@]}"
  echo "blame_refit_agree_percent $((100 * agree / ${#AIDS[@]})) %"
fi
if [ -n "$BASE_CLI" ]; then
  pct blame_ms_base "${ms_base[@]}"
  echo "blame_base_same_json_percent $((100 * same / ${#AIDS[@]})) %"
fi
if [ "$WEB" = 1 ]; then
  pct blame_web_ms "${ms_web[@]}"
  echo "blame_web_same_json_percent $((100 * web_same / ${#AIDS[@]})) %"
fi
echo "blame_kind_model_kept_percent $((100 * kept / ${#AIDS[@]})) %"
echo "blame_warehouse_activities $n count"
echo "blame_warehouse_fill_s $fill_s s"
echo "blame_latency_calls ${#AIDS[@]} count"
