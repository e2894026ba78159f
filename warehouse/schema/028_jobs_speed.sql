-- SIOX warehouse, schema version 28: `siox jobs` keeps each job's sums.
--
-- A listing used to group every job's activities again (47-68 s for a job of
-- 1M activities). Each job's sums over its calls (counts, bytes, I/O time,
-- the factors' numerators and denominators) are now stored as a document of
-- kind 'jobs' (bins 0) under the same stamp as the summary's, the count and
-- highest AID of the job's activities; a listing reads them while the stamp
-- holds and groups only the jobs that are new or changed
-- (warehouse/src/wh_jobs.c, wh_jobs_store.c; warehouse/README.md, "Job
-- views"). Row-level security and grants are 026's.
ALTER TABLE job_aggregates DROP CONSTRAINT job_aggregates_kind_check,
  ADD CONSTRAINT job_aggregates_kind_check CHECK (kind IN ('summary', 'heatmap', 'jobs'));
