-- Knowledge base, schema version 7: findings of the job analyses and the
-- bookkeeping of which jobs have been analysed (knowledge-base/src/findings_*.c).

-- One finding of one analysis of a job: what was seen (kind, severity, a
-- one-line summary), the evidence (counts, bytes, share of I/O time, example
-- AIDs, the cost model's numbers) and the expected gain of acting on it. A
-- new analysis of a job replaces all of its findings.
CREATE TABLE kb_findings (
  finding_id      bigserial PRIMARY KEY,
  job             text NOT NULL,
  app_id          integer REFERENCES kb_apps,
  file_pattern    text NOT NULL DEFAULT '',   -- '' when not about one file
  kind            text NOT NULL,
  severity        text NOT NULL CHECK (severity IN ('info', 'warning', 'critical')),
  summary         text NOT NULL,
  evidence        jsonb NOT NULL DEFAULT '{}',
  expected_gain_s double precision NOT NULL DEFAULT 0,
  hint_set_id     bigint REFERENCES kb_hint_sets,  -- the set that acts on it
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX kb_findings_job ON kb_findings (job);
CREATE INDEX kb_findings_app ON kb_findings (app_id);

-- Per job: the newest activity end seen by siox_kb_analyze_pending's scan
-- and the one covered by the last analysis. seen_end_ns > analysed_end_ns
-- means new data; the job is analysed once quiet (ended) or, while it runs,
-- every incr_s seconds.
CREATE TABLE kb_analysis_runs (
  job             text PRIMARY KEY,
  seen_end_ns     bigint NOT NULL DEFAULT 0,
  analysed_end_ns bigint NOT NULL DEFAULT -1,
  analysed_at     timestamptz,
  findings        integer NOT NULL DEFAULT 0,
  activities      bigint NOT NULL DEFAULT 0,
  first_seen_at   timestamptz NOT NULL DEFAULT now()
);

-- The scan's watermark: activities with start_ns above (watermark_ns -
-- lookback_ns) are looked at again, so rows that reach the warehouse late
-- (daemon batches, a short spool) still mark their job. Every scan reads
-- the lookback's rows again: raise it for sites with slow uplinks, at that
-- cost.
CREATE TABLE kb_analysis_state (
  id           integer PRIMARY KEY CHECK (id = 1),
  watermark_ns bigint NOT NULL DEFAULT 0,
  lookback_ns  bigint NOT NULL DEFAULT 10000000000
);
INSERT INTO kb_analysis_state (id) VALUES (1);

-- The data behind a hint set (cost model, predictions) next to its
-- per-key rationale.
ALTER TABLE kb_hint_sets ADD COLUMN evidence jsonb NOT NULL DEFAULT '{}';
