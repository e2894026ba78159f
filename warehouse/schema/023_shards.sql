-- SIOX warehouse, schema version 23: a warehouse may be shard K of a site
-- (issue 15 §2; siox-server --shard K/N, see warehouse/README.md, "Shards
-- and the coordinator"). A database that is no shard is untouched: the
-- function below runs only when the server is told its shard number.
--
-- shard_config: this database's shard number (one row, none when no shard).
CREATE TABLE shard_config (
  one     boolean PRIMARY KEY DEFAULT true CHECK (one),
  shard   integer NOT NULL CHECK (shard BETWEEN 1 AND 127),
  nshards integer NOT NULL CHECK (nshards BETWEEN 1 AND 127),
  since   timestamptz NOT NULL DEFAULT now()
);

-- siox_shard_setup(k, n): makes this database shard k of n. Idempotent, so
-- the server runs it on every start (a sequence added by a later migration
-- gets its range too).
--  * Disjoint ids: every sequence of the schema draws from shard k's own
--    range, integer ones [k<<24, (k+1)<<24) (proc_id, node_id, type_id, ...),
--    bigint ones [k<<48, (k+1)<<48) (object_id, desc_id, rc_id, link_id,
--    ...), so rows of different shards never share an id and a global aid
--    (proc_id << 32 | local aid) is unique in the whole site. A warehouse
--    that already stored processes under another numbering is refused.
--  * Schema siox_shard: one view per table, the table's rows plus a first
--    column "shard" = k (no access but the superuser's: they read past
--    row-level security). The coordinator imports these views as its foreign
--    partitions (list-partitioned on "shard"), so each partition's bound is
--    true by construction. Rebuilt on every call: a later migration's
--    columns appear in them.
CREATE FUNCTION siox_shard_setup(k integer, n integer) RETURNS void
LANGUAGE plpgsql SET client_min_messages = warning AS $$
DECLARE
  old integer;
  s record;
  t record;
  lo bigint;
  hi bigint;
BEGIN
  IF k < 1 OR k > 127 OR n < k OR n > 127 THEN
    RAISE EXCEPTION 'shard % of %: need 1 <= K <= N <= 127', k, n;
  END IF;
  SELECT shard INTO old FROM shard_config;
  IF old IS NOT NULL AND old <> k THEN
    RAISE EXCEPTION 'this warehouse is shard %, not shard % (a shard keeps its number: its ids are drawn from it)', old, k;
  END IF;
  IF old IS NULL AND EXISTS (SELECT 1 FROM processes) THEN
    RAISE EXCEPTION 'this warehouse already holds processes numbered outside shard %''s range; a shard starts from an empty warehouse', k;
  END IF;
  INSERT INTO shard_config (shard, nshards) VALUES (k, n)
    ON CONFLICT (one) DO UPDATE SET nshards = EXCLUDED.nshards;
  FOR s IN SELECT schemaname, sequencename, data_type, last_value
             FROM pg_sequences WHERE schemaname = 'public' LOOP
    IF s.data_type = 'integer'::regtype THEN
      lo := k::bigint << 24; hi := ((k + 1)::bigint << 24) - 1;
    ELSE
      lo := k::bigint << 48; hi := ((k + 1)::bigint << 48) - 1;
    END IF;
    IF s.last_value IS NOT NULL AND (s.last_value < lo OR s.last_value > hi) THEN
      RAISE EXCEPTION 'sequence % is at %, outside shard %''s range', s.sequencename, s.last_value, k;
    END IF;
    -- A sequence never drawn from restarts at the range's start.
    EXECUTE format('ALTER SEQUENCE %I.%I MINVALUE %s MAXVALUE %s START WITH %s %s', s.schemaname, s.sequencename,
                   lo, hi, lo, CASE WHEN s.last_value IS NULL THEN 'RESTART WITH ' || lo ELSE '' END);
  END LOOP;
  DROP SCHEMA IF EXISTS siox_shard CASCADE;
  CREATE SCHEMA siox_shard;
  -- Superuser-owned views read past row-level security: only the
  -- coordinator's superuser mapping may use them, never a reader.
  REVOKE ALL ON SCHEMA siox_shard FROM PUBLIC;
  FOR t IN SELECT tablename FROM pg_tables
            WHERE schemaname = 'public' AND tablename NOT IN ('schema_version', 'shard_config') LOOP
    EXECUTE format('CREATE VIEW siox_shard.%I AS SELECT %s::integer AS shard, * FROM public.%I', t.tablename, k, t.tablename);
  END LOOP;
END $$;
