# A site of 3 shards that know each other (--shard-peer), a coordinator
# and daemons routed to one shard each, on loopback (sourced after lib.sh
# by the shard tests). shard_site_start starts it; shard_sql K and
# coord_sql query a shard or the coordinator; start_site_daemon D starts
# daemon D (socket $T/daemonD.sock) routed to shard D. SHARD_PEERS=0 before
# sourcing: shards that do not know each other (no cross-shard links).
PORTS=()
SHARD_PIDS=()
for k in 1 2 3; do PORTS[k]=$(free_port); done
LIST="127.0.0.1:${PORTS[1]},127.0.0.1:${PORTS[2]},127.0.0.1:${PORTS[3]}"
COORD="$T/coord"

shard_cleanup() {
  local i
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do stop_pid "${PIDS[$i]}"; done
  for d in "$COORD" "$T"/shard*; do stop_postmaster "$d"; done
  cleanup
}

peer() { echo "host=$T/shard$1/pg/run dbname=siox user=postgres"; }
start_shard() {
  local k=$1 j peers=()
  mkdir -p "$T/shard$k"
  for j in 1 2 3; do [ "${SHARD_PEERS:-1}" = 1 ] && [ "$j" -ne "$k" ] && peers+=(--shard-peer "$j=$(peer "$j")"); done
  "$SIOX_SERVER" --shard "$k/3" "${peers[@]}" --listen "127.0.0.1:${PORTS[$k]}" --data-dir "$T/shard$k" \
    --auth none --no-analyze >>"$T/shard$k.log" 2>&1 &
  SHARD_PIDS[k]=$!
  PIDS+=("${SHARD_PIDS[$k]}")
}
# A killed server's PostgreSQL, stopped the way the server stops it (fast:
# the other shards' forwarders hold connections, which a smart shutdown,
# lib.sh's TERM, would wait for).
fast_stop_postmaster() {
  local pid
  pid=$(head -n 1 "$1/pg/postmaster.pid" 2>/dev/null) || return 0
  kill -INT "$pid" 2>/dev/null || return 0
  for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  fail "the PostgreSQL of $1 did not stop"
}
shard_sql() { env -u LD_PRELOAD psql "$(cat "$T/shard$1/conninfo")" -v ON_ERROR_STOP=1 -Atqc "$2"; }
coord_sql() { env -u LD_PRELOAD psql "$(cat "$COORD/conninfo")" -v ON_ERROR_STOP=1 -Atqc "$1"; }

# Daemon d (1..3) has id d+2, so (d+2) mod 3 picks entry d-1: shard d.
start_site_daemon() {
  local d=$1
  mkdir -p "$T/daemon$d"
  chmod 700 "$T/daemon$d"
  [ -f "$T/daemon$d/daemon.id" ] || printf '%016x\n' $((d + 2)) >"$T/daemon$d/daemon.id"
  "$SIOX_DAEMON" --socket "$T/daemon$d.sock" --server "$LIST" --state-dir "$T/daemon$d" --auth none \
    --batch-ms 20 --batch-activities 256 >>"$T/daemon$d.log" 2>&1 &
  PIDS+=("$!")
  for _ in $(seq 100); do [ -S "$T/daemon$d.sock" ] && break; sleep 0.1; done
  [ -S "$T/daemon$d.sock" ] || fail "daemon $d did not start"
  grep -q "server $d of 3 (daemon id 000000000000000$((d + 2)) mod 3): 127.0.0.1:${PORTS[$d]}" "$T/daemon$d.log" ||
    fail "daemon $d was not routed to shard $d"
}

# shard_site_start: the 3 shards and the coordinator, up and built.
shard_site_start() {
  trap shard_cleanup EXIT
  local k
  for k in 1 2 3; do start_shard $k; done
  for k in 1 2 3; do wait_port "${PORTS[$k]}" "shard $k"; done
  rm -f "$COORD/conninfo"
  "$SIOX_SERVER" --coordinator --data-dir "$COORD" --shard-db "$(peer 1)" --shard-db "$(peer 2)" \
    --shard-db "$(peer 3)" >>"$T/coord.log" 2>&1 &
  PIDS+=("$!")
  for _ in $(seq 600); do [ -s "$COORD/conninfo" ] && break; sleep 0.1; done
  [ -s "$COORD/conninfo" ] || fail "the coordinator wrote no conninfo"
}
