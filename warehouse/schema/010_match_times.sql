-- SIOX warehouse, schema version 10: remote calls carry their activity's
-- interval, and the matcher finds a receive's senders with a GiST search
-- on (object, time, bytes) instead of joining every sender the object ever
-- had. A file written for minutes holds tens of thousands of senders, and
-- at a thousand operations per second even a few seconds of time window
-- hold thousands: only time and bytes together are selective.
--
-- start_ns/end_ns are the activity's (clock-corrected) times. Ingest fills
-- them when the activity is in the same batch; otherwise the matcher does
-- when it parks or wakes the row. NULL: the activity has not arrived.
--
-- btree_gist gives GiST the equality on object_id; it is a trusted contrib
-- extension (PostgreSQL 13 and later), so an ordinary database owner may
-- create it.
CREATE EXTENSION IF NOT EXISTS btree_gist;
ALTER TABLE remote_calls ADD COLUMN start_ns bigint, ADD COLUMN end_ns bigint;
UPDATE remote_calls r SET start_ns = a.start_ns, end_ns = a.end_ns FROM activities a WHERE a.aid = r.aid;

-- The byte range of a remote call; a call without one (length 0) overlaps
-- every range, as the matching rules say.
CREATE FUNCTION siox_rc_bytes(off bigint, len bigint) RETURNS int8range
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT CASE WHEN len = 0 THEN int8range(NULL, NULL) ELSE int8range(off, off + len) END $$;

CREATE INDEX remote_calls_s_match ON remote_calls
  USING gist (object_id, int8range(start_ns, end_ns, '[]'), siox_rc_bytes(offset_b, length_b))
  WHERE kind = 'S' AND start_ns IS NOT NULL;
CREATE INDEX remote_calls_r_match ON remote_calls
  USING gist (object_id, int8range(start_ns, end_ns, '[]'), siox_rc_bytes(offset_b, length_b))
  WHERE kind = 'R' AND start_ns IS NOT NULL;
