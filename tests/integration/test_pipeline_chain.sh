#!/usr/bin/env bash
# End to end through the real binaries: a two-process, three-layer chain made
# with the client API goes through siox-daemon and siox-server into a private
# PostgreSQL. Asserts: exactly the activities made arrive, the causal tree of
# the slowest app write spans app -> fs-client -> (implicit link) server ->
# device, and `siox blame` names the slowed device and never the healthy one.
. "$(dirname "$0")/lib.sh"

WRITES=12
start_server
start_daemon "" --batch-ms 50

total=0
for slow in $(shuf -e 0 1) ; do
  log "run: device dev$slow slowed"
  SIOX_JOB_ID="job-slow$slow" "$SIOX_CHAIN" --writes $WRITES --slow-device "$slow" --slow-us 30000 --fast-us 2000 \
    --object "chain-slow$slow" >>"$T/chain.log" 2>&1 || fail "chain program failed"
  total=$((total + 4 * WRITES))
  wait_activities $total

  # The app write whose device write was the run's slowest (the call a user
  # asks about); `siox top` lists the run's app writes.
  siox_cli top --job "job-slow$slow" --layer app --name write -n 1 --json >"$T/top.json" || fail "siox top failed"
  top_first_aid "$T/top.json" >/dev/null || fail "no app write of job-slow$slow in siox top"
  aid=$(root_of_slowest "job-slow$slow" device write app)
  [ -n "$aid" ] || fail "no app write of job-slow$slow reached a device"
  siox_cli graph "$aid" --json >"$T/graph.json" || fail "siox graph $aid failed"
  assert_graph "$T/graph.json" app fs-client server device || fail "graph of $aid lacks a layer or the implicit link"
  siox_cli blame "$aid" --json >"$T/blame.json" || fail "siox blame $aid failed"
  culprit=$(json_get "$T/blame.json" '(j["culprit"] or {}).get("hwid", "") + "/" + (j["culprit"] or {}).get("swid", "")')
  [ "$culprit" != / ] || fail "blame named no culprit for $aid: $(head -c 3000 "$T/blame.json")"
  [ "$culprit" = "dev$slow/device" ] || fail "blame named $culprit, the slowed device is dev$slow"
  ex=$(json_get "$T/blame.json" 'j["culprit"]["exclusive_s"]')
  python3 -c "import sys; sys.exit(0 if float('$ex') >= 0.025 else 1)" \
    || fail "culprit exclusive_s $ex is below the injected 30 ms"
  log "blame names dev$slow (exclusive ${ex}s)"
done

siox_cli status --socket "$DAEMON_SOCK" --server "127.0.0.1:$SERVER_PORT" --json >"$T/status.json" \
  || fail "siox status reports a component down"
# siox status signs its request with MUNGE (lib.sh exports SIOX_MUNGE_SOCKET): the server shows its counters.
n=$(json_get "$T/status.json" 'j["server"]["counters"].get("activities_ingested", -1)')
[ "$n" -eq "$total" ] || fail "siox status: server activities_ingested $n, want $total"
n=$(SIOX_MUNGE_SOCKET=$T/none.sock siox_cli status --server "127.0.0.1:$SERVER_PORT" --socket "$DAEMON_SOCK" --json |
  python3 -c 'import json,sys; c=json.load(sys.stdin)["server"]["counters"]; print(len(c) if "db_ok" in c else -1)')
[ "$n" -eq 1 ] || fail "siox status without MUNGE: $n server counters, want db_ok alone"
log "pipeline chain test passed"
