-- SIOX warehouse, schema version 14: a daemon id belongs to one identity.
-- The first authenticated session that stores a batch under a daemon id
-- records who it was; a Hello from any other identity is refused (auth.c).
--   owner_auth  'munge' or 'token'; NULL: stored with --auth none (no owner)
--   owner_uid   munge: the uid the credential vouches for; NULL for token
--   owner_host  munge: the origin address munged recorded in the
--               credential; token: the Hello's hostname
-- To hand a daemon id to another identity (a node re-addressed, a daemon
-- moved from token to MUNGE), an admin clears these three columns; the next
-- authenticated Hello claims it.
ALTER TABLE daemons ADD COLUMN owner_auth text, ADD COLUMN owner_uid bigint, ADD COLUMN owner_host text;

-- Rows used to be made at Hello, so anyone could create them at will (a
-- test made 26,276 with random ids). Now a row is made with its daemon's
-- first stored batch: drop the ones that never stored anything.
DELETE FROM daemons d WHERE d.acked_seq = 0 AND NOT EXISTS (SELECT 1 FROM processes p WHERE p.daemon_id = d.daemon_id);
