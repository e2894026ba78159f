-- SIOX warehouse, schema version 13: where each process's activities were
-- lost (issue 9). client_stats keeps, per process:
--   activities    recorded into the process's buffer (its own count)
--   dropped       dropped in the client (buffer full, bad call, ...):
--                 activities + dropped is what the process made
--   dropped_exit  still held at exit, no daemon took them
--   daemon_dropped_spool    discarded by the daemon while its spool was full
--   daemon_dropped_invalid  refused by the daemon's record validation
-- The client's counters are cumulative (the latest wins); the daemon's come
-- as per-batch deltas and are added up. stored = count(activities of the
-- process); a complete account is made = stored + every dropped*.
ALTER TABLE client_stats
  ADD COLUMN dropped_exit bigint NOT NULL DEFAULT 0,
  ADD COLUMN daemon_dropped_spool bigint NOT NULL DEFAULT 0,
  ADD COLUMN daemon_dropped_invalid bigint NOT NULL DEFAULT 0;
