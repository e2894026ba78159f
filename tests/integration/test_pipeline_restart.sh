#!/usr/bin/env bash
# Exactly-once delivery across failures, through the real binaries:
#  1. kill -9 siox-server mid-stream, restart it on the same data directory;
#  2. cut the daemon's TCP connection to the server mid-stream (kill -9 of a
#     loopback relay between them), then restore it.
# In both cases every activity the workload made must be in the warehouse
# exactly once. The total alone could hide a lost write balanced by a copy
# stored under another aid, so each process must hold every
# write offset equally often (offsets are unique per write in the chain).
. "$(dirname "$0")/lib.sh"

WRITES=1500
RELAY_PORT=$(free_port)
RELAY_PID=""
start_relay() {
  python3 "$(dirname "$0")/tcp_proxy.py" "$RELAY_PORT" "$SERVER_PORT" >>"$T/relay.log" 2>&1 &
  RELAY_PID=$!
  PIDS+=("$RELAY_PID")
  wait_port "$RELAY_PORT" relay
}

# Waits until some but not all of the run's activities have arrived.
wait_midstream() {
  for _ in $(seq 300); do
    n=$(sql "SELECT count(*) FROM activities" 2>/dev/null || echo 0)
    [ "$n" -gt "$1" ] && return 0
    sleep 0.05
  done
  fail "no activities arrived"
}

start_server
start_relay
start_daemon "127.0.0.1:$RELAY_PORT" --batch-ms 20 --batch-activities 256

run_chain() {
  "$SIOX_CHAIN" --writes $WRITES --slow-device -1 --fast-us 200 --object "$1" \
    >>"$T/chain.log" 2>&1 &
  CHAIN_PID=$!
  PIDS+=("$CHAIN_PID")
}

log "1: kill -9 the server mid-stream"
run_chain restart-server
wait_midstream 0
kill -KILL "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || true
sleep 1
start_server
wait "$CHAIN_PID" || fail "workload failed while the server restarted"
wait_activities $((4 * WRITES)) 120
log "server restart: $((4 * WRITES)) activities, exactly once"

log "2: cut the daemon's connection mid-stream"
before=$((4 * WRITES))
run_chain restart-link
wait_midstream "$before"
kill -KILL "$RELAY_PID"
wait "$RELAY_PID" 2>/dev/null || true
sleep 1
start_relay
wait "$CHAIN_PID" || fail "workload failed while the link was down"
wait_activities $((8 * WRITES)) 120
# Per process: WRITES distinct write offsets, each carried by the same
# number of activities (2 in the writer: app and fs-client; 1 in the server:
# the device write), for the 2 runs x 2 processes.
bad=$(sql "SELECT count(*) FROM (
             SELECT proc_id, count(*) AS offsets, min(n) AS lo, max(n) AS hi FROM (
               SELECT a.proc_id, x.value, count(*) AS n
                 FROM activities a JOIN activity_attributes x ON x.aid = a.aid AND x.name = 'io/offset'
                GROUP BY 1, 2) o
              GROUP BY 1) g
            WHERE offsets <> $WRITES OR lo <> hi")
procs=$(sql "SELECT count(DISTINCT proc_id) FROM activities")
[ "$procs" -eq 4 ] || fail "$procs processes in the warehouse, want 4"
[ "$bad" -eq 0 ] || fail "$bad processes hold a write offset missing or more often than the others"
log "link cut: $((8 * WRITES)) activities, exactly once"
