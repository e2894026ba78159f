#!/usr/bin/env bash
# The job views on a job of at least 1M activities (issue 14): prints
#   summary_ms                 `siox summary --job J --json`, whole command (median)
#   summary_baseline_ms        `siox workload extract --job J`, the job-wide
#                              reader that existed before, on the same job (median)
#   web_job_page_ms            the job page of `siox web` in headless Chromium:
#                              navigation start to the page's first full render
#                              (summary, heatmap drawn), median; target <= 1000.
#                              The browser is running already, as a user's is:
#                              it opens a blank page first, which then
#                              navigates to the job page (a new document)
#   web_job_page_browser_start_ms  the same with the browser started on the
#                              job page (the figure's definition before
#                              2026-11-25): its navigation start comes before
#                              the browser's network service is up, so about
#                              1 s of the browser's own start-up counts in it
#   web_job_api_ms             the page's document alone (/api/job, bins=80,
#                              curl after the page): the server's share of it
#   web_job_activities         the job's size
#   jobs_ms                    `siox jobs --json`, whole command (median), the
#                              job's sums stored by the listing before
#   jobs_cold_ms               the same with the stored sums removed first
#   web_job_cold_api_ms        the first /api/job (bins=80) with the job's
#                              stored documents removed (median); its listed
#                              sums too, so that siox web does not compute the
#                              page ahead of the view at the same time
#   web_job_ahead_ms           siox web computing the page ahead of its first
#                              view (web/README.md): from a listing of the job
#                              (its documents removed before) until its page
#                              is stored (median; 10-15 s of it are the wait
#                              for the listed stamp to hold)
#   web_job_first_view_api_ms  the first /api/job after that (median)
# With OLD_CLI=path (a siox binary of an older commit), the same rounds also
# run it, interleaved, against its own `siox web`: jobs_old_ms (it stores
# nothing), web_job_cold_api_old_ms, web_job_page_old_ms and
# web_job_page_browser_start_old_ms (its page, with the front end built
# into it, before or after the new one in turn).
# ROUNDS (default 3) interleaved rounds of them all. WEB_PAGE_ONLY=1: the
# page figures and web_job_api_ms only (a round in seconds, not minutes).
#
# The warehouse (cached in BUILD/bench/web-warehouse; WEB_REFILL=1 rebuilds):
# one real run of mpi_io_workload (4 ranks, MPI-IO over POSIX, N=64 blocks)
# ingested by siox-server and siox-daemon, then its activities (and text
# attributes) copied in SQL within the same four processes, later in time,
# until the job holds WANT activities: one long MPI job, as if it ran the
# same phase again and again. The timing runs on the warehouse's PostgreSQL
# alone (pg_ctl), at rest.
# usage: bench_web_job.sh BUILD_DIR [ROUNDS]
B=$(cd "$1" && pwd)
ROUNDS=${2:-${WEB_ROUNDS:-3}}
top=$(cd "$(dirname "$0")/.." && pwd)
export SIOX_SERVER=$B/siox-server/siox-server SIOX_DAEMON=$B/siox-daemon/siox-daemon SIOX_CLI=$B/siox-cli/siox
. "$top/tests/integration/lib.sh"
WANT=${WEB_ACTIVITIES:-1050000}
JOB=webbench
CACHE=$B/bench/web-warehouse
FILL_VERSION=1 # bump when fill() changes: the cache is rebuilt
stamp="v$FILL_VERSION $(cat "$top"/warehouse/schema/*.sql | sha1sum | cut -c1-12) $WANT"
SERVER_DIR=$CACHE
PG_BIN=$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)
pg() {
  local as=()
  [ "$(id -u)" = 0 ] && as=(runuser -u postgres --)
  if [ "$1" = stop ]; then set -- -m fast stop; fi
  "${as[@]}" "$PG_BIN/pg_ctl" -D "$CACHE/pg" -l "$CACHE/pg/log" -w -t 300 "$@"
}
trap 'cleanup; pg stop >/dev/null 2>&1; stop_postmaster "$CACHE"' EXIT

fill() {
  rm -rf "$CACHE"
  mkdir -p "$CACHE"
  chmod 755 "$CACHE"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_io=romio321
  start_server --no-analyze
  start_daemon "" --batch-ms 50
  mpirun --oversubscribe -np 4 -x LD_PRELOAD="$B/instrumentation/mpi/libsiox-mpi.so:$B/instrumentation/posix/libsiox-posix.so" \
    -x SIOX_SOCKET="$DAEMON_SOCK" -x SIOX_JOB_ID=$JOB "$B/tests/mpi_io_workload" /dev/shm/siox-webbench.$$ "$T/m" 4096 64 \
    >>"$T/workload.log" 2>&1 || fail "mpi_io_workload failed"
  rm -f /dev/shm/siox-webbench.$$
  local n=0
  for _ in $(seq 300); do
    n=$(sql "SELECT count(*) FROM activities a JOIN activity_types t USING (type_id) WHERE t.name = 'MPI_Finalize'")
    [ "$n" -ge 4 ] && break
    sleep 0.2
  done
  sleep 2
  stop_pid "$DAEMON_PID"
  stop_pid "$SERVER_PID"
  pg start >/dev/null
  n=$(sql "SELECT count(*) FROM activities a JOIN processes p USING (proc_id) WHERE p.job = '$JOB'")
  local span copies
  span=$(sql "SELECT max(end_ns) - min(start_ns) + 1000000 FROM activities a JOIN processes p USING (proc_id) WHERE p.job = '$JOB'")
  copies=$(((WANT + n - 1) / n - 1))
  echo "# template: $n activities of job $JOB; $copies copies" >&2
  # a copy keeps its process (proc_id << 32) and moves its local number up
  # by k << 20 (the template's numbers are far below 2^20)
  for k0 in $(seq 1 50 "$copies"); do
    local k1=$((k0 + 49 > copies ? copies : k0 + 49))
    sql "INSERT INTO activities (aid, proc_id, parent_aid, node_id, type_id, start_ns, end_ns, err,
                                 attr_ids, attr_vals, real_ids, real_vals)
         SELECT a.aid + (k::bigint << 20), a.proc_id, a.parent_aid + (k::bigint << 20), a.node_id, a.type_id,
                a.start_ns + k::bigint * $span, a.end_ns + k::bigint * $span, a.err, a.attr_ids, a.attr_vals, a.real_ids, a.real_vals
           FROM activities a JOIN processes p USING (proc_id), generate_series($k0, $k1) k
          WHERE p.job = '$JOB' AND (a.aid & 1048575) = (a.aid & 4294967295);
         INSERT INTO activity_text_attrs (aid, attr_id, value)
         SELECT t.aid + (k::bigint << 20), t.attr_id, t.value
           FROM activity_text_attrs t JOIN activities a ON a.aid = t.aid JOIN processes p USING (proc_id),
                generate_series($k0, $k1) k
          WHERE p.job = '$JOB' AND (a.aid & 1048575) = (a.aid & 4294967295)" >/dev/null
  done
  sql "ANALYZE" >/dev/null
  pg stop >/dev/null
  echo "$stamp" >"$CACHE/ready"
}

if [ "${WEB_REFILL:-0}" = 1 ] || [ "$(cat "$CACHE/ready" 2>/dev/null)" != "$stamp" ]; then fill; fi
pg start >/dev/null
n=$(sql "SELECT count(*) FROM activities a JOIN processes p USING (proc_id) WHERE p.job = '$JOB'")
[ "$n" -ge 1000000 ] || fail "job $JOB holds $n activities, fewer than 1M"

WEB_PORT=$(free_port)
"$SIOX_CLI" --data-dir "$CACHE" web --listen "127.0.0.1:$WEB_PORT" >>"$T/web.log" 2>&1 &
PIDS+=($!)
wait_port "$WEB_PORT" "siox web"
OLD_CLI=${OLD_CLI:-}
if [ -n "$OLD_CLI" ]; then
  OLD_PORT=$(free_port)
  "$OLD_CLI" --data-dir "$CACHE" web --listen "127.0.0.1:$OLD_PORT" >>"$T/web-old.log" 2>&1 &
  PIDS+=($!)
  wait_port "$OLD_PORT" "the old siox web"
fi

ms() { local t=$(date +%s%N); "$@" >/dev/null 2>>"$T/err.log" || fail "$* failed: $(tail -n 2 "$T/err.log")"; echo $((($(date +%s%N) - t) / 1000000)); }
# The page logs "siox-ready job MS" (performance.now(): since navigation start) once drawn.
# page_ms: in a running browser. The browser opens a blank page (a data: URL)
# that, 1 s after its load, navigates to the job page: a new document whose
# navigation start is the click a user makes (the '#' of the job page's URL
# is %23 inside the data: URL, where it would end the script).
# browser_start_ms: the browser started on the job page itself.
page_ms() { # ROUND [PORT]
  local url="http://127.0.0.1:${2:-$WEB_PORT}/%23/job/$JOB"
  open_page "$1.${2:-new}" "data:text/html,<script>onload=function(){setTimeout(function(){location.href='$url'},1000)}</script>"
}
browser_start_ms() { open_page "$1.${2:-new}.start" "http://127.0.0.1:${2:-$WEB_PORT}/#/job/$JOB"; }
open_page() { # TAG URL
  local log=$T/chromium.$1.log
  chromium --headless=new --no-sandbox --disable-gpu --user-data-dir="$T/chromium" --enable-logging=stderr --v=0 \
    --window-size=1400,1800 "$2" >"$log" 2>&1 &
  local pid=$!
  for _ in $(seq 9000); do # 15 min at most: the machine may be loaded
    grep -q "siox-ready job" "$log" && break
    grep -q "siox-error" "$log" && break
    sleep 0.1
  done
  stop_pid "$pid"
  grep -o "siox-ready job [0-9]*" "$log" | awk '{print $3}' | head -n 1 | grep . || fail "the job page did not render: $(grep -m1 siox-error "$log")"
}
api_ms() { curl -s -f -o /dev/null -w '%{time_total}' "http://127.0.0.1:${1:-$WEB_PORT}/api/job?job=$JOB&bins=80" |
  awk '{printf "%d\n", $1 * 1000}' | grep . || fail "/api/job failed"; }
# cold: without the job's stored documents (summary, heatmap) or sums (jobs)
forget() { sql "DELETE FROM job_aggregates WHERE job = '$JOB' AND kind IN ($1)" >/dev/null; }
cold_api_ms() { forget "'summary', 'heatmap', 'jobs'"; api_ms "$1"; }
# the page computed by siox web after a listing, then the first view
ahead_ms() {
  forget "'summary', 'heatmap', 'jobs'"
  local t=$(date +%s%N)
  "$SIOX_CLI" --data-dir "$CACHE" jobs --json >/dev/null 2>>"$T/err.log" || fail "siox jobs failed"
  local q="SELECT count(*) FROM job_aggregates WHERE job = '$JOB' AND (kind = 'summary' OR (kind = 'heatmap' AND bins = 80))"
  for _ in $(seq 3000); do # 5 min at most
    [ "$(sql "$q")" = 2 ] && break
    sleep 0.1
  done
  [ "$(sql "$q")" = 2 ] || fail "siox web did not store the job's page ahead of its view: $(tail -n 2 "$T/web.log")"
  echo $((($(date +%s%N) - t) / 1000000))
}
jobs_cold_ms() { forget "'jobs'"; ms "$1" --data-dir "$CACHE" jobs --json; }
S=() X=() W=() WB=() A=() J=() JC=() CA=() JO=() CAO=() WO=() WBO=() AH=() FV=()
ALL=1
[ "${WEB_PAGE_ONLY:-0}" = 1 ] && ALL=
for r in $(seq "$ROUNDS"); do
  if [ -n "$ALL" ]; then
    S+=("$(ms "$SIOX_CLI" --data-dir "$CACHE" summary --job "$JOB" --json)")
    X+=("$(ms "$SIOX_CLI" --data-dir "$CACHE" workload extract --job "$JOB" -o "$T/wl")")
  fi
  # the old build's page too (its own front end), first in every other round
  if [ -n "$OLD_CLI" ] && [ $((r % 2)) = 0 ]; then
    WO+=("$(page_ms "$r" "$OLD_PORT")") WBO+=("$(browser_start_ms "$r" "$OLD_PORT")")
  fi
  W+=("$(page_ms "$r")") WB+=("$(browser_start_ms "$r")")
  if [ -n "$OLD_CLI" ] && [ $((r % 2)) = 1 ]; then
    WO+=("$(page_ms "$r" "$OLD_PORT")") WBO+=("$(browser_start_ms "$r" "$OLD_PORT")")
  fi
  A+=("$(api_ms)")
  if [ -z "$ALL" ]; then
    echo "# round $r: page ${W[-1]} ms, api ${A[-1]} ms, page with browser start ${WB[-1]} ms${OLD_CLI:+, old: page ${WO[-1]} ms (with browser start ${WBO[-1]} ms)}" >&2
    continue
  fi
  if [ -n "$OLD_CLI" ]; then
    JO+=("$(ms "$OLD_CLI" --data-dir "$CACHE" jobs --json)")
    CAO+=("$(cold_api_ms "$OLD_PORT")")
  fi
  JC+=("$(jobs_cold_ms "$SIOX_CLI")")
  J+=("$(ms "$SIOX_CLI" --data-dir "$CACHE" jobs --json)")
  CA+=("$(cold_api_ms "$WEB_PORT")")
  AH+=("$(ahead_ms)") FV+=("$(api_ms)")
  echo "# round $r: summary ${S[-1]} ms, extract ${X[-1]} ms, page ${W[-1]} ms, api ${A[-1]} ms," \
    "jobs ${J[-1]} ms (cold ${JC[-1]} ms), cold api ${CA[-1]} ms, ahead ${AH[-1]} ms, first view api ${FV[-1]} ms, page with browser start ${WB[-1]} ms${OLD_CLI:+, old: page ${WO[-1]} ms (with browser start ${WBO[-1]} ms), jobs ${JO[-1]} ms, cold api ${CAO[-1]} ms}" >&2
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
out() { # NAME VALUES...: the median, when there are values
  local name=$1
  shift
  [ $# -gt 0 ] && echo "$name $(median "$@") ms"
  return 0
}
out summary_ms "${S[@]}"
out summary_baseline_ms "${X[@]}"
out web_job_page_ms "${W[@]}"
out web_job_page_browser_start_ms "${WB[@]}"
out web_job_api_ms "${A[@]}"
out jobs_ms "${J[@]}"
out jobs_cold_ms "${JC[@]}"
out web_job_cold_api_ms "${CA[@]}"
out web_job_ahead_ms "${AH[@]}"
out web_job_first_view_api_ms "${FV[@]}"
out web_job_page_old_ms "${WO[@]}"
out web_job_page_browser_start_old_ms "${WBO[@]}"
out jobs_old_ms "${JO[@]}"
out web_job_cold_api_old_ms "${CAO[@]}"
echo "web_job_activities $n activities"
