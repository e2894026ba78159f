#!/usr/bin/env bash
# A write that waited in the FUSE channel while the client process stalled
# waited behind the requests that entered the channel before it (waiting.c
# ahead_of; warehouse_waiting.c wind: a client fop joined the channel when
# its application call started). The intervals of a bench round of
# scenario (f), in ms from t0: job fA's 4 KiB write runs 100-130; its
# client fop arrives only at 127.7 and the brick serves it in 0.1 ms. Job
# fB's 1 MiB writes kept the client busy until 108.7; then no fop at all
# reached the client process until 126.6 (a stall), when the rest of fB's
# write that started at 99.9, before fA's, came through ahead of fA's. The
# client process served others for 10.8 of the 30 ms (36 %): the class was
# `normal`. The stall's 17.9 ms were spent behind fB's earlier write too,
# so the call waited 95 % of its time: interference by fB.
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT
start_server
sql "
INSERT INTO daemons (daemon_id, hostname) VALUES (9101, 'ch-host');
INSERT INTO processes (proc_id, daemon_id, host, pid, uid, nonce, exe, job) VALUES
  (901, 9101, 'ch-host', 1, 0, 901, '/bin/dd', 'fA'), (902, 9101, 'ch-host', 2, 0, 902, '/bin/dd', 'fB'),
  (903, 9101, 'ch-host', 3, 0, 903, '/bin/dd', 'fB'),
  (905, 9101, 'ch-host', 5, 0, 905, '/usr/sbin/glusterfs', ''),
  (906, 9101, 'ch-host', 6, 0, 906, '/usr/sbin/glusterfsd', '');
INSERT INTO nodes (node_id, hwid, swid, iid) VALUES
  (901, 'ch-host', 'POSIX', ''), (910, 'ch-host', 'GlusterFS-client', 'b0'), (920, 'ch-b0', 'GlusterFS-brick', '');
INSERT INTO activity_types (type_id, node_id, name) VALUES (901, 901, 'write'), (910, 910, 'writev'), (920, 920, 'writev');
-- the application's writes: id, process, start and end (ms from t0), bytes
CREATE TEMP TABLE p (id int, proc int, a0 float8, a1 float8, bytes bigint);
INSERT INTO p VALUES (1, 901, 100, 130, 4096), (2, 902, 99.9, 129.5, 1048576), (3, 903, 102.6, 132.4, 1048576),
                     (4, 903, 90, 103.6, 1048576);
-- their client fops: id, the write's id, client start and end (the brick serves from 0.2 ms after the
-- start, fA's from 0.3, to 0.4)
CREATE TEMP TABLE f (id int, call int, c0 float8, c1 float8, bytes bigint);
INSERT INTO f VALUES (1, 4, 100.2, 101.8, 131072), (2, 4, 101.9, 103.5, 131072), (3, 2, 103.6, 105.2, 131072),
                     (4, 2, 105.3, 106.9, 131072), (5, 2, 107.0, 108.7, 131072), (6, 2, 126.6, 127.4, 131072),
                     (7, 2, 127.0, 129.3, 131072), (8, 1, 127.7, 129.5, 4096), (9, 3, 127.8, 131.0, 131072),
                     (10, 3, 127.9, 132.0, 131072);
CREATE TEMP TABLE t AS SELECT 1700000000000000000::bigint AS t0, 1000000::float8 AS ms,
  ARRAY[(SELECT id FROM ontology WHERE name = 'io/bytes')] AS ids;
INSERT INTO activities (aid, proc_id, parent_aid, node_id, type_id, start_ns, end_ns, attr_ids, attr_vals)
  SELECT (proc::bigint << 32) + id, proc, NULL::bigint, 901, 901, t0 + (a0 * ms)::bigint, t0 + (a1 * ms)::bigint,
         ids, ARRAY[bytes] FROM p, t
  UNION ALL
  SELECT (905::bigint << 32) + id, 905, NULL, 910, 910, t0 + (c0 * ms)::bigint, t0 + (c1 * ms)::bigint, ids,
         ARRAY[bytes] FROM f, t
  UNION ALL
  SELECT (906::bigint << 32) + id, 906, NULL, 920, 920, t0 + ((c0 + CASE WHEN id = 8 THEN 0.3 ELSE 0.2 END) * ms)::bigint,
         t0 + ((c0 + 0.4) * ms)::bigint, ids, ARRAY[bytes] FROM f, t;
INSERT INTO causal_links (parent_aid, child_aid, confidence, overlap_bytes)
  SELECT (p.proc::bigint << 32) + p.id, (905::bigint << 32) + f.id, 1.0, f.bytes FROM f JOIN p ON p.id = f.call
  UNION ALL
  SELECT (905::bigint << 32) + id, (906::bigint << 32) + id, 1.0, bytes FROM f;
" >/dev/null || fail "the synthetic warehouse was not loaded"
aid=$(((901 << 32) + 1))
siox_cli blame "$aid" --json >"$T/blame.json" || fail "siox blame $aid failed"
got=$(json_get "$T/blame.json" 'j["class"] + " " + ",".join(j["interfering_jobs"]) + " " + (j.get("culprit") or {}).get("hwid", "-")')
[ "$got" = "interference fB -" ] ||
  { siox_cli blame "$aid" >&2; fail "blame of fA's write behind the stalled channel: '$got', want 'interference fB -'"; }
queued=$(json_get "$T/blame.json" 'round(j["breakdown"]["queued_fuse_channel_s"] * 1000, 1)')
log "a write behind a stalled FUSE channel: interference by fB, $queued ms queued in the channel"
