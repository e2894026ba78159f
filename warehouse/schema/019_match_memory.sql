-- SIOX warehouse, schema version 19: the in-memory matcher (issue 15).
-- in_memory: the server's window decided this remote call's links at
-- ingest (a receive), or every receive it can meet (a sender), so the SQL
-- matcher does not treat it as new; see siox-server/README.md, "Implicit
-- links in memory". Rows from before, and every row of a server run with
-- --match-memory off, are false: the SQL matcher handles them as before.
ALTER TABLE remote_calls ADD COLUMN in_memory boolean NOT NULL DEFAULT false;
