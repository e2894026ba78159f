-- SIOX warehouse, schema version 36: the remote calls the in-memory
-- window decided are indexed for the SQL matcher by a btree instead of the
-- GiST of schema 010 (issue 15 §1; siox-server/README.md, "Implicit links
-- in memory", "End to end").
--
-- Each GiST entry cost about 9 us at the ingest COPY (two indexes, 21.6 ms
-- per 1000 rows against 3.4 ms without them): ingest, not the matcher,
-- bounded a pair's end-to-end rate. The SQL matcher still needs those rows,
-- though rarely: as the senders of a receive that falls back to it (a late
-- one, after a restart or an eviction) and as the receives near a sender
-- that does. So:
--  * remote_calls_win: a partial btree of the "windowed" calls
--    (siox_rc_window: decided in memory and at most 100 ms long) on
--    (object, kind, interval, byte bounds). A windowed call meets a time
--    range [a, b] only when it starts in [a - 100 ms, b]: a range scan,
--    with the end and the bytes checked in the index, not the heap. About
--    a tenth of a GiST probe's speed (0.15 ms against 0.01 ms a receive at
--    1000 calls/s on the object, scratch cluster), on the rare fallbacks.
--  * the GiST indexes keep only the calls that are not windowed: what the
--    SQL matcher handles as new (in_memory = false: every row of a server
--    run with --match-memory off) and the rare long calls, which a range
--    scan on the start could not bound.
-- The SQL matcher (match.c, NEAR_GIST and NEAR_WIN) asks both, for the two halves of its
-- candidates: same rows, same links. 100 ms widens the btree's scan of a
-- receive's senders from the 3 s the rules already span (2 s late, 1 s
-- read-ahead) by a thirtieth. Neither index can serve the other's half
-- (their predicates exclude each other), so for the calls the SQL matcher
-- decides it has the indexes it had: remote_calls_obj (object, kind) and
-- the GiST. (A first version put the flag into a key column of a btree
-- that replaced remote_calls_obj; the planner then took that btree's
-- (object, kind, false) prefix over the GiST and filtered every sender of
-- the object, 1.5 ms a receive: bench_match's SQL-only figure fell from
-- 4-15k to 0.7-2.3k pairs/s.)
-- Plain boolean algebra, not a CASE (tried first): the planner estimates
-- it from in_memory's statistics, where a CASE is opaque to it. The
-- partial indexes' predicates and match.c's conditions are the same
-- expression, so the planner proves which index serves which branch.
CREATE FUNCTION siox_rc_window(in_memory boolean, s bigint, e bigint) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT in_memory AND e - s <= 100000000 $$;
-- A remote call's byte range as the bounds siox_rc_bytes means (length 0:
-- every range), as plain numbers a btree can compare.
CREATE FUNCTION siox_rc_lo(off bigint, len bigint) RETURNS bigint
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT CASE WHEN len = 0 THEN -9223372036854775808 ELSE off END $$;
CREATE FUNCTION siox_rc_hi(off bigint, len bigint) RETURNS bigint
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT CASE WHEN len = 0 THEN 9223372036854775807 ELSE off + len END $$;

CREATE INDEX remote_calls_win ON remote_calls
  (object_id, kind, start_ns, end_ns, siox_rc_lo(offset_b, length_b), siox_rc_hi(offset_b, length_b))
  WHERE siox_rc_window(in_memory, start_ns, end_ns);

DROP INDEX remote_calls_s_match;
DROP INDEX remote_calls_r_match;
CREATE INDEX remote_calls_s_match ON remote_calls
  USING gist (object_id, int8range(start_ns, end_ns, '[]'), siox_rc_bytes(offset_b, length_b))
  WHERE kind = 'S' AND start_ns IS NOT NULL AND NOT siox_rc_window(in_memory, start_ns, end_ns);
CREATE INDEX remote_calls_r_match ON remote_calls
  USING gist (object_id, int8range(start_ns, end_ns, '[]'), siox_rc_bytes(offset_b, length_b))
  WHERE kind = 'R' AND start_ns IS NOT NULL AND NOT siox_rc_window(in_memory, start_ns, end_ns);
