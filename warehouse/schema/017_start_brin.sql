-- SIOX warehouse, schema version 17: the time index becomes a BRIN.
--
-- Each btree on activities costs ingest (COPY maintains every index per
-- row); schema 015 added (type_id, start_ns) for blame, and with it ingest
-- fell (bench_server, interleaved on the loaded 2-core machine; see
-- siox-server/README.md "Indexes and ingest"). Every query that reads a
-- time window of ONE kind of activity (blame's peers, what a resource
-- served, the baseline's left-out window, the kind's history) reads it by
-- (type_id, start_ns). What is left for a time index alone are windows of
-- every activity (the knowledge base's folds and detectors: the activities
-- since a watermark), and activities arrive roughly in time order, batch by
-- batch: a block range index answers those with a few range summaries per
-- 32 pages, which COPY maintains for almost nothing (a late batch from a
-- spool widens one range's summary; answers stay exact, only more pages are
-- read for it).
DROP INDEX IF EXISTS activities_start;
CREATE INDEX activities_start ON activities USING brin (start_ns) WITH (pages_per_range = 32);
