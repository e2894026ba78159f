-- Knowledge base, schema version 25: an experiment's claim lapses.
-- experiment_claimed_at: when experiment_run claimed it. A claim older than a
-- day with the set still an experiment (its run never ended, or was never
-- analysed) no longer holds: the next run that asks claims it instead
-- (knowledge-base/src/hints_lookup.c). Claims made before this version count
-- from now. Shares the warehouse's version sequence.
ALTER TABLE kb_hint_sets ADD COLUMN experiment_claimed_at timestamptz;
UPDATE kb_hint_sets SET experiment_claimed_at = now() WHERE experiment_run IS NOT NULL;
