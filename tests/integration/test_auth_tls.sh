#!/usr/bin/env bash
# Authenticated daemons end to end, through the real binaries:
#  - MUNGE (private munged) + TLS (self-signed certificate for 127.0.0.1,
#    TLS forced with --tls-cert/--tls-key): a daemon with --tls-ca stores
#    every activity of a chain run, and its daemons row records the owner
#    (munge, our uid);
#  - a plaintext daemon against the TLS server is refused and stores nothing;
#  - `siox status` with SIOX_TLS_CA speaks TLS and, MUNGE-signed, sees the counters;
#  - a server asked to listen beyond loopback without TLS refuses to start.
. "$(dirname "$0")/lib.sh"

command -v openssl >/dev/null || fail "openssl is not installed"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" \
  -keyout "$T/tls.key" -out "$T/tls.crt" 2>"$T/openssl.log" || fail "openssl req failed"

log "beyond loopback without TLS: refused"
rc=0
timeout 20 "$SIOX_SERVER" --listen "0.0.0.0:$(free_port)" --data-dir "$T/refused" >"$T/refused.log" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "server on 0.0.0.0 without TLS exited $rc, want 1"
grep -q "refusing to listen on 0.0.0.0 without TLS" "$T/refused.log" || fail "no refusal logged: $(cat "$T/refused.log")"

start_server --tls-cert "$T/tls.crt" --tls-key "$T/tls.key"
start_daemon "" --batch-ms 50 --tls-ca "$T/tls.crt"

WRITES=10
SIOX_JOB_ID=job-tls "$SIOX_CHAIN" --writes $WRITES --slow-device 0 --slow-us 1000 --fast-us 500 --object chain-tls \
  >>"$T/chain.log" 2>&1 || fail "chain program failed"
wait_activities $((4 * WRITES))
grep -q "connected to 127.0.0.1" "$T/daemon.log" || fail "the daemon never connected"
for _ in $(seq 50); do grep -q "hint link; identity: munge" "$T/server.log" && break; sleep 0.1; done
grep -q "hint link; identity: munge" "$T/server.log" || fail "the daemon's hint link did not connect over TLS"
owner=$(sql "SELECT owner_auth || ' ' || owner_uid FROM daemons")
[ "$owner" = "munge $(id -u)" ] || fail "daemons row owner '$owner', want 'munge $(id -u)'"
log "TLS + MUNGE: $((4 * WRITES)) activities stored, owner $owner"

log "a plaintext daemon against the TLS server"
"$SIOX_DAEMON" --socket "$T/plain.sock" --server "127.0.0.1:$SERVER_PORT" --state-dir "$T/plain" \
  --munge-socket "$MUNGE_SOCK" >"$T/plain-daemon.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do grep -q "TLS handshake failed" "$T/server.log" && break; sleep 0.1; done
grep -q "TLS handshake failed" "$T/server.log" || fail "the server did not refuse a plaintext peer"
grep -q "connected to" "$T/plain-daemon.log" && fail "a plaintext daemon was accepted by the TLS server"
log "siox status over TLS"
SIOX_TLS_CA=$T/tls.crt siox_cli status --socket "$DAEMON_SOCK" --server "127.0.0.1:$SERVER_PORT" --json >"$T/status.json" \
  || fail "siox status over TLS failed: $(cat "$T/status.json")"
n=$(json_get "$T/status.json" 'j["server"]["counters"].get("activities_ingested", -1)')
[ "$n" -eq $((4 * WRITES)) ] || fail "siox status over TLS: activities_ingested $n"
log "TLS auth test passed"
