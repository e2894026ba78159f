#!/usr/bin/env bash
# What row-level security costs the reader (issue 9, part 6): two users
# (nobody, daemon) each run the chain workload with WRITES writes (4
# activities a write), then `siox top -n 20` and `siox graph` of the slowest
# activity are timed REPS times each as root (the cluster's superuser:
# bypasses row-level security: the baseline) and as nobody (sees half the
# rows through the policies). Prints medians (NAME VALUE UNIT):
#   rls_top_ms_admin / rls_top_ms_user
#   rls_graph_ms_admin / rls_graph_ms_user
#   rls_warehouse_activities   the warehouse's size
# Needs root; starts and stops its own siox-server and siox-daemon (by pid).
#   bench/bench_rls.sh [BUILD_DIR] [WRITES] [REPS]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-$top/build}" && pwd)
WRITES=${2:-25000}
REPS=${3:-7}
export SIOX_SERVER=$B/siox-server/siox-server SIOX_DAEMON=$B/siox-daemon/siox-daemon SIOX_CLI=$B/siox-cli/siox
CHAIN=$B/examples/siox-example-chain
. "$top/tests/integration/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "bench_rls.sh: needs root" >&2; exit 77; }
as() { local u=$1; shift; setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups env HOME=/ "$@"; }

start_server --no-analyze
start_daemon ""
for u in nobody daemon; do
  SIOX_JOB_ID=bench-$u as $u "$CHAIN" -n "$WRITES" --fast-us 0 --slow-us 50 -o "bench-$u" >/dev/null 2>&1 \
    || fail "workload of $u"
done
wait_activities $((8 * WRITES)) 600
for _ in $(seq 50); do [ "$(sql "SELECT count(*) FROM siox_users WHERE role = 'nobody'")" = 1 ] && break; sleep 0.2; done
sql "VACUUM ANALYZE" >/dev/null

# median_ms USER CMD...: median wall time of REPS runs, in ms.
median_ms() {
  local u=$1
  shift
  for _ in $(seq "$REPS"); do
    local t0 t1
    t0=$(date +%s%N)
    as "$u" "$@" >/dev/null || fail "$u: $* failed"
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000))
  done | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)] / 1000}'
}
aid=$(as nobody "$SIOX_CLI" --data-dir "$SERVER_DIR" top -n 1 --json | python3 -c \
  'import json,sys; r=json.load(sys.stdin); r=r.get("activities",r) if isinstance(r,dict) else r; print(r[0]["aid"])')
echo "rls_warehouse_activities $(sql "SELECT count(*) FROM activities") activities"
echo "rls_top_ms_admin $(median_ms root "$SIOX_CLI" --data-dir "$SERVER_DIR" top -n 20) ms"
echo "rls_top_ms_user $(median_ms nobody "$SIOX_CLI" --data-dir "$SERVER_DIR" top -n 20) ms"
echo "rls_graph_ms_admin $(median_ms root "$SIOX_CLI" --data-dir "$SERVER_DIR" graph "$aid") ms"
echo "rls_graph_ms_user $(median_ms nobody "$SIOX_CLI" --data-dir "$SERVER_DIR" graph "$aid") ms"
