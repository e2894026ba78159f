-- SIOX warehouse, schema version 37: causal_links loses link_id (issue 15
-- §1; siox-server/README.md, "The grant pass learns the new links in
-- process").
--
-- Schema 011 gave every link an ordered id (a bigserial and a btree) only
-- so that the grant pass (siox-server/roles.c) could read the links made
-- since its last pass. Every writer of causal_links is the server's
-- database thread, which now hands the grant pass the pairs it stored
-- (grant_queue.c); a start, a reconnect or an overflow of that queue makes
-- the next pass read every link, as each start's first pass did. The id
-- was a quarter of a link row's cost to PostgreSQL (bench_link_row: the
-- btree 18 %, column, nextval and btree 26 %), and a link row is most of
-- the in-memory matcher's time.
--
-- A shard's view of causal_links lists the column (SELECT * is expanded
-- when a view is made); siox_shard_setup makes it again below. Dropping the
-- column drops its index and its sequence (owned by it).
DROP VIEW IF EXISTS siox_shard.causal_links;
ALTER TABLE causal_links DROP COLUMN IF EXISTS link_id;

DO $$
BEGIN
  PERFORM siox_shard_setup(s.shard, s.nshards) FROM shard_config s;
END $$;
