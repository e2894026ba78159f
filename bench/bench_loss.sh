#!/usr/bin/env bash
# loss_uncounted_daemon_kill9: activities lost and counted nowhere when the
# node daemon is killed with kill -9 (several times) under a steady producer,
# with the real siox-daemon, siox-server and PostgreSQL. The goal is 0.
#   made       what the producer made (its own count)
#   stored     what the warehouse holds of it
#   counted    what is counted as dropped, anywhere (siox status --job)
#   uncounted  made - stored - counted
# Prints (NAME VALUE UNIT):
#   loss_uncounted_daemon_kill9   uncounted activities
#   loss_counted_daemon_kill9     counted drops (the rings overflow while no
#                                 daemon runs; counted, so not silent)
#   loss_made_daemon_kill9        activities made
# Starts and stops its own server and daemon (by pid).
#   bench/bench_loss.sh [BUILD_DIR] [N] [RATE] [KILLS]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-$top/build}" && pwd)
N=${2:-1000000}
RATE=${3:-200000}
KILLS=${4:-5}
export SIOX_SERVER=$B/siox-server/siox-server SIOX_DAEMON=$B/siox-daemon/siox-daemon SIOX_CLI=$B/siox-cli/siox
P=$B/tests/loss_producer
. "$top/tests/integration/lib.sh"
exec 3>&1 1>&2 # figures on the caller's stdout, the rest on stderr

start_server
start_daemon "127.0.0.1:$SERVER_PORT" --batch-ms 50
period=$(python3 -c "print($N / $RATE / ($KILLS + 1))")
SIOX_JOB_ID=bench-kill9 SIOX_EXIT_TIMEOUT_MS=5000 "$P" "$N" "$RATE" >"$T/p.out" &
PROD=$!
PIDS+=("$PROD")
for _ in $(seq "$KILLS"); do
  sleep "$period"
  kill -KILL "$DAEMON_PID"
  wait "$DAEMON_PID" 2>/dev/null || true
  start_daemon "127.0.0.1:$SERVER_PORT" --batch-ms 50
done
wait "$PROD"
log "producer: $(cat "$T/p.out")"
prev=""
for _ in $(seq 240); do # until the account stops moving
  siox_cli status --job bench-kill9 --json >"$T/s.json" 2>/dev/null || true
  cur=$(json_get "$T/s.json" '"%d %d %d %d" % (j["job"]["made"], j["job"]["stored"], j["job"]["dropped_total"], j["job"]["processes_unreported"])' 2>/dev/null || echo "")
  set -- $cur
  [ -n "$cur" ] && [ "$cur" = "$prev" ] && [ "$4" -eq 0 ] && [ "$1" -gt 0 ] && break
  prev=$cur
  sleep 1
done
set -- $cur
log "made $1 stored $2 counted $3"
echo "loss_uncounted_daemon_kill9 $(($1 - $2 - $3)) activities" >&3
echo "loss_counted_daemon_kill9 $3 activities" >&3
echo "loss_made_daemon_kill9 $1 activities" >&3
