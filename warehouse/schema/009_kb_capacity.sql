-- Knowledge base, schema version 9: capacity aggregates.
--
-- Load per component and time bucket, folded incrementally like the baselines
-- (kb_fold_state row 'capacity'). Components, by kind:
--   node  one instrumented component (nodes.node_id): a brick, a device, a layer
--   host  a client node (processes.host), counting its lowest-layer I/O only
--   job   an MPI job (processes.job, or proc:<proc_id>), lowest-layer I/O only
-- An activity is charged to the bucket its end falls into.
INSERT INTO kb_fold_state (name) VALUES ('capacity');

CREATE TABLE kb_capacity (
  kind      text NOT NULL CHECK (kind IN ('node', 'host', 'job')),
  key       text NOT NULL,            -- node_id as text, host name, job
  bucket_ns bigint NOT NULL,          -- start of the bucket, ns since the epoch
  ops       bigint NOT NULL DEFAULT 0,
  bytes     bigint NOT NULL DEFAULT 0,
  busy_ns   double precision NOT NULL DEFAULT 0,  -- sum of the activities' latencies
  PRIMARY KEY (kind, key, bucket_ns)
);

-- Bucket width, fixed for a warehouse: changing it would mix widths.
CREATE TABLE kb_capacity_config (
  id        integer PRIMARY KEY CHECK (id = 1),
  bucket_ns bigint NOT NULL
);
INSERT INTO kb_capacity_config VALUES (1, 1000000000);
