-- SIOX warehouse, schema version 3: one index less on the fact table.
-- activities_proc duplicated what the primary key already offers: the upper
-- 32 bits of aid are the proc_id, so "all activities of process P" is the
-- range scan  aid BETWEEN P << 32 AND (P << 32) | 4294967295  on the
-- primary key. Every index on activities costs ingest throughput (COPY
-- maintains each one per row); measured in siox-server/README.md.
DROP INDEX IF EXISTS activities_proc;

-- Roots (parent_aid NULL) are never looked up by parent: keep them out of
-- the parent index, which COPY then maintains only for child activities.
-- "WHERE parent_aid = X" still uses it (the planner proves X IS NOT NULL).
DROP INDEX IF EXISTS activities_parent;
CREATE INDEX activities_parent ON activities (parent_aid) WHERE parent_aid IS NOT NULL;
