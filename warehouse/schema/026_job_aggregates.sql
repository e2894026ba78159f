-- SIOX warehouse, schema version 26: a job's aggregates, computed once.
--
-- `siox summary --job J` and the job page of `siox web` read the documents
-- stored here instead of re-reading the job's activities on every view
-- (warehouse/src/wh_job_cache.c; warehouse/README.md, "Job views"). A row is
-- a document of one kind for one job: 'summary' (bins 0) or 'heatmap' (bins:
-- its number of time bins). It holds for the job's activities as they were
-- when it was computed: acts and max_aid are their count and highest AID
-- then. A view first counts them again; a row whose stamp differs (late
-- activities, a retention that deleted some) is recomputed, never served.
CREATE TABLE job_aggregates (
  uid        integer NOT NULL,
  job        text NOT NULL,
  kind       text NOT NULL CHECK (kind IN ('summary', 'heatmap')),
  bins       integer NOT NULL,
  acts       bigint NOT NULL,
  max_aid    bigint NOT NULL,
  doc        text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (uid, job, kind, bins)
);

-- A job's owner computes and stores its own documents (`siox` runs as the
-- user); it sees all its job's activities, as an admin does, so both compute
-- the same document. A reader reads and writes only rows of its own uid.
GRANT SELECT, INSERT, UPDATE, DELETE ON job_aggregates TO siox_reader, siox_admin, siox_writer;
ALTER TABLE job_aggregates ENABLE ROW LEVEL SECURITY;
CREATE POLICY siox_all ON job_aggregates TO siox_writer, siox_admin USING (true) WITH CHECK (true);
CREATE POLICY siox_own ON job_aggregates TO siox_reader
  USING (uid = (SELECT siox_my_uid())) WITH CHECK (uid = (SELECT siox_my_uid()));
