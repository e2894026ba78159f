#!/usr/bin/env bash
# Cross-shard links (issue 15 §2): what forwarding remote calls to their
# owner shard costs against linking on one shard, on the same 3-shard site
# with peers (tests/integration/shard_site.sh: 3 siox-servers --shard K/3
# --shard-peer ..., a coordinator, daemon 1 on shard 1, daemon 2 on shard 2).
# Per round, in alternating order, one siox-example-chain run of WRITES
# writes (no device delay) in each mode:
#   local    client and server half on daemon 1, the object owned by shard
#            1: both calls stored and linked on shard 1 (the SQL matcher,
#            as every shard with peers)
#   forward  client on daemon 1, server half on daemon 2, the object owned
#            by shard 3: both calls forwarded (outbox, forwarder, inbox),
#            linked on shard 3
# Prints medians over ROUNDS:
#   shard_forward_pairs_per_s / shard_local_pairs_per_s   WRITES over the
#            time from the chain's start to its last link on the owner
#   shard_forward_lag_ms / shard_local_lag_ms   from the chain's end to its
#            last link
# The chain itself (two processes, a socket round trip per write) bounds
# the pairs per second of both modes; the lag is what forwarding adds.
# usage: bench_shard_forward.sh BUILD_DIR [WRITES] [ROUNDS]
B=$(cd "$1" && pwd)
WRITES=${2:-3000}
ROUNDS=${3:-5}
top=$(cd "$(dirname "$0")/.." && pwd)
export SIOX_SERVER=$B/siox-server/siox-server SIOX_DAEMON=$B/siox-daemon/siox-daemon
export SIOX_CHAIN=$B/examples/siox-example-chain
. "$top/tests/integration/lib.sh"
. "$top/tests/integration/shard_site.sh"
shard_site_start
for d in 1 2; do start_site_daemon $d; done
type=$(shard_sql 1 "SELECT id FROM ontology WHERE name = 'test/handle'")

# name OWNER ROUND: an object name shard OWNER owns (the server's rule).
name() {
  python3 - "$type" "$1" "$2" <<'PY'
import sys
t, want, nth = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def owner(value):
    h = 14695981039346656037
    for b in (t + "\x1f" + value).encode():
        h = ((h ^ b) * 1099511628211) % 2**64
    return 1 + h % 3
print([f"bench-{i}" for i in range(100000) if owner(f"bench-{i}") == want][nth])
PY
}
now() { date +%s.%N; }

# one MODE ROUND: a chain run; appends "pairs_per_s lag_ms" to $T/MODE.
one() {
  local mode=$1 r=$2 owner=1 sock=1 obj t0 t1 n=0
  [ "$mode" = forward ] && owner=3 sock=2
  obj=$(name $owner "$r")
  t0=$(now)
  SIOX_SOCKET="$T/daemon1.sock" "$SIOX_CHAIN" --writes "$WRITES" --slow-device -1 --fast-us 0 --object "$obj" \
    --server-socket "$T/daemon$sock.sock" >>"$T/chain.log" 2>&1 || fail "chain $obj failed"
  t1=$(now)
  for _ in $(seq 6000); do
    n=$(shard_sql $owner "SELECT count(*) FROM causal_links l JOIN remote_calls r ON r.aid = l.child_aid AND r.kind = 'R'
                           WHERE r.desc_id = (SELECT desc_id FROM descriptors WHERE scope_key = '' AND value = '$obj')")
    [ "$n" -ge "$WRITES" ] && break
    sleep 0.05
  done
  [ "$n" -eq "$WRITES" ] || fail "$mode round $r: $n links on shard $owner, want $WRITES"
  python3 -c "import sys; t0, t1, t2, w = map(float, sys.argv[1:]); print(w / (t2 - t0), (t2 - t1) * 1000)" \
    "$t0" "$t1" "$(now)" "$WRITES" >>"$T/$mode"
}

for r in $(seq "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then one local "$r"; one forward "$r"; else one forward "$r"; one local "$r"; fi
  echo "# round $r: local $(tail -n 1 "$T/local"), forward $(tail -n 1 "$T/forward") (pairs/s, lag ms)" >&2
done
python3 - "$T" <<'PY'
import statistics, sys
for mode in ("forward", "local"):
    rows = [list(map(float, l.split())) for l in open(f"{sys.argv[1]}/{mode}")]
    print(f"shard_{mode}_pairs_per_s {statistics.median(r[0] for r in rows):.0f} pairs/s")
    print(f"shard_{mode}_lag_ms {statistics.median(r[1] for r in rows):.1f} ms")
PY
