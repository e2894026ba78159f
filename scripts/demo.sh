#!/usr/bin/env bash
# The main job: builds SIOX, starts the whole stack (siox-server with its
# private PostgreSQL, siox-daemon), runs an instrumented two-process I/O chain
# with one slowed storage device, then shows what SIOX found:
#   siox top, the causal tree of the slowest write, siox blame, an SVG graph.
# Everything runs on loopback and under DEMO_DIR (default ./.siox-demo); all
# processes are stopped by pid at the end. Set SIOX_DEMO_KEEP=1 to keep the
# stack running after the demo (the script prints how to stop it).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
DEMO_DIR=${DEMO_DIR:-$top/.siox-demo}
PORT=${SIOX_DEMO_PORT:-7410}

"$top/scripts/install-deps.sh"
echo "== building"
"$top/scripts/build.sh" "$top/build"
B=$top/build

rm -rf "$DEMO_DIR"
mkdir -p "$DEMO_DIR"
chmod 755 "$DEMO_DIR"
PIDS=()
stop_all() {
  [ "${SIOX_DEMO_KEEP:-0}" = 1 ] && { echo "stack kept running: kill ${PIDS[*]}"; return; }
  local i
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
    kill -TERM "${PIDS[$i]}" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "${PIDS[$i]}" 2>/dev/null || break; sleep 0.1; done
  done
  echo "== stack stopped"
}
trap stop_all EXIT

echo "== starting siox-server (private PostgreSQL under $DEMO_DIR/server)"
"$B/siox-server/siox-server" --listen "127.0.0.1:$PORT" --data-dir "$DEMO_DIR/server" \
  >"$DEMO_DIR/server.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 300); do [ -s "$DEMO_DIR/server/conninfo" ] && break; sleep 0.1; done
[ -s "$DEMO_DIR/server/conninfo" ] || { echo "siox-server did not start; see $DEMO_DIR/server.log"; tail "$DEMO_DIR/server.log"; exit 1; }

echo "== starting siox-daemon"
export SIOX_SOCKET=$DEMO_DIR/daemon.sock
"$B/siox-daemon/siox-daemon" --socket "$SIOX_SOCKET" --server "127.0.0.1:$PORT" \
  --state-dir "$DEMO_DIR/daemon" --batch-ms 50 >"$DEMO_DIR/daemon.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [ -S "$SIOX_SOCKET" ] && break; sleep 0.1; done

siox() { "$B/siox-cli/siox" --data-dir "$DEMO_DIR/server" "$@"; }

echo "== running the instrumented chain: app -> fs-client -> server -> devices dev0/dev1 (dev1 slowed)"
SIOX_JOB_ID=demo "$B/examples/siox-example-chain" --writes 20 --slow-device 1 --slow-us 25000 --fast-us 2000
for _ in $(seq 100); do
  n=$(psql "$(cat "$DEMO_DIR/server/conninfo")" -Atqc "SELECT count(*) FROM activities" 2>/dev/null || echo 0)
  [ "$n" -ge 80 ] && break
  sleep 0.2
done

echo; echo "== siox top"
siox top --job demo -n 8
aid=$(siox top --job demo --layer app --name write -n 1 --json |
  python3 -c 'import json,sys; j=json.load(sys.stdin); j=j.get("activities", j) if isinstance(j, dict) else j; print(j[0]["aid"])')
echo; echo "== siox graph $aid   (the slowest app write, through every layer)"
siox graph "$aid"
echo; echo "== siox blame $aid"
siox blame "$aid"
siox graph "$aid" --format dot >"$DEMO_DIR/graph.dot"
dot -Tsvg "$DEMO_DIR/graph.dot" -o "$DEMO_DIR/graph.svg"
echo; echo "== SVG of the graph: $DEMO_DIR/graph.svg"
echo; echo "== siox status"
siox status --socket "$SIOX_SOCKET" --server "127.0.0.1:$PORT" || true
