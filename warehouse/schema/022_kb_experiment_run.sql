-- Knowledge base, schema version 22: an experiment hint set is tried on one
-- run (issue 11: "applied to one run, then judged on the outcome").
-- experiment_run: the run that claimed it at its first lookup, as
-- "<uid>:<job id>"; every other run is served the live set it superseded, or
-- none (knowledge-base/src/hints_lookup.c). Shares the warehouse's version
-- sequence.
ALTER TABLE kb_hint_sets ADD COLUMN experiment_run text;
