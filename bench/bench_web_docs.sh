#!/usr/bin/env bash
# Latency of the documents `siox web` builds in-process on its warm pooled
# connections since they stopped being a spawned `siox graph|top|capacity
# --json` (web/README.md, "Documents in-process"). Prints, as medians over
# ROUNDS (default 30) requests each (curl's whole request on loopback):
#   web_graph_ms       GET /api/graph?aid=A (the call's causal tree)
#   web_top_ms         GET /api/top?job=J&n=20
#   web_component_ms   GET /api/component?component=device&since=1d
# and with OLD_CLI=path (a siox binary of an older commit, e.g. one that
# spawns the CLI) the same requests to its own `siox web` on the same
# warehouse, interleaved in alternating order: web_graph_old_ms,
# web_top_old_ms, web_component_old_ms, and web_docs_same_json_percent (graph
# and top documents equal from both servers).
# The warehouse: the instrumented chain (siox-example-chain: app, fs-client,
# server, device; implicit links) run CHAIN_RUNS times (default 4) of 50
# writes, one device slowed, ingested by siox-server and siox-daemon.
# usage: bench_web_docs.sh BUILD_DIR [ROUNDS]
B=$(cd "$1" && pwd)
ROUNDS=${2:-${WEB_DOCS_ROUNDS:-30}}
top=$(cd "$(dirname "$0")/.." && pwd)
export SIOX_SERVER=$B/siox-server/siox-server SIOX_DAEMON=$B/siox-daemon/siox-daemon SIOX_CLI=$B/siox-cli/siox
export SIOX_CHAIN=$B/examples/siox-example-chain
. "$top/tests/integration/lib.sh"
. "$top/tests/integration/web_lib.sh"
OLD=${OLD_CLI:-}
JOB=docs-bench-$$

start_server
start_daemon "" --batch-ms 50
for r in $(seq "${CHAIN_RUNS:-4}"); do
  SIOX_JOB_ID=$JOB "$SIOX_CHAIN" --writes 50 --slow-device 1 --slow-us 5000 --fast-us 1000 --object "$JOB-$r" \
    >>"$T/chain.log" 2>&1 || fail "chain program failed"
done
want=$((${CHAIN_RUNS:-4} * 200))
for _ in $(seq 600); do
  n=$(sql "SELECT count(*) FROM activities a JOIN processes p USING (proc_id) WHERE p.job = '$JOB'")
  [ "$n" -ge "$want" ] && break
  sleep 0.2
done
[ "$n" -ge "$want" ] || fail "the chain's activities did not arrive ($n of $want)"
sleep 2
siox_cli capacity --update >/dev/null || fail "siox capacity --update failed"
AID=$(root_of_slowest "$JOB" device write app)
[ -n "$AID" ] || fail "no app write of $JOB reached a device"

start_web
NEW_URL=$URL
if [ -n "$OLD" ]; then
  OLD_PORT=$(free_port)
  "$OLD" --data-dir "$SERVER_DIR" web --listen "127.0.0.1:$OLD_PORT" >>"$T/web-old.log" 2>&1 &
  PIDS+=($!)
  wait_port "$OLD_PORT" "the old siox web"
  OLD_URL="http://127.0.0.1:$OLD_PORT"
fi

paths=("graph?aid=$AID" "top?job=$JOB&n=20" "component?component=device&since=1d")
names=(graph top component)
# time_ms URL FILE: the request's whole time in ms; the body in FILE
time_ms() {
  local code t
  read -r code t < <(curl -s -o "$2" -w '%{http_code} %{time_total}\n' "$1")
  [ "$code" = 200 ] || fail "GET $1: HTTP $code: $(head -c 300 "$2")"
  python3 -c "print(round($t * 1000, 3))"
}
same=0 compared=0
for r in $(seq "$ROUNDS"); do
  for i in 0 1 2; do
    order="new old"
    [ $((r % 2)) = 0 ] && order="old new"
    for who in $order; do
      [ "$who" = old ] && [ -z "$OLD" ] && continue
      url=$NEW_URL
      [ "$who" = old ] && url=$OLD_URL
      echo "${names[$i]} $who $(time_ms "$url/api/${paths[$i]}" "$T/$who.$i.json")" >>"$T/times"
    done
    if [ -n "$OLD" ] && [ "$i" -lt 2 ]; then
      compared=$((compared + 1))
      python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' \
        "$T/new.$i.json" "$T/old.$i.json" && same=$((same + 1))
    fi
  done
done
python3 - "$T/times" <<'EOF'
import statistics, sys
t = {}
for line in open(sys.argv[1]):
    name, who, ms = line.split()
    t.setdefault((name, who), []).append(float(ms))
for name in ("graph", "top", "component"):
    for who, suffix in (("new", ""), ("old", "_old")):
        if (name, who) in t:
            print(f"web_{name}{suffix}_ms {statistics.median(t[(name, who)]):.1f} ms")
EOF
[ -n "$OLD" ] && echo "web_docs_same_json_percent $((100 * same / compared)) %"
exit 0
