-- SIOX warehouse, schema version 33: descriptor mappings cross shards
-- (issue 15 §2; siox-server --shard-peer, see warehouse/README.md,
-- "Cross-shard causality", "Mappings"). A database that is no shard, or a
-- shard without peers, never writes these tables or the column: they stay
-- empty (false).
--
-- A shard that joins two objects which both have global names (a MAP of a
-- path to a gfid, or two maps through one fd) tells every other shard, by
-- one row per peer here, written in the batch's own transaction: each
-- shard then knows every global name of an object, routes its senders to
-- the owners of all of them, and joins the objects itself.
CREATE TABLE shard_map_outbox (
  ob_id  bigserial PRIMARY KEY,
  owner  integer NOT NULL,
  desc_a bigint NOT NULL,
  desc_b bigint NOT NULL
);
CREATE INDEX shard_map_outbox_owner ON shard_map_outbox (owner, ob_id);

-- On each peer: each forwarded mapping once, keyed by where it came from
-- (a row sent again, after a lost delete on the origin, is dropped by the
-- key). The server's database thread joins the two names' objects and
-- sets applied, in one transaction.
CREATE TABLE shard_map_inbox (
  origin  integer NOT NULL,
  ob_id   bigint NOT NULL,
  type_a  integer NOT NULL,
  value_a text NOT NULL,
  type_b  integer NOT NULL,
  value_b text NOT NULL,
  applied boolean NOT NULL DEFAULT false,
  PRIMARY KEY (origin, ob_id)
);
CREATE INDEX shard_map_inbox_pending ON shard_map_inbox (origin, ob_id) WHERE NOT applied;

-- A local receive whose owner is another shard (its outbox row went
-- there): the owner decides it with the other shards' senders, so here
-- only this shard's own senders are its candidates, even when a mapping
-- brought other shards' senders onto its object.
ALTER TABLE remote_calls ADD COLUMN away boolean NOT NULL DEFAULT false;
