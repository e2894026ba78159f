-- SIOX warehouse, schema version 31: remote calls cross shards (issue 15
-- §2; siox-server --shard K/N --shard-peer J=CONNINFO, see warehouse/README.md,
-- "Cross-shard causality"). A database that is no shard, or a shard without
-- peers, never writes these tables: they stay empty.
--
-- The owner of a remote call named by a global descriptor (gfid, path,
-- handle) is shard 1 + fnv1a64("type\x1fvalue") mod N. A shard stores its
-- own remote calls as before and, for each one another shard owns, writes a
-- row here in the batch's own transaction: the outbox holds exactly what was
-- stored. siox-server's forwarder copies the rows whose activity is stored
-- (their interval known) to the owner and deletes them after the owner
-- committed.
CREATE TABLE shard_outbox (
  ob_id       bigserial PRIMARY KEY,
  owner       integer NOT NULL,
  aid         bigint NOT NULL,
  kind        "char" NOT NULL,
  desc_id     bigint NOT NULL,
  offset_b    bigint NOT NULL,
  length_b    bigint NOT NULL,
  target_hwid text NOT NULL,
  target_swid text NOT NULL
);
CREATE INDEX shard_outbox_owner ON shard_outbox (owner, ob_id);

-- On the owner: each forwarded row once, keyed by where it came from. The
-- forwarder's transaction drops the rows this table already holds before it
-- stores the rest (and their keys here), so a row sent again (the origin
-- died between the owner's commit and its delete) adds nothing:
-- at-least-once transfer, exactly-once storage.
CREATE TABLE shard_inbox (
  origin integer NOT NULL,
  ob_id  bigint NOT NULL,
  PRIMARY KEY (origin, ob_id)
);

-- On the owner: what the matcher reads of a forwarded call's activity, which
-- lives on its origin shard: the node (a receive's hwid/swid, for the
-- sender's target) and its daemon's clock uncertainty (the latest
-- forwarded).
CREATE TABLE shard_actors (
  aid    bigint PRIMARY KEY,
  hwid   text NOT NULL,
  swid   text NOT NULL,
  unc_ns bigint NOT NULL
);
-- The matcher's widest clock widening reads max(unc_ns) on every pass.
CREATE INDEX shard_actors_unc ON shard_actors (unc_ns);

-- A remote call forwarded from shard `origin` (NULL: recorded here). The
-- owner links it with its own calls and with other shards' calls, never
-- with calls of its own origin: those pairs are linked there.
ALTER TABLE remote_calls ADD COLUMN origin integer;
