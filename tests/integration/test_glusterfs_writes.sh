#!/usr/bin/env bash
# End to end through a real GlusterFS: siox-testbed with 4 bricks (brick 3
# slowed by debug/delay-gen), debug/siox-client above every protocol/client
# and debug/siox-brick on every brick, reporting to a real siox-daemon and
# siox-server (private PostgreSQL). Files are written with dd oflag=direct.
# Asserts: client and brick writev activities with the file's gfid, offsets
# and sizes; the implicit link client writev -> brick writev with confidence
# 1.0; the path -> gfid mapping; brick writevs on the slowed brick last at
# least the injected delay; `siox blame` of the slowest client write names
# the slowed brick. Needs root and /dev/fuse: otherwise it exits 77 (skip).
. "$(dirname "$0")/lib.sh"
skip_unless_fuse_testbed

BRICKS=4 SLOW=3 DELAY_US=200000 BS=65536 COUNT=4
TB="$T/tb"
JOB="glusterfs-it-$$"
tb_stop() { "$SIOX_TESTBED" stop --dir "$TB" || true; }
# The testbed first (its processes report to the daemon), then lib.sh's.
trap 'tb_stop; cleanup' EXIT

BASE=$(free_port_block $BRICKS)
[ -n "$BASE" ] || fail "no free ports for the bricks"

start_server
start_daemon "" --batch-ms 50
# A sanitizer build's translators need the ASan runtime loaded first in the
# (uninstrumented) glusterfs processes; GlusterFS frees little at exit, so
# leak reports there are not ours to judge.
PRELOAD=$(ldd "$SIOX_XLATOR_DIR/debug/siox-client.so" | awk '/libasan|libubsan/ {printf "%s ", $3}')
if [ -n "$PRELOAD" ]; then
  log "sanitizer build: preloading $PRELOAD into the glusterfs processes"
fi
log "testbed: $BRICKS bricks, brick $SLOW slowed by $DELAY_US us"
LD_PRELOAD=$PRELOAD ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1} \
SIOX_JOB_ID=$JOB "$SIOX_TESTBED" start --dir "$TB" --bricks $BRICKS --slow $SLOW --delay-us $DELAY_US \
  --base-port "$BASE" --client-xlator debug/siox-client --brick-xlator debug/siox-brick \
  --xlator-dir "$SIOX_XLATOR_DIR" >"$T/testbed.out" 2>&1 || { cat "$T/testbed.out" "$TB"/*.log >&2; fail "testbed did not start"; }
MNT="$TB/mnt"
grep -q "debug/siox-brick" "$TB/brick1.vol" || fail "brick volfile lacks the SIOX translator"

# Which brick holds a file (distribute hashes the name).
brick_of() { local n; for n in $(seq $BRICKS); do [ -e "$TB/brick$n/$1" ] && { echo "$n"; return; }; done; echo 0; }

# Create files until one sits on the slowed brick and two on healthy ones.
FILES=() ON=() slow=0 fast=0
for i in $(seq 40); do
  f="sx-$$-$i"
  : >"$MNT/$f" || fail "cannot create $MNT/$f"
  b=$(brick_of "$f")
  if [ "$b" = "$SLOW" ] && [ $slow -lt 1 ]; then slow=$((slow + 1)); FILES+=("$f"); ON+=("$b")
  elif [ "$b" != "$SLOW" ] && [ "$b" != 0 ] && [ $fast -lt 2 ]; then fast=$((fast + 1)); FILES+=("$f"); ON+=("$b"); fi
  [ $slow -eq 1 ] && [ $fast -eq 2 ] && break
done
[ $slow -eq 1 ] && [ $fast -eq 2 ] || fail "40 names did not land on brick $SLOW and two others"

for f in "${FILES[@]}"; do
  dd if=/dev/urandom of="$MNT/$f" bs=$BS count=$COUNT oflag=direct conv=notrunc status=none \
    || fail "dd to $MNT/$f failed"
done
log "wrote ${FILES[*]} on bricks ${ON[*]}"

# gfid of each file, as the brick stores it (trusted.gfid, 16 bytes).
gfid_hex() { python3 -c 'import os,sys; print(os.getxattr(sys.argv[1], "trusted.gfid").hex())' "$1"; }

# Waits until the warehouse holds $COUNT writev activities of layer $1 on gfid $2.
writev_sql() { # SWID GFID [extra condition]
  echo "SELECT count(*) FROM activities a JOIN activity_types t ON t.type_id = a.type_id
        JOIN nodes n ON n.node_id = a.node_id JOIN remote_calls r ON r.aid = a.aid AND r.kind = 'R'
        JOIN descriptors d ON d.desc_id = r.desc_id
        WHERE n.swid = '$1' AND t.name = 'writev' AND d.value = '$2' ${3:-}"
}
wait_writevs() {
  local n=0
  for _ in $(seq 150); do
    n=$(sql "$(writev_sql "$1" "$2")" 2>/dev/null || echo 0)
    [ "$n" -ge $COUNT ] && return 0
    sleep 0.2
  done
  fail "$n $1 writev activities on gfid $2 after 30 s, want $COUNT"
}

for k in "${!FILES[@]}"; do
  f=${FILES[$k]} b=${ON[$k]}
  g=$(gfid_hex "$TB/brick$b/$f") || fail "no gfid on $TB/brick$b/$f"
  hw="brick$b:$TB/brick$b"
  wait_writevs GlusterFS-client "$g"
  wait_writevs GlusterFS-brick "$g"

  # Offsets, sizes and results: one activity per dd block, on both layers,
  # attributes equal to the received range; the brick ones on the right brick.
  for swid in GlusterFS-client GlusterFS-brick; do
    got=$(sql "SELECT string_agg(r.offset_b || ':' || r.length_b || ':' || o.value || ':' || b.value || ':' || res.value, ' ' ORDER BY r.offset_b)
      FROM activities a JOIN activity_types t ON t.type_id = a.type_id JOIN nodes n ON n.node_id = a.node_id
      JOIN remote_calls r ON r.aid = a.aid AND r.kind = 'R' JOIN descriptors d ON d.desc_id = r.desc_id
      JOIN activity_attributes o ON o.aid = a.aid AND o.name = 'io/offset'
      JOIN activity_attributes b ON b.aid = a.aid AND b.name = 'io/bytes'
      JOIN activity_attributes res ON res.aid = a.aid AND res.name = 'io/result'
      WHERE n.swid = '$swid' AND t.name = 'writev' AND d.value = '$g'
        AND (n.swid = 'GlusterFS-client' OR n.hwid = '$hw')")
    want=$(for j in $(seq 0 $((COUNT - 1))); do printf '%s ' "$((j * BS)):$BS:$((j * BS)):$BS:$BS"; done)
    [ "$got" = "${want% }" ] || fail "$swid writevs of $f: got '$got', want '${want% }'"
  done

  # The client sends each range to this brick's node.
  n=$(sql "SELECT count(*) FROM remote_calls s JOIN descriptors d ON d.desc_id = s.desc_id
           WHERE s.kind = 'S' AND d.value = '$g' AND s.target_hwid = '$hw' AND s.target_swid = 'GlusterFS-brick'")
  [ "$n" -eq $COUNT ] || fail "$n client sends of $f name $hw, want $COUNT"

  # The implicit link client writev -> brick writev, certain (one sender).
  links=""
  for _ in $(seq 100); do
    links=$(sql "SELECT count(*), coalesce(min(c.confidence), 0), coalesce(max(c.confidence), 0)
      FROM causal_links c
      JOIN activities ca ON ca.aid = c.parent_aid JOIN nodes cn ON cn.node_id = ca.node_id
      JOIN activities ba ON ba.aid = c.child_aid JOIN nodes bn ON bn.node_id = ba.node_id
      JOIN remote_calls r ON r.aid = ba.aid AND r.kind = 'R' JOIN descriptors d ON d.desc_id = r.desc_id
      WHERE cn.swid = 'GlusterFS-client' AND bn.hwid = '$hw' AND d.value = '$g'")
    [ "${links%%|*}" -ge $COUNT ] && break
    sleep 0.3
  done
  if [ "$links" != "$COUNT|1|1" ]; then
    sql "SELECT n.swid, a.aid, r.kind, r.offset_b, r.length_b, r.target_hwid, a.start_ns, a.end_ns, r.matched,
                (SELECT string_agg(c.parent_aid || '@' || c.confidence, ',') FROM causal_links c WHERE c.child_aid = a.aid)
           FROM activities a JOIN nodes n ON n.node_id = a.node_id JOIN remote_calls r ON r.aid = a.aid
           JOIN descriptors d ON d.desc_id = r.desc_id WHERE d.value = '$g' ORDER BY r.offset_b, n.swid, r.kind" >&2 || true
    fail "links client -> brick for $f: got (count|min|max) '$links', want '$COUNT|1|1'"
  fi

  # The path -> gfid mapping, as the client saw it (volume-relative path).
  n=$(sql "SELECT count(*) FROM descriptor_mappings m JOIN descriptors p ON p.desc_id = m.from_desc
           JOIN descriptors g ON g.desc_id = m.to_desc WHERE p.value = '/$f' AND g.value = '$g'")
  [ "$n" -ge 1 ] || fail "no mapping /$f -> gfid $g"

  # On the slowed brick every writev contains the injected delay.
  if [ "$b" = "$SLOW" ]; then
    short=$(sql "$(writev_sql GlusterFS-brick "$g" "AND n.hwid = '$hw' AND a.end_ns - a.start_ns < $((DELAY_US * 1000))")")
    [ "$short" -eq 0 ] || fail "$short writevs on slowed brick $SLOW are shorter than ${DELAY_US} us"
    SLOW_GFID=$g
  fi
  log "$f (brick $b): $COUNT client and brick writevs, links certain, mapping present"
done

# Blame: the slowest client writev of the job is on the slowed brick's file;
# its causal tree reaches the brick and blame names that brick.
siox_cli top --job "$JOB" --layer GlusterFS-client --name writev -n 1 --json >"$T/top.json" || fail "siox top failed"
aid=$(top_first_aid "$T/top.json") || fail "no client writev in siox top"
n=$(sql "$(writev_sql GlusterFS-client "$SLOW_GFID" "AND a.aid = $aid")")
[ "$n" -eq 1 ] || fail "slowest client writev $aid is not on the slowed brick's file"
siox_cli graph "$aid" --json >"$T/graph.json" || fail "siox graph $aid failed"
assert_graph "$T/graph.json" GlusterFS-client GlusterFS-brick || fail "graph of $aid lacks the brick or the certain implicit link"
siox_cli blame "$aid" --json >"$T/blame.json" || fail "siox blame $aid failed"
culprit=$(json_get "$T/blame.json" 'j["culprit"]["hwid"] + "/" + j["culprit"]["swid"]')
[ "$culprit" = "brick$SLOW:$TB/brick$SLOW/GlusterFS-brick" ] || fail "blame named '$culprit', the slowed brick is brick$SLOW"
log "blame names brick $SLOW"
log "glusterfs writes test passed"
