-- SIOX warehouse, schema version 2: what siox-server needs to be restart-safe.
--
-- Per-process dictionaries: a daemon sends a process's node, type and target
-- records once, and later batches refer to them by the client's local ids.
-- These tables keep that translation so that a restarted server (with empty
-- caches) still resolves the ids of batches that follow.
CREATE TABLE process_nodes (
  proc_id integer NOT NULL,
  unid    integer NOT NULL,
  node_id integer NOT NULL REFERENCES nodes,
  PRIMARY KEY (proc_id, unid)
);

CREATE TABLE process_types (
  proc_id    integer NOT NULL,
  local_type integer NOT NULL,
  type_id    integer NOT NULL REFERENCES activity_types,
  node_id    integer NOT NULL REFERENCES nodes,
  PRIMARY KEY (proc_id, local_type)
);

CREATE TABLE process_targets (
  proc_id   integer NOT NULL,
  target_id integer NOT NULL,
  hwid      text NOT NULL,
  swid      text NOT NULL,
  PRIMARY KEY (proc_id, target_id)
);

-- A released process-scope descriptor (a closed fd) must not name the next
-- file that reuses the number: released rows leave the uniqueness check.
ALTER TABLE descriptors ADD COLUMN released boolean NOT NULL DEFAULT false;
ALTER TABLE descriptors DROP CONSTRAINT descriptors_scope_key_type_value_key;
CREATE UNIQUE INDEX descriptors_live ON descriptors (scope_key, type, value) WHERE NOT released;
CREATE INDEX descriptors_object ON descriptors (object_id);

-- rc_id orders remote calls for the matcher: it re-examines receives whose
-- own row, or whose object's senders, have an rc_id above its watermark.
-- Merging two objects re-stamps the rows it moves.
ALTER TABLE remote_calls ADD COLUMN rc_id bigserial;
CREATE INDEX remote_calls_rc ON remote_calls (rc_id);

CREATE TABLE match_state (
  id        integer PRIMARY KEY CHECK (id = 1),
  watermark bigint NOT NULL
);
INSERT INTO match_state VALUES (1, 0);

-- Unmatched receives, for the matcher's retries and the status counter.
CREATE INDEX remote_calls_unmatched ON remote_calls (rc_id) WHERE kind = 'R' AND NOT matched;
