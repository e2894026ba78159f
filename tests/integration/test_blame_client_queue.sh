#!/usr/bin/env bash
# A client subvolume that queued behind its own job's requests to a slow
# brick is slow because of that brick, even when the brick sat idle between
# those requests (warehouse/src/blame_wait.c, descend). A synthetic
# warehouse, written into a real siox-server's database: 4 ranks of job
# "cq" write 128 KiB through one GlusterFS client whose subvolumes b0 and b1
# answer in ~5 ms (their bricks 2 ms) and b2 in 60 ms at its brick. The
# slowest call waits 400 ms in subvolume b2 behind ranks 2 and 3's requests
# to b2, but brick b2 serves only 3 x 60 ms of those 400 ms (busy 45 %):
# the requests wait in the client or the connection, not at the brick.
# Judged against the other subvolumes, b2's subvolume looks faulty; its
# brick's own service of the call stands out against the other bricks too,
# and it is the culprit. Seen once in integration_sys_blame under ASan,
# where blame named "vm GlusterFS-client#brick2".
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT
start_server
sql "
INSERT INTO daemons (daemon_id, hostname) VALUES (9001, 'cq-host');
INSERT INTO processes (proc_id, daemon_id, host, pid, uid, nonce, exe, job) VALUES
  (901, 9001, 'cq-host', 1, 0, 901, '/bin/app', 'cq'), (902, 9001, 'cq-host', 2, 0, 902, '/bin/app', 'cq'),
  (903, 9001, 'cq-host', 3, 0, 903, '/bin/app', 'cq'), (904, 9001, 'cq-host', 4, 0, 904, '/bin/app', 'cq'),
  (905, 9001, 'cq-host', 5, 0, 905, '/usr/sbin/glusterfs', ''),
  (906, 9001, 'cq-host', 6, 0, 906, '/usr/sbin/glusterfsd', ''),
  (907, 9001, 'cq-host', 7, 0, 907, '/usr/sbin/glusterfsd', ''),
  (908, 9001, 'cq-host', 8, 0, 908, '/usr/sbin/glusterfsd', '');
INSERT INTO nodes (node_id, hwid, swid, iid) VALUES
  (901, 'cq-host', 'POSIX', ''), (910, 'cq-host', 'GlusterFS-client', 'b0'), (911, 'cq-host', 'GlusterFS-client', 'b1'),
  (912, 'cq-host', 'GlusterFS-client', 'b2'), (920, 'cq-b0', 'GlusterFS-brick', ''),
  (921, 'cq-b1', 'GlusterFS-brick', ''), (922, 'cq-b2', 'GlusterFS-brick', '');
INSERT INTO activity_types (type_id, node_id, name) VALUES
  (901, 901, 'pwrite'), (910, 910, 'writev'), (911, 911, 'writev'), (912, 912, 'writev'),
  (920, 920, 'writev'), (921, 921, 'writev'), (922, 922, 'writev');
-- per call: rank, subvolume, app start and end, client start and end, brick start and end (ms from t0)
CREATE TEMP TABLE c (i int, rank int, sv int, a0 int, a1 int, c0 int, c1 int, b0 int, b1 int);
INSERT INTO c SELECT i, i % 4, i % 2, 30 * i, 30 * i + 6, 30 * i, 30 * i + 5, 30 * i + 1, 30 * i + 3
  FROM generate_series(0, 11) i;
INSERT INTO c VALUES (12, 1, 2, 378, 562, 380, 560, 500, 560), (13, 2, 2, 388, 682, 390, 680, 620, 680),
                     (14, 0, 2, 400, 810, 401, 801, 740, 800);
INSERT INTO c SELECT 15 + i, i % 4, i % 2, 1000 + 30 * i, 1000 + 30 * i + 6, 1000 + 30 * i, 1000 + 30 * i + 5,
  1000 + 30 * i + 1, 1000 + 30 * i + 3 FROM generate_series(0, 11) i;
CREATE TEMP TABLE t AS SELECT 1700000000000000000::bigint AS t0, 1000000::bigint AS ms,
  ARRAY[(SELECT id FROM ontology WHERE name = 'io/bytes')] AS ids, ARRAY[131072]::bigint[] AS vals;
INSERT INTO activities (aid, proc_id, parent_aid, node_id, type_id, start_ns, end_ns, attr_ids, attr_vals)
  SELECT ((901 + rank)::bigint << 32) + i + 1, 901 + rank, NULL::bigint, 901, 901, t0 + a0 * ms, t0 + a1 * ms, ids, vals
    FROM c, t
  UNION ALL
  SELECT (905::bigint << 32) + i + 1, 905, NULL, 910 + sv, 910 + sv, t0 + c0 * ms, t0 + c1 * ms, ids, vals FROM c, t
  UNION ALL
  SELECT ((906 + sv)::bigint << 32) + i + 1, 906 + sv, NULL, 920 + sv, 920 + sv, t0 + b0 * ms, t0 + b1 * ms, ids, vals
    FROM c, t;
INSERT INTO causal_links (parent_aid, child_aid, confidence, overlap_bytes)
  SELECT ((901 + rank)::bigint << 32) + i + 1, (905::bigint << 32) + i + 1, 1.0, 131072 FROM c
  UNION ALL
  SELECT (905::bigint << 32) + i + 1, ((906 + sv)::bigint << 32) + i + 1, 1.0, 131072 FROM c;
" >/dev/null || fail "the synthetic warehouse was not loaded"
aid=$(((901 << 32) + 15)) # call 14: rank 0's app write, 410 ms, through subvolume b2
siox_cli blame "$aid" --json >"$T/blame.json" || fail "siox blame $aid failed"
got=$(json_get "$T/blame.json" '(j.get("culprit") or {}).get("hwid", "none") + "/" + (j.get("culprit") or {}).get("swid", "-")')
[ "$got" = "cq-b2/GlusterFS-brick" ] ||
  { siox_cli blame "$aid" >&2; fail "blame of the write queued in subvolume b2: '$got', want brick b2"; }
log "a subvolume queued behind a slow brick: the brick is named ($(json_get "$T/blame.json" 'j["class"]'))"
