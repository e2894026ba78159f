-- SIOX warehouse, schema version 1. Applied by siox-server's migrator in one
-- transaction; later versions go in 002_*.sql and so on, never by editing this.
--
-- Global activity id: aid = (proc_id << 32) | local aid (the client's siox_aid).
-- Times are nanoseconds since the Unix epoch on the server's clock: the daemon
-- converts client ticks to its own clock, the server adds the daemon's
-- measured offset (daemons.clock_offset_ns at ingest time).

CREATE TABLE ontology (
  id          integer PRIMARY KEY,
  name        text NOT NULL UNIQUE,
  type        text NOT NULL,
  unit        text NOT NULL,
  scope       text NOT NULL,
  description text NOT NULL
);

CREATE TABLE daemons (
  daemon_id            bigint PRIMARY KEY,
  hostname             text NOT NULL,
  acked_seq            bigint NOT NULL DEFAULT 0,   -- idempotency watermark
  clock_offset_ns      bigint NOT NULL DEFAULT 0,
  clock_uncertainty_ns bigint NOT NULL DEFAULT 0,
  first_seen           timestamptz NOT NULL DEFAULT now(),
  last_seen            timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE processes (
  proc_id    serial PRIMARY KEY,
  daemon_id  bigint NOT NULL REFERENCES daemons,
  host       text NOT NULL,
  pid        integer NOT NULL,
  uid        integer NOT NULL,
  nonce      bigint NOT NULL,
  exe        text NOT NULL DEFAULT '',
  args       text NOT NULL DEFAULT '',
  job        text NOT NULL DEFAULT '',
  first_seen timestamptz NOT NULL DEFAULT now(),
  UNIQUE (daemon_id, pid, nonce)
);

CREATE TABLE nodes (
  node_id serial PRIMARY KEY,
  hwid    text NOT NULL,
  swid    text NOT NULL,
  iid     text NOT NULL DEFAULT '',
  UNIQUE (hwid, swid, iid)
);

CREATE TABLE node_attributes (
  node_id    integer NOT NULL REFERENCES nodes,
  attr_id    integer NOT NULL REFERENCES ontology,
  value_num  double precision,
  value_text text,
  PRIMARY KEY (node_id, attr_id)
);

CREATE TABLE edges (
  from_node integer NOT NULL REFERENCES nodes,
  to_node   integer NOT NULL REFERENCES nodes,
  PRIMARY KEY (from_node, to_node)
);

CREATE TABLE activity_types (
  type_id serial PRIMARY KEY,
  node_id integer NOT NULL REFERENCES nodes,
  name    text NOT NULL,
  UNIQUE (node_id, name)
);

-- The fact table. Numeric attributes live in parallel arrays in the row so
-- that one COPY row carries one activity (see activity_attributes for a
-- relational view). No foreign keys here: they would halve COPY throughput,
-- and the ingest path guarantees node_id/type_id exist.
CREATE TABLE activities (
  aid        bigint PRIMARY KEY,
  proc_id    integer NOT NULL,
  parent_aid bigint,            -- explicit parent, same process
  node_id    integer NOT NULL,
  type_id    integer NOT NULL,
  start_ns   bigint NOT NULL,
  end_ns     bigint NOT NULL,
  err        integer NOT NULL DEFAULT 0,
  attr_ids   integer[] NOT NULL DEFAULT '{}',
  attr_vals  bigint[] NOT NULL DEFAULT '{}',          -- u64 stored as two's complement
  real_ids   integer[] NOT NULL DEFAULT '{}',
  real_vals  double precision[] NOT NULL DEFAULT '{}'
);
CREATE INDEX activities_parent ON activities (parent_aid);
CREATE INDEX activities_start ON activities (start_ns);
CREATE INDEX activities_proc ON activities (proc_id);

CREATE TABLE activity_text_attrs (
  aid     bigint NOT NULL,
  attr_id integer NOT NULL,
  value   text NOT NULL
);
CREATE INDEX activity_text_attrs_aid ON activity_text_attrs (aid);

-- Canonical objects: descriptors resolved through the reported mappings
-- (path <-> gfid <-> fd <-> MPI_File) to one object each.
CREATE TABLE objects (
  object_id bigserial PRIMARY KEY,
  merged_into bigint REFERENCES objects  -- set when two objects turned out one
);

-- scope_key: '' for global descriptors, the host for host scope, the proc_id
-- (as text) for process scope. value: hex of bytes, decimal of integers, text.
CREATE TABLE descriptors (
  desc_id   bigserial PRIMARY KEY,
  scope_key text NOT NULL,
  type      integer NOT NULL,
  value     text NOT NULL,
  object_id bigint NOT NULL REFERENCES objects,
  UNIQUE (scope_key, type, value)
);

CREATE TABLE descriptor_mappings (
  proc_id   integer NOT NULL,
  node_id   integer,
  aid       bigint,
  from_desc bigint NOT NULL REFERENCES descriptors,
  to_desc   bigint NOT NULL REFERENCES descriptors
);

-- Remote-call records: kind 'S' (sender, siox_descriptor_send) or
-- 'R' (receiver, siox_descriptor_receive). Matched into causal_links.
CREATE TABLE remote_calls (
  aid         bigint NOT NULL,
  kind        "char" NOT NULL,
  object_id   bigint NOT NULL,
  desc_id     bigint NOT NULL,
  offset_b    bigint NOT NULL,
  length_b    bigint NOT NULL,
  target_hwid text NOT NULL DEFAULT '',   -- senders only; '' = any
  target_swid text NOT NULL DEFAULT '',
  matched     boolean NOT NULL DEFAULT false,
  ingested_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX remote_calls_obj ON remote_calls (object_id, kind);
CREATE INDEX remote_calls_aid ON remote_calls (aid);

-- Implicit (cross-process) causal links with their confidence.
-- flags: '' normally; 'before-parent' when the child started before the
-- parent (read-ahead), which always comes with a low confidence.
CREATE TABLE causal_links (
  parent_aid    bigint NOT NULL,
  child_aid     bigint NOT NULL,
  confidence    real NOT NULL CHECK (confidence > 0 AND confidence <= 1),
  overlap_bytes bigint NOT NULL,
  flags         text NOT NULL DEFAULT '',
  PRIMARY KEY (parent_aid, child_aid)
);
CREATE INDEX causal_links_child ON causal_links (child_aid);

-- Every causal edge, explicit and implicit, for graph queries.
CREATE VIEW causal_edges AS
  SELECT parent_aid, aid AS child_aid, 'explicit'::text AS kind,
         1.0::real AS confidence, ''::text AS flags
    FROM activities WHERE parent_aid IS NOT NULL
  UNION ALL
  SELECT parent_aid, child_aid, 'implicit', confidence, flags FROM causal_links;

-- One row per activity attribute, with names, for ad-hoc SQL.
CREATE VIEW activity_attributes AS
  SELECT a.aid, o.name, a.attr_vals[i]::text AS value
    FROM activities a, generate_subscripts(a.attr_ids, 1) i, ontology o
   WHERE o.id = a.attr_ids[i]
  UNION ALL
  SELECT a.aid, o.name, a.real_vals[i]::text
    FROM activities a, generate_subscripts(a.real_ids, 1) i, ontology o
   WHERE o.id = a.real_ids[i]
  UNION ALL
  SELECT t.aid, o.name, t.value FROM activity_text_attrs t JOIN ontology o ON o.id = t.attr_id;

-- Latest counters each client process reported (drops!).
CREATE TABLE client_stats (
  proc_id    integer PRIMARY KEY,
  activities bigint NOT NULL,
  records    bigint NOT NULL,
  dropped    bigint NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
