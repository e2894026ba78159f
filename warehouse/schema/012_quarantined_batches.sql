-- Batches the server could never store (ERROR_REJECTED: malformed, or a
-- record that failed validation) and that the daemon then quarantined on
-- its disk (<state-dir>/quarantine/<seq>.sxb) and skipped with a Skip
-- message. Skipping advances daemons.acked_seq like a stored batch, so the
-- loss is recorded here instead of being silent: `activities` is how many
-- the batch held.
CREATE TABLE quarantined_batches (
  daemon_id      bigint NOT NULL,
  seq            bigint NOT NULL,
  activities     bigint NOT NULL,
  reason         text NOT NULL,
  quarantined_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (daemon_id, seq)
);

