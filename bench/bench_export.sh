#!/usr/bin/env bash
# `siox export` throughput and memory (issue 14, part 4). Fills a private
# warehouse with a synthetic job shaped like a GlusterFS run (each of CALLS
# application writes -> implicit fs-client writev -> implicit brick WRITE ->
# explicit device write: 4 activities, 3 links, io/offset + io/bytes and a
# path per call), then times, ROUNDS times interleaved:
#   export_mb_per_s        siox export --format chrome-trace, MB (1e6 bytes) of JSON a second
#   export_csv_mb_per_s    siox export --format csv (three tables)
#   export_copy_mb_per_s   baseline: psql's COPY ... TO STDOUT of the same
#                          activity rows (the joins export makes, as text):
#                          what the database alone delivers
#   export_peak_rss_kb     siox export's peak RSS on the whole job, and
#   export_peak_rss_small_kb  on a job a tenth its size (flat memory: equal)
# Prints medians (NAME VALUE UNIT). Starts and stops its own siox-server.
# With EXPORT_BASE_CLI=PATH (another build's siox, e.g. before a change),
# each round also times that binary on the same warehouse, interleaved:
#   export_base_mb_per_s, export_base_csv_mb_per_s
# and, for both binaries, the CPU seconds a chrome-trace export costs, the
# client's (user + system) plus the PostgreSQL backend's (the postmaster's
# reaped children's time, read before and after): on a loaded machine the
# MB/s above measure the machine's share as much as the code, these do not.
#   export_cpu_s, export_base_cpu_s
#   bench/bench_export.sh [BUILD_DIR] [CALLS] [ROUNDS]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-$top/build}" && pwd)
CALLS=${2:-100000}
ROUNDS=${3:-3}
export SIOX_SERVER=$B/siox-server/siox-server SIOX_CLI=$B/siox-cli/siox
. "$top/tests/integration/lib.sh"

start_server --no-analyze
fill() { # JOB PROC0 NCALLS
  sql "
INSERT INTO daemons (daemon_id, hostname) VALUES ($2, 'h$2') ON CONFLICT DO NOTHING;
INSERT INTO processes (proc_id, daemon_id, host, pid, uid, nonce, exe, job) VALUES
  ($2, $2, 'host$2', 1001, 1000, $2, '/usr/bin/app', '$1'),
  ($2 + 1, $2, 'host$2', 1002, 0, $2 + 1, '/usr/sbin/glusterfs', ''),
  ($2 + 2, $2, 'srv$2', 2001, 0, $2 + 2, '/usr/sbin/glusterfsd', '');
INSERT INTO nodes (node_id, hwid, swid) VALUES
  ($2, 'host$2', 'POSIX'), ($2 + 1, 'host$2', 'GlusterFS-client'), ($2 + 2, 'srv$2:/b0', 'GlusterFS-brick'),
  ($2 + 3, 'dev$2', 'device');
INSERT INTO activity_types (type_id, node_id, name) VALUES
  ($2, $2, 'write'), ($2 + 1, $2 + 1, 'writev'), ($2 + 2, $2 + 2, 'WRITE'), ($2 + 3, $2 + 3, 'write');
CREATE TEMP TABLE calls AS
  SELECT i, 1700000000000000000::bigint + i * 20000::bigint AS s, 9000::bigint + i % 7 * 1000 AS d,
         ARRAY[(SELECT id FROM ontology WHERE name = 'io/offset'),
               (SELECT id FROM ontology WHERE name = 'io/bytes')] AS ids,
         ARRAY[i::bigint * 65536, 65536]::bigint[] AS vals
    FROM generate_series(0, $3 - 1) i;
INSERT INTO activities (aid, proc_id, parent_aid, node_id, type_id, start_ns, end_ns, attr_ids, attr_vals)
  SELECT ($2::bigint << 32) + i + 1, $2, NULL::bigint, $2, $2, s, s + d + 4000, ids, vals FROM calls
  UNION ALL SELECT (($2 + 1)::bigint << 32) + i + 1, $2 + 1, NULL, $2 + 1, $2 + 1, s + 500, s + d + 3500, ids, vals FROM calls
  UNION ALL SELECT (($2 + 2)::bigint << 32) + 2 * i + 1, $2 + 2, NULL, $2 + 2, $2 + 2, s + 1000, s + d + 3000, ids, vals FROM calls
  UNION ALL SELECT (($2 + 2)::bigint << 32) + 2 * i + 2, $2 + 2, (($2 + 2)::bigint << 32) + 2 * i + 1, $2 + 3, $2 + 3,
                   s + 1500, s + 1500 + d, ids, vals FROM calls;
INSERT INTO activity_text_attrs (aid, attr_id, value)
  SELECT ($2::bigint << 32) + i + 1, (SELECT id FROM ontology WHERE name = 'posix/path'), '/mnt/gluster/out.dat' FROM calls;
INSERT INTO causal_links (parent_aid, child_aid, confidence, overlap_bytes)
  SELECT ($2::bigint << 32) + i + 1, (($2 + 1)::bigint << 32) + i + 1, 0.9, 65536 FROM calls
  UNION ALL SELECT (($2 + 1)::bigint << 32) + i + 1, (($2 + 2)::bigint << 32) + 2 * i + 1, 0.8, 65536 FROM calls;
" >/dev/null
}
fill big 10 "$CALLS"
fill small 20 $((CALLS / 10))
sql "VACUUM ANALYZE" >/dev/null
log "warehouse: $(sql "SELECT count(*) FROM activities") activities" >&2

# The baseline: the database's own text output of the activity rows export
# reads (same set, same joins), through psql to a file.
copy_sql="COPY (SELECT a.aid, a.parent_aid, a.proc_id, p.pid, p.host, p.exe, p.job, a.node_id, n.hwid, n.swid,
  n.iid, ty.name, a.start_ns, a.end_ns, a.err, a.attr_vals FROM activities a JOIN nodes n USING (node_id)
  JOIN activity_types ty USING (type_id) LEFT JOIN processes p USING (proc_id)
  WHERE a.proc_id BETWEEN 10 AND 12) TO STDOUT WITH (FORMAT csv)"
conn=$(cat "$SERVER_DIR/conninfo")

# CPU seconds of the cluster's exited backends so far (postmaster cutime + cstime).
pg_cpu() {
  local pm
  pm=$(head -n 1 "$SERVER_DIR/pg/postmaster.pid")
  awk -v hz="$(getconf CLK_TCK)" '{ printf "%.3f", ($16 + $17) / hz }' "/proc/$pm/stat"
}
# cpu_export CLI OUT CPU_FILE: one chrome-trace export; appends its client + backend CPU seconds.
cpu_export() {
  local before after
  before=$(pg_cpu)
  /usr/bin/time -f "%U %S" -o "$T/cpu.client" "$1" --db "$conn" export --job big --format chrome-trace --output "$2" ||
    fail "export chrome-trace ($1)"
  sleep 0.5 # the backend exits after the client disconnects
  after=$(pg_cpu)
  awk -v b="$before" -v a="$after" '{ printf "%.3f\n", $1 + $2 + a - b }' "$T/cpu.client" >>"$3"
}

# mbps BYTES NS
mbps() { awk -v b="$1" -v ns="$2" 'BEGIN { printf "%.1f", b / 1e6 / (ns / 1e9) }'; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
: >"$T/chrome" && : >"$T/csv" && : >"$T/copy" && : >"$T/rss" && : >"$T/rss_small" && : >"$T/bchrome" && : >"$T/bcsv"
: >"$T/cpu" && : >"$T/bcpu"
BASE=${EXPORT_BASE_CLI:-}
base_round() { # the baseline binary's chrome trace and csv, same job
  local t0 t1
  t0=$(date +%s%N)
  "$BASE" --db "$conn" export --job big --format chrome-trace --output "$T/btrace.json" || fail "base export chrome-trace"
  t1=$(date +%s%N)
  mbps "$(stat -c %s "$T/btrace.json")" $((t1 - t0)) >>"$T/bchrome"; echo >>"$T/bchrome"
  rm -rf "$T/bcsvdir"
  t0=$(date +%s%N)
  "$BASE" --db "$conn" export --job big --format csv --output "$T/bcsvdir" || fail "base export csv"
  t1=$(date +%s%N)
  mbps "$(cat "$T"/bcsvdir/*.csv | wc -c)" $((t1 - t0)) >>"$T/bcsv"; echo >>"$T/bcsv"
  cpu_export "$BASE" "$T/btrace.cpu.json" "$T/bcpu"
}
for r in $(seq "$ROUNDS"); do
  if [ -n "$BASE" ] && [ $((r % 2)) = 1 ]; then base_round; fi
  t0=$(date +%s%N)
  /usr/bin/time -f %M -o "$T/rss.$r" "$SIOX_CLI" --db "$conn" export --job big --format chrome-trace \
    --output "$T/trace.json" || fail "export chrome-trace"
  t1=$(date +%s%N)
  mbps "$(stat -c %s "$T/trace.json")" $((t1 - t0)) >>"$T/chrome"; echo >>"$T/chrome"
  cat "$T/rss.$r" >>"$T/rss"
  t0=$(date +%s%N)
  env -u LD_PRELOAD psql "$conn" -Atqc "$copy_sql" >"$T/copy.out" || fail "COPY baseline"
  t1=$(date +%s%N)
  mbps "$(stat -c %s "$T/copy.out")" $((t1 - t0)) >>"$T/copy"; echo >>"$T/copy"
  rm -rf "$T/csvdir"
  t0=$(date +%s%N)
  "$SIOX_CLI" --db "$conn" export --job big --format csv --output "$T/csvdir" || fail "export csv"
  t1=$(date +%s%N)
  mbps "$(cat "$T"/csvdir/*.csv | wc -c)" $((t1 - t0)) >>"$T/csv"; echo >>"$T/csv"
  /usr/bin/time -f %M -o "$T/rss_small.$r" "$SIOX_CLI" --db "$conn" export --job small --format chrome-trace \
    --output "$T/small.json" || fail "export small"
  cat "$T/rss_small.$r" >>"$T/rss_small"
  cpu_export "$SIOX_CLI" "$T/trace.cpu.json" "$T/cpu"
  if [ -n "$BASE" ] && [ $((r % 2)) = 0 ]; then base_round; fi
done
if [ -n "$BASE" ]; then
  # the same events, in whatever order the server sent the rows (one event a
  # line between commas; flow ids number the links in that order)
  ev() { sed 's/^,//; s/,$//; s/"id":[0-9]*,//' "$1" | sort; }
  cmp -s <(ev "$T/trace.json") <(ev "$T/btrace.json") ||
    log "note: the baseline's trace holds other events than this build's" >&2
  echo "export_base_mb_per_s $(grep . "$T/bchrome" | median) MB/s"
  echo "export_base_csv_mb_per_s $(grep . "$T/bcsv" | median) MB/s"
fi
log "trace: $(stat -c %s "$T/trace.json") bytes, small trace $(stat -c %s "$T/small.json") bytes" >&2
echo "export_mb_per_s $(grep . "$T/chrome" | median) MB/s"
echo "export_csv_mb_per_s $(grep . "$T/csv" | median) MB/s"
echo "export_copy_mb_per_s $(grep . "$T/copy" | median) MB/s"
echo "export_cpu_s $(grep . "$T/cpu" | median) s"
[ -n "$BASE" ] && echo "export_base_cpu_s $(grep . "$T/bcpu" | median) s"
echo "export_peak_rss_kb $(median <"$T/rss") kB"
echo "export_peak_rss_small_kb $(median <"$T/rss_small") kB"
