#!/usr/bin/env bash
# End to end through a real GlusterFS: siox-testbed with 4 bricks (brick 3
# slowed by debug/delay-gen), debug/siox-client above every protocol/client
# and debug/siox-brick on every brick, reporting to a real siox-daemon and
# siox-server (private PostgreSQL). Three files (one on the slowed brick)
# are written with dd oflag=direct, read back with dd iflag=direct, fsynced
# (os.fsync) and stat'ed (os.stat). Asserts, per file:
# - writev and readv: client and brick activities with the file's gfid,
#   offsets, sizes and results; the client's sends name the holding brick;
#   the implicit links client -> brick with confidence 1.0; on the slowed
#   brick every writev and readv lasts at least the injected delay;
# - the path -> gfid mapping;
# - fsync: one client fsync sending the gfid (no byte range) to the holding
#   brick, one brick fsync receiving it there, linked with confidence 1.0;
# - stat: FUSE turns stat(2) of a path whose kernel entry has expired into a
#   LOOKUP, so GlusterFS issues a `lookup` fop, not `stat`: the stat adds one
#   client lookup and one holding-brick lookup on the gfid, linked with
#   confidence 1.0, and no `stat` activity.
# Finally `siox blame` of the slowest client write names the slowed brick.
# Needs root and /dev/fuse: otherwise it exits 77 (skip).
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

# SQL counting the activities of type $2 on layer $1 that carry a remote
# call of kind $4 ('S' send, 'R' receive) on gfid $3.
fop_sql() { # SWID TYPE GFID KIND [extra condition]
  echo "SELECT count(*) FROM activities a JOIN activity_types t ON t.type_id = a.type_id
        JOIN nodes n ON n.node_id = a.node_id JOIN remote_calls r ON r.aid = a.aid AND r.kind = '$4'
        JOIN descriptors d ON d.desc_id = r.desc_id
        WHERE n.swid = '$1' AND t.name = '$2' AND d.value = '$3' ${5:-}"
}
# Waits until fop_sql counts at least $5, then asserts exactly $5.
wait_fops() { # SWID TYPE GFID KIND WANT [extra condition]
  local n=0
  for _ in $(seq 150); do
    n=$(sql "$(fop_sql "$1" "$2" "$3" "$4" "${6:-}")" 2>/dev/null || echo 0)
    [ "$n" -ge "$5" ] && break
    sleep 0.2
  done
  [ "$n" -eq "$5" ] || fail "$n $1 $2 activities on gfid $3 (kind $4), want $5"
}
# Offsets, sizes and results of the readv or writev ($2) of layer $1 on
# gfid $3 ($4: the brick's hwid), "offset:length:io/offset:io/bytes:io/result"
# per activity, by offset.
ranges() { # SWID TYPE GFID HWID
  sql "SELECT string_agg(r.offset_b || ':' || r.length_b || ':' || o.value || ':' || b.value || ':' || res.value, ' ' ORDER BY r.offset_b)
    FROM activities a JOIN activity_types t ON t.type_id = a.type_id JOIN nodes n ON n.node_id = a.node_id
    JOIN remote_calls r ON r.aid = a.aid AND r.kind = 'R' JOIN descriptors d ON d.desc_id = r.desc_id
    JOIN activity_attributes o ON o.aid = a.aid AND o.name = 'io/offset'
    JOIN activity_attributes b ON b.aid = a.aid AND b.name = 'io/bytes'
    JOIN activity_attributes res ON res.aid = a.aid AND res.name = 'io/result'
    WHERE n.swid = '$1' AND t.name = '$2' AND d.value = '$3'
      AND (n.swid = 'GlusterFS-client' OR n.hwid = '$4')"
}
# The one dd block per activity that ranges() must print for $COUNT blocks.
want_ranges() { local j; for j in $(seq 0 $((COUNT - 1))); do printf '%s ' "$((j * BS)):$BS:$((j * BS)):$BS:$BS"; done; }
# Waits for $4 implicit links client $1 -> brick $1 on gfid $2 at brick $3;
# fails (with the gfid's remote calls) unless there are exactly $4, all 1.0.
assert_links() { # TYPE GFID HWID WANT
  local links=""
  for _ in $(seq 100); do
    links=$(sql "SELECT count(*), coalesce(min(c.confidence), 0), coalesce(max(c.confidence), 0)
      FROM causal_links c
      JOIN activities ca ON ca.aid = c.parent_aid JOIN nodes cn ON cn.node_id = ca.node_id
      JOIN activity_types ct ON ct.type_id = ca.type_id
      JOIN activities ba ON ba.aid = c.child_aid JOIN nodes bn ON bn.node_id = ba.node_id
      JOIN activity_types bt ON bt.type_id = ba.type_id
      JOIN remote_calls r ON r.aid = ba.aid AND r.kind = 'R' JOIN descriptors d ON d.desc_id = r.desc_id
      WHERE cn.swid = 'GlusterFS-client' AND ct.name = '$1' AND bt.name = '$1'
        AND bn.hwid = '$3' AND d.value = '$2'")
    [ "${links%%|*}" -ge "$4" ] && break
    sleep 0.3
  done
  if [ "$links" != "$4|1|1" ]; then
    sql "SELECT n.swid, t.name, a.aid, r.kind, r.offset_b, r.length_b, r.target_hwid, a.start_ns, a.end_ns, r.matched,
                (SELECT string_agg(c.parent_aid || '@' || c.confidence, ',') FROM causal_links c WHERE c.child_aid = a.aid)
           FROM activities a JOIN nodes n ON n.node_id = a.node_id JOIN remote_calls r ON r.aid = a.aid
           JOIN activity_types t ON t.type_id = a.type_id
           JOIN descriptors d ON d.desc_id = r.desc_id WHERE d.value = '$2' ORDER BY t.name, r.offset_b, n.swid, r.kind" >&2 || true
    fail "$1 links client -> brick on gfid $2: got (count|min|max) '$links', want '$4|1|1'"
  fi
}

GFIDS=()
for k in "${!FILES[@]}"; do
  f=${FILES[$k]} b=${ON[$k]}
  g=$(gfid_hex "$TB/brick$b/$f") || fail "no gfid on $TB/brick$b/$f"
  GFIDS+=("$g")
  hw="brick$b:$TB/brick$b"
  wait_fops GlusterFS-client writev "$g" R $COUNT
  wait_fops GlusterFS-brick writev "$g" R $COUNT

  # Offsets, sizes and results: one activity per dd block, on both layers,
  # attributes equal to the received range; the brick ones on the right brick.
  for swid in GlusterFS-client GlusterFS-brick; do
    got=$(ranges $swid writev "$g" "$hw") want=$(want_ranges)
    [ "$got" = "${want% }" ] || fail "$swid writevs of $f: got '$got', want '${want% }'"
  done

  # The client sends each range to this brick's node.
  wait_fops GlusterFS-client writev "$g" S $COUNT "AND r.target_hwid = '$hw' AND r.target_swid = 'GlusterFS-brick'"

  # The implicit link client writev -> brick writev, certain (one sender).
  assert_links writev "$g" "$hw" $COUNT

  # The path -> gfid mapping, as the client saw it (volume-relative path).
  n=$(sql "SELECT count(*) FROM descriptor_mappings m JOIN descriptors p ON p.desc_id = m.from_desc
           JOIN descriptors g ON g.desc_id = m.to_desc WHERE p.value = '/$f' AND g.value = '$g'")
  [ "$n" -ge 1 ] || fail "no mapping /$f -> gfid $g"

  # On the slowed brick every writev contains the injected delay.
  if [ "$b" = "$SLOW" ]; then
    short=$(sql "$(fop_sql GlusterFS-brick writev "$g" R "AND n.hwid = '$hw' AND a.end_ns - a.start_ns < $((DELAY_US * 1000))")")
    [ "$short" -eq 0 ] || fail "$short writevs on slowed brick $SLOW are shorter than ${DELAY_US} us"
    SLOW_GFID=$g
  fi
  log "$f (brick $b): $COUNT client and brick writevs, links certain, mapping present"
done

# Read back, then fsync, each file: the same checks for readv as for
# writev; fsync names the whole file (no byte range, length 0 in
# remote_calls), sent by the client to the holding brick only.
RESULT_0="AND a.err = 0 AND EXISTS (SELECT 1 FROM activity_attributes x WHERE x.aid = a.aid AND x.name = 'io/result' AND x.value = '0')"
for k in "${!FILES[@]}"; do
  f=${FILES[$k]} b=${ON[$k]} g=${GFIDS[$k]}
  hw="brick$b:$TB/brick$b"
  to_brick="AND r.target_hwid = '$hw' AND r.target_swid = 'GlusterFS-brick'"
  dd if="$MNT/$f" of=/dev/null bs=$BS count=$COUNT iflag=direct status=none || fail "dd from $MNT/$f failed"
  wait_fops GlusterFS-client readv "$g" R $COUNT
  wait_fops GlusterFS-brick readv "$g" R $COUNT "AND n.hwid = '$hw'"
  for swid in GlusterFS-client GlusterFS-brick; do
    got=$(ranges $swid readv "$g" "$hw") want=$(want_ranges)
    [ "$got" = "${want% }" ] || fail "$swid readvs of $f: got '$got', want '${want% }'"
  done
  wait_fops GlusterFS-client readv "$g" S $COUNT "$to_brick"
  assert_links readv "$g" "$hw" $COUNT
  if [ "$b" = "$SLOW" ]; then # delay-gen slows READ too
    short=$(sql "$(fop_sql GlusterFS-brick readv "$g" R "AND n.hwid = '$hw' AND a.end_ns - a.start_ns < $((DELAY_US * 1000))")")
    [ "$short" -eq 0 ] || fail "$short readvs on slowed brick $SLOW are shorter than ${DELAY_US} us"
  fi

  python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY); os.fsync(fd); os.close(fd)' "$MNT/$f" \
    || fail "fsync of $MNT/$f failed"
  wait_fops GlusterFS-client fsync "$g" S 1 "$to_brick AND r.offset_b = 0 AND r.length_b = 0 $RESULT_0"
  wait_fops GlusterFS-brick fsync "$g" R 1 "AND n.hwid = '$hw' AND r.offset_b = 0 AND r.length_b = 0 $RESULT_0"
  assert_links fsync "$g" "$hw" 1
  log "$f (brick $b): $COUNT client and brick readvs and one fsync each, links certain"
done

# stat(2) of a path: the kernel asks FUSE only once its entry for the name
# has expired (glusterfs's default entry-timeout is 1 s), and then sends a
# LOOKUP, whose reply carries the attributes, not a GETATTR. So GlusterFS
# sees a `lookup` fop for the file (plus one of "/", a directory: not
# linked). Earlier lookups of the files (at open) carry the gfid too, so
# the stat must add exactly one on the client and one on the holding brick.
sleep 1.2
for k in "${!FILES[@]}"; do
  f=${FILES[$k]} b=${ON[$k]} g=${GFIDS[$k]}
  hw="brick$b:$TB/brick$b"
  on_brick="AND n.hwid = '$hw' AND r.offset_b = 0 AND r.length_b = 0"
  to_brick="AND r.target_hwid = '$hw' AND r.target_swid = 'GlusterFS-brick' AND r.offset_b = 0 AND r.length_b = 0"
  nc=$(sql "$(fop_sql GlusterFS-client lookup "$g" S "$to_brick")")
  nb=$(sql "$(fop_sql GlusterFS-brick lookup "$g" R "$on_brick")")
  size=$(python3 -c 'import os, sys; print(os.stat(sys.argv[1]).st_size)' "$MNT/$f") || fail "stat of $MNT/$f failed"
  [ "$size" -eq $((BS * COUNT)) ] || fail "stat of $MNT/$f: size $size, want $((BS * COUNT))"
  wait_fops GlusterFS-client lookup "$g" S $((nc + 1)) "$to_brick"
  wait_fops GlusterFS-brick lookup "$g" R $((nb + 1)) "$on_brick"
  assert_links lookup "$g" "$hw" $((nc + 1))
  for swid in GlusterFS-client GlusterFS-brick; do
    n=$(sql "SELECT count(*) FROM activities a JOIN activity_types t ON t.type_id = a.type_id
             JOIN nodes n ON n.node_id = a.node_id JOIN remote_calls r ON r.aid = a.aid
             JOIN descriptors d ON d.desc_id = r.desc_id WHERE n.swid = '$swid' AND t.name = 'stat' AND d.value = '$g'")
    [ "$n" -eq 0 ] || fail "$n $swid stat activities on $f: stat(2) was expected to reach GlusterFS as lookup"
  done
  log "$f (brick $b): stat(2) is one client and one brick lookup on its gfid, link certain"
done

# Blame: the slowest client writev of the job is on the slowed brick's file;
# its causal tree reaches the brick and blame names that brick.
siox_cli top --job "$JOB" --layer GlusterFS-client --name writev -n 1 --json >"$T/top.json" || fail "siox top failed"
aid=$(top_first_aid "$T/top.json") || fail "no client writev in siox top"
n=$(sql "$(fop_sql GlusterFS-client writev "$SLOW_GFID" R "AND a.aid = $aid")")
[ "$n" -eq 1 ] || fail "slowest client writev $aid is not on the slowed brick's file"
siox_cli graph "$aid" --json >"$T/graph.json" || fail "siox graph $aid failed"
assert_graph "$T/graph.json" GlusterFS-client GlusterFS-brick || fail "graph of $aid lacks the brick or the certain implicit link"
siox_cli blame "$aid" --json >"$T/blame.json" || fail "siox blame $aid failed"
culprit=$(json_get "$T/blame.json" 'j["culprit"]["hwid"] + "/" + j["culprit"]["swid"]')
[ "$culprit" = "brick$SLOW:$TB/brick$SLOW/GlusterFS-brick" ] || fail "blame named '$culprit', the slowed brick is brick$SLOW"
log "blame names brick $SLOW"
log "glusterfs writes test passed"
