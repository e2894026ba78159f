#!/usr/bin/env bash
# Per-daemon tokens through the real binaries (--auth token): the server's
# token file lists one 'DAEMON_ID TOKEN' line per daemon. Daemon A with its
# token stores every activity and owns its id (owner_auth 'token'); daemon B
# presenting A's token is refused and stores nothing; the old one-shared-
# token file is refused at start.
. "$(dirname "$0")/lib.sh"

echo "just-one-shared-secret" >"$T/shared.token"
rc=0
timeout 20 "$SIOX_SERVER" --listen "127.0.0.1:$(free_port)" --data-dir "$T/old" --token-file "$T/shared.token" \
  >"$T/old.log" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "a shared token file: server exited $rc, want 1"
grep -q "a single shared token is no longer accepted" "$T/old.log" || fail "no reason logged: $(cat "$T/old.log")"

# The daemons' ids are fixed by writing their state files first.
mkdir -p "$T/daemon" "$T/b"
echo 00000000000000a1 >"$T/daemon/daemon.id"
echo 00000000000000b2 >"$T/b/daemon.id"
echo "secret-of-a" >"$T/a.token"
printf '# daemon tokens\na1 secret-of-a\nb2 secret-of-b\n' >"$T/server.tokens"
start_server --auth token --token-file "$T/server.tokens"
start_daemon "" --batch-ms 50 --token-file "$T/a.token"

WRITES=8
SIOX_JOB_ID=job-token "$SIOX_CHAIN" --writes $WRITES --slow-device 1 --slow-us 1000 --fast-us 500 --object chain-tok \
  >>"$T/chain.log" 2>&1 || fail "chain program failed"
wait_activities $((4 * WRITES))
owner=$(sql "SELECT owner_auth FROM daemons WHERE daemon_id = 161")
[ "$owner" = token ] || fail "daemon a1's owner '$owner', want token"

log "daemon b2 with a1's token"
"$SIOX_DAEMON" --socket "$T/b.sock" --server "127.0.0.1:$SERVER_PORT" --state-dir "$T/b" --batch-ms 50 \
  --token-file "$T/a.token" >"$T/b-daemon.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [ -S "$T/b.sock" ] && break; sleep 0.1; done
SIOX_SOCKET=$T/b.sock "$SIOX_CHAIN" --writes 2 --object chain-b >>"$T/chain.log" 2>&1 || true
for _ in $(seq 100); do grep -q "bad token for daemon 00000000000000b2" "$T/server.log" && break; sleep 0.1; done
grep -q "bad token for daemon 00000000000000b2" "$T/server.log" || fail "b2 with a1's token was not refused"
grep -q "connected to" "$T/b-daemon.log" && fail "b2 with a1's token was accepted"
[ "$(sql "SELECT count(*) FROM daemons WHERE daemon_id = 178")" -eq 0 ] || fail "b2 has a daemons row"
wait_activities $((4 * WRITES)) 2
log "per-daemon token test passed"
