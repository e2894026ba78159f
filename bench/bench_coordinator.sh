#!/usr/bin/env bash
# Queries through the coordinator against the same queries on one shard
# directly (issue 15 §2, bench): a 3-shard site (scripts/siox-site: 3
# siox-servers with --shard K/3, each on its private PostgreSQL, and the
# coordinator's postgres_fdw partitions over them) holding ACTIVITIES in
# all. Prints, medians over ROUNDS interleaved rounds (coordinator and
# direct alternate which goes first):
#   coordinator_top_ms        `siox top -n 20 --json` through the coordinator
#                             (the whole site)
#   direct_shard_top_ms       the same on shard 1's own database (a third of
#                             the site's activities)
#   coordinator_top_ratio     the first over the second
#   coordinator_tree_ms       `siox graph AID --json` through the coordinator,
#                             for CALLS sampled roots (POSIX writes) of shard 1
#   direct_shard_tree_ms      the same calls on shard 1 directly
#   coordinator_tree_ratio
#   coordinator_site_activities
# With COORD_BLAME=1, also `siox blame AID --json` for the same CALLS:
#   coordinator_blame_ms      through the coordinator
#   direct_shard_blame_ms     on shard 1 directly
#   coordinator_blame_ratio
#   coordinator_blame_verdict_differ  calls (of CALLS x ROUNDS) whose
#                             verdict, class, culprit or resource differ
#                             between the two: the peers and the kind's
#                             model are the whole site's through the
#                             coordinator, a third of it on shard 1, so
#                             some may (a brick slow against its shard's 4
#                             bricks, not against the site's 12)
#   coordinator_blame_waiting_mismatch  calls with the same resource whose
#                             waiting analysis differs (time queued, whom
#                             it queued behind): the call's tree and the
#                             resource's requests are on shard 1, so none
#                             should
#   baseline_coordinator_blame_differ  (with COORD_BASELINE) calls whose
#                             --json differs between the two coordinators
#   baseline_direct_shard_blame_ms  (with COORD_BASELINE) the baseline's
#                             siox blame on shard 1 directly, and
#   baseline_direct_shard_blame_differ  calls whose --json differs from
#                             this tree's there
# Each figure is the whole command as a user runs it (process start,
# connection, queries, JSON). The direct figures read a third of the data,
# so a ratio near 1 means the coordinator adds little beyond the fan-out.
#
# How the site is filled (about 15 min for 10M on the loaded 2-core
# machine): per shard, bench_blame_fill pushes its GlusterFS-like template
# (see its header: real Batch frames, MUNGE Hellos, the shard's own ingest
# and matcher), then SQL copies the template in time on that shard, each
# copy new processes drawn from the shard's own id range (as
# bench_blame_latency.sh does for one warehouse), then ANALYZE.
#
# COORD_SITE=DIR keeps the filled site in DIR (outside the temp dir) for
# the next run: a run whose DIR holds a filled site (DIR/filled) restarts
# it and skips the fill, so queries can be iterated on without refilling.
# The servers are stopped at exit either way; rm -rf DIR drops it.
# COORD_BASELINE=BUILD_DIR also times a second coordinator over the same
# shards, built by that tree's siox-server and queried with its siox
# (e.g. main's), interleaved with BUILD_DIR's: baseline_coordinator_top_ms
# and baseline_coordinator_tree_ms (baseline_coordinator_blame_ms).
# usage: bench_coordinator.sh BUILD_DIR [ACTIVITIES] [ROUNDS] [CALLS]
B=$(cd "$1" && pwd)
WANT=${2:-${COORD_ACTIVITIES:-10000000}}
ROUNDS=${3:-5}
CALLS=${4:-10}
top=$(cd "$(dirname "$0")/.." && pwd)
export SIOX_SERVER=$B/siox-server/siox-server SIOX_CLI=$B/siox-cli/siox
. "$top/tests/integration/lib.sh"
. "$top/bench/copy_in_time.sh"
SHARDS=3 JOBS=8 WRITES=1500 SPAN_NS=60000000000
SITE=${COORD_SITE:-$T/site}
BASE=${COORD_BASELINE:+$(cd "$COORD_BASELINE" && pwd)}
stop_all() {
  [ -f "$SITE/coord-base.pid" ] && stop_pid "$(cat "$SITE/coord-base.pid")" && rm -f "$SITE/coord-base.pid"
  "$top/scripts/siox-site" stop --dir "$SITE" >/dev/null 2>&1
  stop_postmaster "$SITE/coord-base"
  cleanup
}
trap stop_all EXIT

shard_sql() { env -u LD_PRELOAD psql "$(cat "$SITE/shard$1/conninfo")" -v ON_ERROR_STOP=1 -Atqc "$2"; }

# fill_shard K PORT: the template through shard K's server, then its copies.
fill_shard() {
  local k=$1 port=$2 n got=0
  n=$("$B/bench/bench_blame_fill" "$port" "$MUNGE_SOCK" "$JOBS" "$WRITES") || fail "bench_blame_fill (shard $k) failed"
  for _ in $(seq 3000); do
    got=$(shard_sql "$k" "SELECT count(*) FROM activities")
    [ "$got" -ge "$n" ] && break
    sleep 0.2
  done
  [ "$got" -ge "$n" ] || fail "shard $k stored $got of the $n activities sent"
  for _ in $(seq 1200); do
    [ "$(shard_sql "$k" "SELECT ((SELECT watermark FROM match_state) >= (SELECT max(rc_id) FROM remote_calls))::int")" = 1 ] && break
    sleep 0.5
  done
  local copies=$(((WANT / SHARDS + n - 1) / n - 1))
  echo "# shard $k: template $n activities, $copies copies" >&2
  if [ "$copies" -gt 0 ]; then
    shard_k() { shard_sql "$k" "$1"; }
    copy_in_time shard_k "$copies" "$SPAN_NS" ".s$k"
    shard_sql "$k" "ANALYZE" >/dev/null
  fi
}

t0=$(date +%s)
start_munged
"$top/scripts/siox-site" start --dir "$SITE" --shards $SHARDS --build "$B" -- --no-analyze --match-ms 200 >&2 ||
  fail "the site did not start"
IFS=, read -r -a SERVERS <"$SITE/servers"
if [ -f "$SITE/filled" ]; then
  echo "# reusing the filled site in $SITE" >&2
else
  for k in $(seq $SHARDS); do fill_shard "$k" "${SERVERS[$((k - 1))]##*:}"; done
  [ -n "${COORD_SITE:-}" ] && touch "$SITE/filled"
fi
if [ -n "$BASE" ]; then
  dbs=()
  for k in $(seq $SHARDS); do dbs+=(--shard-db "host=$SITE/shard$k/pg/run dbname=siox"); done
  rm -f "$SITE/coord-base/conninfo"
  mkdir -p "$SITE/coord-base"
  "$BASE/siox-server/siox-server" --coordinator --data-dir "$SITE/coord-base" "${dbs[@]}" >>"$SITE/coord-base.log" 2>&1 &
  echo $! >"$SITE/coord-base.pid"
  for _ in $(seq 1200); do [ -s "$SITE/coord-base/conninfo" ] && break; sleep 0.1; done
  [ -s "$SITE/coord-base/conninfo" ] || fail "the baseline coordinator did not start"
fi
n=$(env -u LD_PRELOAD psql "$(cat "$SITE/coord/conninfo")" -Atqc "SELECT count(*) FROM activities") ||
  fail "the coordinator does not answer"
echo "# site: $n activities, filled in $(($(date +%s) - t0)) s" >&2

mapfile -t AIDS < <(shard_sql 1 "
  SELECT a.aid FROM activities a TABLESAMPLE SYSTEM (5) REPEATABLE ($RANDOM) JOIN nodes n USING (node_id)
   WHERE a.parent_aid IS NULL AND n.swid = 'POSIX' ORDER BY random() LIMIT $CALLS")
[ "${#AIDS[@]}" -gt 0 ] || fail "no POSIX roots on shard 1 to draw"

# timed OUTVAR CLI DIR ARGS...: ms of one `CLI --data-dir DIR ARGS`.
timed() {
  local -n out=$1
  local name=$1 cli=$2 dir=$3 t
  shift 3
  t=$(date +%s%N)
  "$cli" --data-dir "$dir" "$@" >"$T/$name.json" 2>"$T/q.err" || fail "siox $* on $dir: $(cat "$T/q.err")"
  out+=($((($(date +%s%N) - t) / 1000000)))
}
# blame's waiting analysis, and its verdict, of the --json in $1.
waiting_key() { jq -c '[.resource.aid, .breakdown.queued_s, .breakdown.queued_behind]' "$1"; }
verdict_key() { jq -c '[.verdict, .class, .culprit.aid, .resource.aid]' "$1"; }
WAITING_MISMATCH=0 VERDICT_DIFFER=0 BASELINE_DIFFER=0 BASELINE_DIRECT_DIFFER=0
# one OUT... -- ARGS: the query ARGS on each target in turn (coordinator,
# direct, the baseline coordinator and the baseline on shard 1 if any),
# in the order given.
CT=() DT=() BT=() CG=() DG=() BG=() CB=() DB=() BB=() EB=()
one() {
  local outs=() o
  while [ "$1" != -- ]; do outs+=("$1"); shift; done
  shift
  for o in "${outs[@]}"; do
    case $o in
    C*) timed "$o" "$SIOX_CLI" "$SITE/coord" "$@" ;;
    D*) timed "$o" "$SIOX_CLI" "$SITE/shard1" "$@" ;;
    B*) [ -n "$BASE" ] && timed "$o" "$BASE/siox-cli/siox" "$SITE/coord-base" "$@" ;;
    E*) [ -n "$BASE" ] && timed "$o" "$BASE/siox-cli/siox" "$SITE/shard1" "$@" ;;
    esac
  done
  return 0
}
for r in $(seq "$ROUNDS"); do
  case $((r % 3)) in
  1) ot=(CT DT BT) og=(CG DG BG) ob=(CB EB DB BB) ;;
  2) ot=(DT BT CT) og=(DG BG CG) ob=(DB BB CB EB) ;;
  0) ot=(BT CT DT) og=(BG CG DG) ob=(BB EB CB DB) ;;
  esac
  one "${ot[@]}" -- top -n 20 --json
  for aid in "${AIDS[@]}"; do one "${og[@]}" -- graph "$aid" --json; done
  if [ -n "${COORD_BLAME:-}" ]; then
    for aid in "${AIDS[@]}"; do
      one "${ob[@]}" -- blame "$aid" --json
      [ "$(verdict_key "$T/CB.json")" = "$(verdict_key "$T/DB.json")" ] || {
        VERDICT_DIFFER=$((VERDICT_DIFFER + 1))
        echo "# blame $aid: coordinator $(verdict_key "$T/CB.json"), shard $(verdict_key "$T/DB.json")" >&2
      }
      [ "$(jq .resource.aid "$T/CB.json")" != "$(jq .resource.aid "$T/DB.json")" ] ||
        [ "$(waiting_key "$T/CB.json")" = "$(waiting_key "$T/DB.json")" ] || {
        WAITING_MISMATCH=$((WAITING_MISMATCH + 1))
        echo "# blame $aid waiting: coordinator $(waiting_key "$T/CB.json"), shard $(waiting_key "$T/DB.json")" >&2
      }
      [ -z "$BASE" ] || cmp -s "$T/CB.json" "$T/BB.json" || BASELINE_DIFFER=$((BASELINE_DIFFER + 1))
      [ -z "$BASE" ] || cmp -s "$T/DB.json" "$T/EB.json" || BASELINE_DIRECT_DIFFER=$((BASELINE_DIRECT_DIFFER + 1))
    done
    echo "# round $r: last blame ${CB[-1]} / ${DB[-1]}${BASE:+ / ${BB[-1]} / ${EB[-1]}} ms" >&2
  fi
  echo "# round $r: top ${CT[-1]} / ${DT[-1]}${BASE:+ / ${BT[-1]}} ms, last graph ${CG[-1]} / ${DG[-1]}${BASE:+ / ${BG[-1]}} ms" >&2
done
med() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ct=$(med "${CT[@]}") dt=$(med "${DT[@]}") cg=$(med "${CG[@]}") dg=$(med "${DG[@]}")
echo "coordinator_top_ms $ct ms"
echo "direct_shard_top_ms $dt ms"
echo "coordinator_top_ratio $(awk -v a="$ct" -v b="$dt" 'BEGIN {printf "%.2f", a / b}') x"
echo "coordinator_tree_ms $cg ms"
echo "direct_shard_tree_ms $dg ms"
echo "coordinator_tree_ratio $(awk -v a="$cg" -v b="$dg" 'BEGIN {printf "%.2f", a / b}') x"
if [ -n "${COORD_BLAME:-}" ]; then
  cb=$(med "${CB[@]}") db=$(med "${DB[@]}")
  echo "coordinator_blame_ms $cb ms"
  echo "direct_shard_blame_ms $db ms"
  echo "coordinator_blame_ratio $(awk -v a="$cb" -v b="$db" 'BEGIN {printf "%.2f", a / b}') x"
  echo "coordinator_blame_verdict_differ $VERDICT_DIFFER count"
  echo "coordinator_blame_waiting_mismatch $WAITING_MISMATCH count"
fi
if [ -n "$BASE" ]; then
  bt=$(med "${BT[@]}") bg=$(med "${BG[@]}")
  echo "baseline_coordinator_top_ms $bt ms"
  echo "baseline_coordinator_tree_ms $bg ms"
  if [ -n "${COORD_BLAME:-}" ]; then
    echo "baseline_coordinator_blame_ms $(med "${BB[@]}") ms"
    echo "baseline_coordinator_blame_differ $BASELINE_DIFFER count"
    echo "baseline_direct_shard_blame_ms $(med "${EB[@]}") ms"
    echo "baseline_direct_shard_blame_differ $BASELINE_DIRECT_DIFFER count"
  fi
fi
echo "coordinator_site_activities $n count"
