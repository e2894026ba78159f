-- Knowledge base, schema version 16: the measured outcome of every applied
-- hint set and its withdrawal (knowledge-base/src/hints_outcome*.c,
-- outcome_rule.c). Shares the warehouse's version sequence.
--
-- status: 'live' (served), 'experiment' (its prediction rests on a value the
-- data could not determine; served until a run that applied it has been
-- judged, then live when measured faster, else withdrawn), 'withdrawn'
-- (measured slower than the runs without it beyond noise, or an experiment
-- without a measured gain; never served again, kept as evidence).
-- previous_set_id: the live set this one superseded; a withdrawal makes it
-- live again, so later opens get the previous set (or none).
-- outcome: the last judgement, NULL = not measured yet: {verdict, speedup,
-- ci_low, ci_high, per_byte, runs_with, runs_without, calls_with,
-- calls_without, jobs_with, jobs_without}.
ALTER TABLE kb_hint_sets
  ADD COLUMN status text NOT NULL DEFAULT 'live' CHECK (status IN ('live', 'experiment', 'withdrawn')),
  ADD COLUMN status_reason text NOT NULL DEFAULT '',
  ADD COLUMN previous_set_id bigint REFERENCES kb_hint_sets,
  ADD COLUMN outcome jsonb,
  ADD COLUMN judged_at timestamptz;
