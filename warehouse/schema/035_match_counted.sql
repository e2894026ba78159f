-- SIOX warehouse, schema version 35: the in-memory matcher keeps
-- match_state.unmatched itself for the links it writes (issue 15 §1;
-- siox-server/README.md, "Implicit links in memory").
--
-- Schema 034's statement triggers on causal_links probe two indexes per
-- link (is it its child's first? how many receive rows has the child?) to
-- keep the count exact: about a third of the in-memory matcher's time in
-- bench_match. The window knows both for every receive it decides: it
-- remembers the links it stored (the SQL matcher never links a receive the
-- window still decides) and the receive is its activity's only receive
-- record (objects.c's window_receive). So its statements move the count
-- once per batch (match_memory.c) and set siox.links_counted = 'on' for
-- themselves (SET LOCAL, reset after them; rolled back with their
-- savepoint when the batch falls back to the upsert, which the triggers
-- count). Every other writer (the SQL matcher, a hand) leaves the setting
-- unset and keeps the trigger path. The WHEN clause keeps the trigger
-- function from running at all; PostgreSQL still fills the transition
-- table of such a statement.
DROP TRIGGER causal_links_unmatched_ins ON causal_links;
DROP TRIGGER causal_links_unmatched_upd ON causal_links;
DROP TRIGGER causal_links_unmatched_del ON causal_links;

CREATE TRIGGER causal_links_unmatched_ins AFTER INSERT ON causal_links
  REFERENCING NEW TABLE AS cl_new FOR EACH STATEMENT
  WHEN (current_setting('siox.links_counted', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION siox_link_unmatched();
CREATE TRIGGER causal_links_unmatched_upd AFTER UPDATE ON causal_links
  REFERENCING OLD TABLE AS cl_old NEW TABLE AS cl_new FOR EACH STATEMENT
  WHEN (current_setting('siox.links_counted', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION siox_link_unmatched();
CREATE TRIGGER causal_links_unmatched_del AFTER DELETE ON causal_links
  REFERENCING OLD TABLE AS cl_old FOR EACH STATEMENT
  WHEN (current_setting('siox.links_counted', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION siox_link_unmatched();
