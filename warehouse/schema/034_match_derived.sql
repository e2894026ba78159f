-- SIOX warehouse, schema version 34: whether a receive is matched is
-- derived from causal_links instead of stored (issue 15 §1; siox-server/
-- README.md, "Implicit links in memory").
--
-- A receive usually reaches the server before its sender (they come from
-- different daemons), so most were stored with matched = false and flagged
-- a batch or more later: one UPDATE of a remote_calls row per pair, a new
-- row version and its WAL (2.95 us a pair, a third of the in-memory
-- matcher's time in bench_match), for a fact causal_links already holds.
-- A receive is matched exactly when it is the child of a link (a matcher
-- never removes a receive's last link without giving it another), so:
--  * remote_calls loses the column; matched(remote_calls) answers instead,
--    and PostgreSQL reads r.matched as matched(r), so readers that name
--    the row (r.matched, remote_calls.matched) keep working. SECURITY
--    DEFINER: a reader's own receive is matched even when row-level
--    security hides its link (the parent is another user's), as the
--    stored flag was.
--  * match_state.unmatched (the status counter receives_unmatched) stays
--    exact in every writer's own transaction, kept now by statement
--    triggers on both tables: a receive row stored without a link counts,
--    a link statement that gives a receive its first link (or takes its
--    last) moves the count by that receive's rows. Each costs index
--    probes (causal_links_child, remote_calls_aid), no row write.
--  * fillfactor goes back to the default: the free half of each page was
--    room for the flag's in-place update (schema 030).
DROP TRIGGER IF EXISTS remote_calls_unmatched_ins ON remote_calls;
DROP TRIGGER IF EXISTS remote_calls_unmatched_upd ON remote_calls;
DROP TRIGGER IF EXISTS remote_calls_unmatched_del ON remote_calls;
DROP FUNCTION IF EXISTS siox_rc_unmatched_ins();
DROP FUNCTION IF EXISTS siox_rc_unmatched_upd();
DROP FUNCTION IF EXISTS siox_rc_unmatched_del();

-- A shard's view of remote_calls lists the column (SELECT * is expanded
-- when a view is made); siox_shard_setup makes it again below.
DROP VIEW IF EXISTS siox_shard.remote_calls;
ALTER TABLE remote_calls DROP COLUMN matched;
ALTER TABLE remote_calls RESET (fillfactor);

DO $$
BEGIN
  EXECUTE format($f$
    CREATE FUNCTION matched(r remote_calls) RETURNS boolean LANGUAGE sql STABLE SECURITY DEFINER
      SET search_path = %I, pg_temp
      AS 'SELECT r.kind = ''R'' AND EXISTS (SELECT 1 FROM causal_links l WHERE l.child_aid = r.aid)'$f$,
    current_schema());
END $$;

-- Receive rows stored (deleted) without a link. OFFSET 0 keeps the
-- anti-join one probe of causal_links_child per row: a transition table
-- has no statistics, and a hash join would read all of causal_links.
-- The trigger functions' plans are made once per connection, often while
-- the tables are small: scans are off, so a plan made for 10 rows is not
-- a sequential scan per row later (as it was: ingest at half speed), and
-- so is JIT, which their then huge costs set off (270 ms a statement).
CREATE FUNCTION siox_rc_unmatched() RETURNS trigger LANGUAGE plpgsql
  SET enable_seqscan = off SET enable_bitmapscan = off SET jit = off AS $$
DECLARE d bigint;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT count(*) INTO d FROM rc_new n
     WHERE n.kind = 'R' AND NOT EXISTS (SELECT 1 FROM causal_links l WHERE l.child_aid = n.aid OFFSET 0);
  ELSE
    SELECT -count(*) INTO d FROM rc_old o
     WHERE o.kind = 'R' AND NOT EXISTS (SELECT 1 FROM causal_links l WHERE l.child_aid = o.aid OFFSET 0);
  END IF;
  IF d <> 0 THEN UPDATE match_state SET unmatched = unmatched + d; END IF;
  RETURN NULL;
END $$;

-- A row whose aid or kind is rewritten (nothing does; a hand's UPDATE
-- would): the links do not change, so each row counts on its own.
CREATE FUNCTION siox_rc_unmatched_row() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE d bigint;
BEGIN
  d := (NEW.kind = 'R' AND NOT EXISTS (SELECT 1 FROM causal_links l WHERE l.child_aid = NEW.aid))::int
     - (OLD.kind = 'R' AND NOT EXISTS (SELECT 1 FROM causal_links l WHERE l.child_aid = OLD.aid))::int;
  IF d <> 0 THEN UPDATE match_state SET unmatched = unmatched + d; END IF;
  RETURN NULL;
END $$;

-- A link statement moves the count by the receive rows of each child that
-- it gave a first link (or took the last one from). Insert: a child none
-- of whose links is older than the statement; delete: a child with no
-- link left. Update (the upserts change confidences, never a pair; a
-- hand's UPDATE might): k is how many links the statement added to child
-- c (negative: removed), so c had now - k before it. The child's receive
-- rows are one probe of remote_calls_aid (OFFSET 0: kind = 'R' as an index
-- condition made the planner, without statistics, AND in a scan of
-- remote_calls_obj).
CREATE FUNCTION siox_link_unmatched() RETURNS trigger LANGUAGE plpgsql
  SET enable_seqscan = off SET enable_bitmapscan = off SET jit = off AS $$
DECLARE
  c bigint[];
  k bigint[];
  d bigint;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT -count(*) INTO d FROM (SELECT child_aid, array_agg(parent_aid) AS p FROM cl_new GROUP BY 1) n
      CROSS JOIN LATERAL (SELECT r.kind FROM remote_calls r WHERE r.aid = n.child_aid OFFSET 0) r
     WHERE r.kind = 'R'
       AND NOT EXISTS (SELECT 1 FROM causal_links l WHERE l.child_aid = n.child_aid AND l.parent_aid <> ALL (n.p) OFFSET 0);
  ELSIF TG_OP = 'DELETE' THEN
    SELECT count(*) INTO d FROM (SELECT DISTINCT child_aid FROM cl_old) o
      CROSS JOIN LATERAL (SELECT r.kind FROM remote_calls r WHERE r.aid = o.child_aid OFFSET 0) r
     WHERE r.kind = 'R' AND NOT EXISTS (SELECT 1 FROM causal_links l WHERE l.child_aid = o.child_aid OFFSET 0);
  ELSE
    SELECT array_agg(child_aid), array_agg(n) INTO c, k FROM (
      SELECT child_aid, sum(n) AS n FROM (SELECT child_aid, 1 AS n FROM cl_new UNION ALL SELECT child_aid, -1 FROM cl_old) y
       GROUP BY 1 HAVING sum(n) <> 0) x;
    SELECT COALESCE(sum(CASE WHEN (x.now = 0) = (x.now - x.k = 0) THEN 0
                        ELSE ((x.now = 0)::int - (x.now - x.k = 0)::int)
                             * (SELECT count(*) FROM (SELECT r.kind FROM remote_calls r WHERE r.aid = x.c OFFSET 0) r
                                 WHERE r.kind = 'R') END), 0) INTO d
      FROM (SELECT u.c, u.k, (SELECT count(*) FROM causal_links l WHERE l.child_aid = u.c) AS now
              FROM unnest(c, k) u(c, k) OFFSET 0) x;
  END IF;
  IF d <> 0 THEN UPDATE match_state SET unmatched = unmatched + d; END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER remote_calls_unmatched_ins AFTER INSERT ON remote_calls
  REFERENCING NEW TABLE AS rc_new FOR EACH STATEMENT EXECUTE FUNCTION siox_rc_unmatched();
CREATE TRIGGER remote_calls_unmatched_del AFTER DELETE ON remote_calls
  REFERENCING OLD TABLE AS rc_old FOR EACH STATEMENT EXECUTE FUNCTION siox_rc_unmatched();
CREATE TRIGGER remote_calls_unmatched_upd AFTER UPDATE OF aid, kind ON remote_calls
  FOR EACH ROW WHEN (OLD.aid IS DISTINCT FROM NEW.aid OR OLD.kind IS DISTINCT FROM NEW.kind)
  EXECUTE FUNCTION siox_rc_unmatched_row();
CREATE TRIGGER causal_links_unmatched_ins AFTER INSERT ON causal_links
  REFERENCING NEW TABLE AS cl_new FOR EACH STATEMENT EXECUTE FUNCTION siox_link_unmatched();
CREATE TRIGGER causal_links_unmatched_upd AFTER UPDATE ON causal_links
  REFERENCING OLD TABLE AS cl_old NEW TABLE AS cl_new FOR EACH STATEMENT EXECUTE FUNCTION siox_link_unmatched();
CREATE TRIGGER causal_links_unmatched_del AFTER DELETE ON causal_links
  REFERENCING OLD TABLE AS cl_old FOR EACH STATEMENT EXECUTE FUNCTION siox_link_unmatched();

UPDATE match_state SET unmatched = (SELECT count(*) FROM remote_calls r
  WHERE r.kind = 'R' AND NOT EXISTS (SELECT 1 FROM causal_links l WHERE l.child_aid = r.aid));

-- A shard gets its views back, the new column list included.
DO $$
BEGIN
  PERFORM siox_shard_setup(s.shard, s.nshards) FROM shard_config s;
END $$;
