-- SIOX warehouse, schema version 30: marking a receive matched costs an
-- in-place (HOT) update instead of a new row version in every index
-- (issue 15 §1; siox-server/README.md, "Implicit links in memory").
--
-- A receive usually reaches the server before its sender (the two come
-- from different daemons), so most receives are stored unmatched and set
-- matched = true a batch or more later. The partial index
-- remote_calls_unmatched named `matched` in its predicate, and a column an
-- index names blocks HOT: each such UPDATE wrote a new version of the row
-- into all four indexes of remote_calls, GiST included (13 us a receive,
-- half the in-memory matcher's time). Now no index names `matched`, and
-- pages keep room for one new version of their receives (fillfactor; new
-- pages only), so the flag flips on the row's own page.
--
-- The index served one query: the status counter receives_unmatched, a
-- count(*) per matcher pass. It becomes match_state.unmatched, kept by
-- statement triggers on remote_calls, so every writer (COPY, the
-- matchers' UPDATEs, a DELETE by hand) keeps it exact in its own
-- transaction.
DROP INDEX IF EXISTS remote_calls_unmatched;
ALTER TABLE remote_calls SET (fillfactor = 50);

ALTER TABLE match_state ADD COLUMN unmatched bigint NOT NULL DEFAULT 0;
UPDATE match_state SET unmatched = (SELECT count(*) FROM remote_calls WHERE kind = 'R' AND NOT matched);

CREATE FUNCTION siox_rc_unmatched_ins() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE d bigint;
BEGIN
  SELECT count(*) INTO d FROM rc_new WHERE kind = 'R' AND NOT matched;
  IF d <> 0 THEN UPDATE match_state SET unmatched = unmatched + d; END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION siox_rc_unmatched_upd() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE d bigint;
BEGIN
  SELECT (SELECT count(*) FROM rc_new WHERE kind = 'R' AND NOT matched)
       - (SELECT count(*) FROM rc_old WHERE kind = 'R' AND NOT matched) INTO d;
  IF d <> 0 THEN UPDATE match_state SET unmatched = unmatched + d; END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION siox_rc_unmatched_del() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE d bigint;
BEGIN
  SELECT count(*) INTO d FROM rc_old WHERE kind = 'R' AND NOT matched;
  IF d <> 0 THEN UPDATE match_state SET unmatched = unmatched - d; END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER remote_calls_unmatched_ins AFTER INSERT ON remote_calls
  REFERENCING NEW TABLE AS rc_new FOR EACH STATEMENT EXECUTE FUNCTION siox_rc_unmatched_ins();
CREATE TRIGGER remote_calls_unmatched_upd AFTER UPDATE ON remote_calls
  REFERENCING OLD TABLE AS rc_old NEW TABLE AS rc_new FOR EACH STATEMENT EXECUTE FUNCTION siox_rc_unmatched_upd();
CREATE TRIGGER remote_calls_unmatched_del AFTER DELETE ON remote_calls
  REFERENCING OLD TABLE AS rc_old FOR EACH STATEMENT EXECUTE FUNCTION siox_rc_unmatched_del();
