-- SIOX warehouse, schema version 24: the kinds' latency models, kept
-- (issue 10, blame latency). Blame judges a component without peers against
-- its kind's model (siox-cli/README.md, "A verdict without peers"): a line
-- seconds = a_s + b_s * bytes fitted on the latest 2000 operations per
-- component of one (swid, activity name) that started before to_ns. Fitting
-- it per call read up to 32,000 scattered rows (seconds on 10M activities);
-- siox-server's analysis thread (and `siox anomalies --update`) fits it
-- instead at each minute boundary to_ns of the timeline at which the kind had
-- operations in the minute before (warehouse/src/wh_kind_models.c), and
-- blame reads the newest row at or before the call's start.
CREATE TABLE kb_kind_models (
  swid       text NOT NULL,
  name       text NOT NULL,
  to_ns      bigint NOT NULL,              -- history: operations that started before this
  fitted     boolean NOT NULL,             -- false: too few components or sizes for a model
  a_s        double precision NOT NULL,
  b_s        double precision NOT NULL,    -- seconds per byte
  nodes      integer NOT NULL,             -- components in the history
  samples    integer NOT NULL,             -- operations in the history
  points     integer NOT NULL,             -- size classes the line went through
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (swid, name, to_ns)
);

-- The fold's watermark: every minute boundary up to watermark_ns has its
-- models (kb_fold_state, 008: settle_ns and the locking as the baselines).
INSERT INTO kb_fold_state (name) VALUES ('kind_models');
