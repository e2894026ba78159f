#!/usr/bin/env bash
# Cross-shard causality (issue 15 §2): 3 shards that know each other
# (--shard-peer), a coordinator, and the example chain split over two
# daemons routed to different shards: the application and its file-system
# client on daemon 1 (shard 1), the storage server on daemon 2 (shard 2).
# The remote call's object (a test/handle) belongs to shard
# 1 + fnv1a(type, value) mod 3; three objects are picked so that the owner
# is the client's shard, the server's shard and the third one. Checks,
# through the coordinator:
#  1. every client write linked to its server call exactly once, the link
#     stored on the owner; a chain with both halves on shard 1 (its object
#     owned by shard 2) linked once, on shard 1; `siox blame --json` of the
#     slowest application write served by the slowed device names it;
#     every activity once;
#  2. kill -9 of shard 1's server (the client's, and an owner) mid-stream,
#     then restart: still every pair linked exactly once;
#  3. shard 3 down while its remote calls are forwarded: they wait in the
#     other shards' outboxes (`siox status`: forward_pending,
#     forward_peers_down), and are linked once it is back;
#  4. the same rows sent again: the owner stores and links nothing twice;
#  5. the owner's server paused while the other shard's receives reach its
#     database: linked once its own senders come in;
#  6. the two halves name the object by two global names (the client A,
#     the server B) and a mapping A -> B joins them (schema 033): reported
#     on the third shard before the calls (A owned by the server's shard,
#     B by the third), then on the client's shard after the calls are
#     stored (A owned by the client's shard, B by the server's): each pair
#     linked exactly once, on B's owner.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/shard_site.sh"

WRITES=60
# chain OBJECT [D [SERVER_OBJECT]]: the client half on daemon 1, the server
# half on daemon D (2 unless given), naming the object SERVER_OBJECT if
# given; device dev1 is slowed. Its pid in CHAIN[OBJECT].
declare -A CHAIN
chain() {
  SIOX_SOCKET="$T/daemon1.sock" "$SIOX_CHAIN" --writes $WRITES --slow-device 1 --slow-us 20000 --fast-us 300 \
    --object "$1" ${3:+--server-object "$3"} --server-socket "$T/daemon${2:-2}.sock" >>"$T/chain.log" 2>&1 &
  CHAIN[$1]=$!
  PIDS+=("${CHAIN[$1]}")
}

# until FN ARG SQL WANT: FN ARG SQL says WANT within 60 s (fails on more
# when the answer is a count).
until_is() {
  local n=""
  for _ in $(seq 300); do
    n=$("$1" "$2" "$3" 2>/dev/null || echo "")
    [ "$n" = "$4" ] && return 0
    sleep 0.2
  done
  fail "$1 $2: '$3' says '$n' after 60 s, want '$4'"
}
coord() { coord_sql "$2"; }

# Implicit links of the site: each fs-client write (parent) to the server's
# handle_write (child); all, distinct children, and per shard.
LINKS="SELECT count(*) || '/' || count(DISTINCT l.child_aid) FROM causal_links l
        JOIN activities p ON p.aid = l.parent_aid JOIN activity_types pt ON pt.type_id = p.type_id
        JOIN activities c ON c.aid = l.child_aid JOIN activity_types ct ON ct.type_id = c.type_id
       WHERE pt.name = 'write' AND ct.name = 'handle_write' AND l.confidence = 1"

# check_site ACTS PAIRS: through the coordinator, ACTS activities once each
# and PAIRS implicit links, one per server call, none twice.
check_site() {
  until_is coord - "SELECT count(*) || '/' || count(DISTINCT aid) FROM activities" "$1/$1"
  until_is coord - "$LINKS" "$2/$2"
  sleep 1 # a pass more: nothing is linked twice later
  [ "$(coord_sql "SELECT count(*) FROM causal_links")" -eq "$2" ] || fail "more links than pairs"
  [ "$(coord_sql "SELECT count(*) FROM remote_calls WHERE origin IS NOT NULL")" -eq \
    "$(coord_sql "SELECT count(*) FROM shard_inbox")" ] || fail "a forwarded call stored twice or without its key"
}

log "3 shards with peers, a coordinator, 2 daemons"
shard_site_start
for d in 1 2; do start_site_daemon $d; done

# OBJ[PK]: the object of phase P whose remote calls shard K owns (the
# server's rule; each phase writes new objects).
type=$(shard_sql 1 "SELECT id FROM ontology WHERE name = 'test/handle'")
declare -A OBJ
while read -r key name; do OBJ[$key]=$name; done < <(python3 - "$type" <<'PY'
import sys
t = sys.argv[1]
def owner(value):
    h = 14695981039346656037
    for b in (t + "\x1f" + value).encode():
        h = ((h ^ b) * 1099511628211) % 2**64
    return 1 + h % 3
names = {}
for i in range(10000):
    k = owner(f"file-{i}")
    names.setdefault(k, []).append(f"file-{i}")
for p in (1, 2, 3):
    for k in (1, 2, 3):
        print(f"{p}{k} {names[k][p - 1]}")
print(f"local {names[2][3]}")
print(f"paused {names[1][3]}")
# phase 6: the client's name A and the server's name B of one object
print(f"early_a {names[2][4]}")
print(f"early_b {names[3][4]}")
print(f"late_a {names[1][5]}")
print(f"late_b {names[2][5]}")
PY
)
log "objects: ${OBJ[11]} (shard 1), ${OBJ[12]} (shard 2), ${OBJ[13]} (shard 3)"

log "1: client on shard 1, server on shard 2, owners 1, 2, 3; and both on shard 1, owner 2"
for k in 1 2 3; do chain "${OBJ[1$k]}"; done
chain "${OBJ[local]}" 1 # both halves on shard 1: linked there, and not again on the owner
for o in "${OBJ[11]}" "${OBJ[12]}" "${OBJ[13]}" "${OBJ[local]}"; do wait "${CHAIN[$o]}" || fail "chain $o failed"; done
check_site $((4 * 4 * WRITES)) $((4 * WRITES))
n=$(shard_sql 1 "SELECT count(*) FROM causal_links l JOIN remote_calls r ON r.aid = l.child_aid
                  JOIN descriptors d ON d.desc_id = r.desc_id WHERE d.value = '${OBJ[local]}'")
[ "$n" -eq $WRITES ] || fail "shard 1 holds $n links of its own pairs on ${OBJ[local]}, want $WRITES"
for k in 1 2 3; do # each link on its object's owner
  n=$(shard_sql $k "SELECT count(*) FROM causal_links l JOIN remote_calls r ON r.aid = l.child_aid
                     JOIN descriptors d ON d.desc_id = r.desc_id WHERE d.value = '${OBJ[1$k]}'")
  [ "$n" -eq $WRITES ] || fail "shard $k holds $n links of ${OBJ[1$k]}, want $WRITES"
done
aid=$(coord_sql "SELECT aw.aid FROM activities aw JOIN activities fw ON fw.parent_aid = aw.aid
                   JOIN causal_links l ON l.parent_aid = fw.aid JOIN activities dw ON dw.parent_aid = l.child_aid
                   JOIN nodes n ON n.node_id = dw.node_id
                  WHERE n.hwid = 'dev1' ORDER BY aw.end_ns - aw.start_ns DESC, aw.aid LIMIT 1")
[ -n "$aid" ] || fail "no application write reaches dev1 through a link"
"$SIOX_CLI" --data-dir "$COORD" blame "$aid" --json >"$T/blame.json" || fail "siox blame $aid through the coordinator"
culprit=$(json_get "$T/blame.json" '(j["culprit"] or {}).get("hwid", "none") + "/" + (j["culprit"] or {}).get("swid", "none")')
[ "$culprit" = "dev1/device" ] || fail "blame of $aid names $culprit, want dev1/device"
"$SIOX_CLI" --data-dir "$COORD" graph "$aid" --json >"$T/graph.json" || fail "siox graph $aid"
assert_graph "$T/graph.json" app fs-client server device || fail "the tree of $aid does not reach the device"

log "2: kill -9 of shard 1's server mid-stream"
for k in 1 2 3; do chain "${OBJ[2$k]}"; done
for _ in $(seq 300); do
  [ "$(shard_sql 1 "SELECT count(*) FROM activities")" -gt $((3 * 2 * WRITES + 4 * WRITES + 30)) ] && break
  sleep 0.05
done
kill -KILL "${SHARD_PIDS[1]}"
wait "${SHARD_PIDS[1]}" 2>/dev/null || true
fast_stop_postmaster "$T/shard1"
start_shard 1
wait_port "${PORTS[1]}" "shard 1 again"
for k in 1 2 3; do wait "${CHAIN[${OBJ[2$k]}]}" || fail "chain ${OBJ[2$k]} failed"; done
check_site $((7 * 4 * WRITES)) $((7 * WRITES))

log "3: shard 3 down while its remote calls are forwarded"
stop_pid "${SHARD_PIDS[3]}"
[ -f "$T/shard3/pg/postmaster.pid" ] && fail "shard 3's PostgreSQL still runs"
chain "${OBJ[33]}"
wait "${CHAIN[${OBJ[33]}]}" || fail "chain ${OBJ[33]} failed"
# Sends wait on the client's shard, receives on the server's.
until_is shard_sql 1 "SELECT count(*) FROM shard_outbox WHERE owner = 3" $WRITES
until_is shard_sql 2 "SELECT count(*) FROM shard_outbox WHERE owner = 3" $WRITES
grep -q "forward: shard 3 unreachable" "$T/shard1.log" || fail "shard 1 did not say shard 3 is unreachable"
# `siox status` shows the waiting calls and the unreachable owner.
status_of() {
  "$SIOX_CLI" --data-dir "$T/shard1" status --socket "$T/daemon1.sock" --server "127.0.0.1:${PORTS[1]}" --json \
    >"$T/status1.json" 2>/dev/null || true
  json_get "$T/status1.json" 'str(j["server"]["counters"]["forward_pending"]) + "/" + str(j["server"]["counters"]["forward_peers_down"])'
}
st=""
for _ in $(seq 50); do st=$(status_of 2>/dev/null || echo "-"); [ "$st" = "$WRITES/1" ] && break; sleep 0.2; done
[ "$st" = "$WRITES/1" ] || fail "siox status of shard 1: forward_pending/forward_peers_down $st, want $WRITES/1"
# A copy of shard 1's waiting rows, to send them again below.
shard_sql 1 "CREATE TABLE outbox_again AS SELECT * FROM shard_outbox"
start_shard 3
wait_port "${PORTS[3]}" "shard 3 again"
until_is shard_sql 1 "SELECT count(*) FROM shard_outbox" 0
until_is shard_sql 2 "SELECT count(*) FROM shard_outbox" 0
check_site $((8 * 4 * WRITES)) $((8 * WRITES))

log "4: rows delivered again (as when an origin dies between the owner's commit and its delete)"
stubs=$(shard_sql 3 "SELECT count(*) FROM remote_calls WHERE origin = 1")
shard_sql 1 "INSERT INTO shard_outbox SELECT * FROM outbox_again; DROP TABLE outbox_again"
until_is shard_sql 1 "SELECT count(*) FROM shard_outbox" 0
check_site $((8 * 4 * WRITES)) $((8 * WRITES))
[ "$(shard_sql 3 "SELECT count(*) FROM remote_calls WHERE origin = 1")" -eq "$stubs" ] ||
  fail "shard 3 stored a call of shard 1 twice"
[ "$stubs" -eq $((3 * WRITES)) ] || fail "shard 3 holds $stubs calls of shard 1, want the sends of 3 chains"

log "5: the owner's server paused: other shards' receives are there before its own senders"
# Shard 1 owns the object; its server stops (its PostgreSQL runs on), so
# shard 2's forwarder stores the server half's receives there first, and
# the client's sends reach shard 1's ingest (the in-memory window) after
# them: they must still be linked (the window leaves calls its shard owns
# to the SQL matcher).
kill -STOP "${SHARD_PIDS[1]}"
chain "${OBJ[paused]}"
wait "${CHAIN[${OBJ[paused]}]}" || { kill -CONT "${SHARD_PIDS[1]}"; fail "chain ${OBJ[paused]} failed"; }
until_is shard_sql 1 "SELECT count(*) FROM remote_calls r JOIN descriptors d ON d.desc_id = r.desc_id
                       WHERE r.origin = 2 AND d.value = '${OBJ[paused]}'" $WRITES
kill -CONT "${SHARD_PIDS[1]}"
check_site $((9 * 4 * WRITES)) $((9 * WRITES))
# The window is on with peers: shard 1 linked its own pairs in memory.
n=$(shard_sql 1 "SELECT count(*) FROM remote_calls r JOIN descriptors d ON d.desc_id = r.desc_id
                  WHERE r.in_memory AND r.kind = 'R' AND d.value = '${OBJ[local]}'")
[ "$n" -gt 0 ] || fail "shard 1 linked none of its own pairs in memory"

log "6: one object, two global names joined by a mapping (before the calls, on shard 3; after them, on shard 1)"
start_site_daemon 3
# names A B: links of the client's writes on A to the server's calls on B.
pair_links() {
  coord_sql "SELECT count(*) || '/' || count(DISTINCT l.child_aid) FROM causal_links l
              JOIN remote_calls s ON s.aid = l.parent_aid AND s.kind = 'S' AND s.origin IS NULL
              JOIN descriptors sd ON sd.desc_id = s.desc_id AND sd.value = '$1'
              JOIN remote_calls r ON r.aid = l.child_aid AND r.kind = 'R' AND r.origin IS NULL
              JOIN descriptors rd ON rd.desc_id = r.desc_id AND rd.value = '$2'"
}
# report_map D A B: daemon D's process reports that A is also named B.
report_map() { SIOX_SOCKET="$T/daemon$1.sock" "$SIOX_CHAIN" --object "$2" --map-to "$3" >>"$T/chain.log" || fail "mapping $2 -> $3"; }
report_map 3 "${OBJ[early_a]}" "${OBJ[early_b]}"
for k in 1 2; do until_is shard_sql $k "SELECT count(*) FROM shard_map_inbox WHERE applied" 1; done
chain "${OBJ[early_a]}" 2 "${OBJ[early_b]}"
wait "${CHAIN[${OBJ[early_a]}]}" || fail "chain ${OBJ[early_a]} failed"
check_site $((10 * 4 * WRITES)) $((10 * WRITES))
[ "$(pair_links "${OBJ[early_a]}" "${OBJ[early_b]}")" = "$WRITES/$WRITES" ] || fail "mapped early: not $WRITES links"
n=$(shard_sql 3 "SELECT count(*) FROM causal_links l JOIN remote_calls r ON r.aid = l.child_aid
                  JOIN descriptors d ON d.desc_id = r.desc_id WHERE d.value = '${OBJ[early_b]}'")
[ "$n" -eq $WRITES ] || fail "shard 3 (the owner of ${OBJ[early_b]}) holds $n of its links, want $WRITES"

chain "${OBJ[late_a]}" 2 "${OBJ[late_b]}"
wait "${CHAIN[${OBJ[late_a]}]}" || fail "chain ${OBJ[late_a]} failed"
until_is coord - "SELECT count(*) FROM activities" $((11 * 4 * WRITES))
sleep 1 # a matcher pass on each shard: nothing links the two names yet
[ "$(pair_links "${OBJ[late_a]}" "${OBJ[late_b]}")" = "0/0" ] || fail "linked before the mapping"
report_map 1 "${OBJ[late_a]}" "${OBJ[late_b]}"
check_site $((11 * 4 * WRITES)) $((11 * WRITES))
[ "$(pair_links "${OBJ[late_a]}" "${OBJ[late_b]}")" = "$WRITES/$WRITES" ] || fail "mapped late: not $WRITES links"
# The client's sends reached the server's shard (B's owner) once each.
n=$(shard_sql 2 "SELECT count(*) || '/' || count(DISTINCT r.aid) FROM remote_calls r
                  JOIN descriptors d ON d.desc_id = r.desc_id WHERE r.origin = 1 AND d.value = '${OBJ[late_a]}'")
[ "$n" = "$WRITES/$WRITES" ] || fail "shard 2 holds $n sends of ${OBJ[late_a]}, want $WRITES/$WRITES"
log "ok"
