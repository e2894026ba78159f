-- SIOX warehouse, schema version 32: the core rows the knowledge base reads
-- (issue 14 §1: no SQL on the core tables outside warehouse/). libsiox-kb
-- folds core rows into its kb_* tables, or joins both, in one server-side
-- statement; these functions are what such a statement selects from in
-- place of the core tables. warehouse/README.md, "What the warehouse offers
-- the knowledge base", lists which statement uses which.
--
-- Every function is written to be inlined by PostgreSQL's planner, so that
-- the calling statement plans exactly as if it named the tables itself
-- (its own conditions, joins and GROUP BY reach the tables' indexes):
--  * LANGUAGE sql, STABLE, one SELECT, no CTE (a CTE keeps the body from
--    being pulled up into the caller);
--  * SECURITY INVOKER (the default) and no SET clause: row-level security
--    (schema 011) applies to the caller as before, and a SET clause would
--    stop inlining;
--  * not STRICT (a strict set-returning function is never inlined);
--  * parameters only in WHERE clauses, never repeated in ways the planner
--    must evaluate twice.
-- Tables are named unqualified, as the callers named them: they resolve in
-- the caller's search_path, the schema the warehouse lives in.
--
-- bytes: the activity's io/bytes attribute (NULL when it has none), the
-- same expression the callers used to spell out.

-- The activities of one fold window (knowledge-base/src/baselines_fold.h):
-- those with lo_ns < end_ns <= hi_ns, found through the start_ns index as
-- from_ns < start_ns <= hi_ns (from_ns: lo_ns less kb_fold_state's
-- lookback_ns, the longest activity the fold expects). Used by the
-- baselines and capacity folds.
CREATE FUNCTION siox_fold_activities(from_ns bigint, lo_ns bigint, hi_ns bigint)
RETURNS TABLE (aid bigint, node_id integer, type_id integer, start_ns bigint, end_ns bigint, bytes bigint)
LANGUAGE sql STABLE AS $$
  SELECT a.aid, a.node_id, a.type_id, a.start_ns, a.end_ns,
         a.attr_vals[array_position(a.attr_ids, (SELECT o.id FROM ontology o WHERE o.name = 'io/bytes'))]
    FROM activities a
   WHERE a.start_ns > from_ns AND a.start_ns <= hi_ns AND a.end_ns > lo_ns AND a.end_ns <= hi_ns
$$;

-- The activities that started in [from_ns, to_ns). Used by anomalies and
-- by the baseline score (whose caller adds node and type conditions: they
-- reach the (type_id, start_ns) index).
CREATE FUNCTION siox_activities_started(from_ns bigint, to_ns bigint)
RETURNS TABLE (aid bigint, node_id integer, type_id integer, start_ns bigint, end_ns bigint, bytes bigint)
LANGUAGE sql STABLE AS $$
  SELECT a.aid, a.node_id, a.type_id, a.start_ns, a.end_ns,
         a.attr_vals[array_position(a.attr_ids, (SELECT o.id FROM ontology o WHERE o.name = 'io/bytes'))]
    FROM activities a
   WHERE a.start_ns >= from_ns AND a.start_ns < to_ns
$$;

-- The activities that started after after_ns, with the knowledge base's job
-- key of their process (processes.job, or proc:<proc_id> for a process
-- without one). Used by the pending-analysis scan (findings_job.c), which
-- keeps the layers it analyses by node_id (siox_nodes).
CREATE FUNCTION siox_job_activities_since(after_ns bigint)
RETURNS TABLE (job text, node_id integer, start_ns bigint, end_ns bigint)
LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN p.job = '' THEN 'proc:' || p.proc_id ELSE p.job END, a.node_id, a.start_ns, a.end_ns
    FROM activities a JOIN processes p ON p.proc_id = (a.aid >> 32)
   WHERE a.start_ns > after_ns
$$;

-- One activity (no row when it does not exist or the caller may not read
-- it). Used by the baseline score.
CREATE FUNCTION siox_activity(id bigint)
RETURNS TABLE (aid bigint, node_id integer, type_id integer, start_ns bigint, end_ns bigint, bytes bigint)
LANGUAGE sql STABLE AS $$
  SELECT a.aid, a.node_id, a.type_id, a.start_ns, a.end_ns,
         a.attr_vals[array_position(a.attr_ids, (SELECT o.id FROM ontology o WHERE o.name = 'io/bytes'))]
    FROM activities a
   WHERE a.aid = id
$$;

-- The components (nodes of the layer graph). Used by anomalies and the
-- capacity report to name them.
CREATE FUNCTION siox_nodes()
RETURNS TABLE (node_id integer, hwid text, swid text, iid text)
LANGUAGE sql STABLE AS $$
  SELECT n.node_id, n.hwid, n.swid, n.iid FROM nodes n
$$;

-- The components' nominal bandwidth (node attribute node/bandwidth, B/s),
-- where known. Used by the capacity report.
CREATE FUNCTION siox_node_bandwidth()
RETURNS TABLE (node_id integer, bytes_per_s double precision)
LANGUAGE sql STABLE AS $$
  SELECT na.node_id, na.value_num FROM node_attributes na JOIN ontology o ON o.id = na.attr_id
   WHERE o.name = 'node/bandwidth'
$$;

-- The activity types (call names). Used by anomalies.
CREATE FUNCTION siox_activity_types()
RETURNS TABLE (type_id integer, node_id integer, name text)
LANGUAGE sql STABLE AS $$
  SELECT t.type_id, t.node_id, t.name FROM activity_types t
$$;

-- The processes with the knowledge base's job key (job: processes.job, or
-- proc:<proc_id> for a process without one). Used by the capacity fold to
-- charge client hosts and jobs.
CREATE FUNCTION siox_processes()
RETURNS TABLE (proc_id integer, host text, job text, exe text, args text)
LANGUAGE sql STABLE AS $$
  SELECT p.proc_id, p.host, CASE WHEN p.job = '' THEN 'proc:' || p.proc_id ELSE p.job END, p.exe, p.args
    FROM processes p
$$;

-- The MPI_File_open calls of one application (its executable and
-- arguments), with their job key, start, the hint set they applied
-- (mpi/hint_set, NULL for none) and the path opened. Used to judge hint
-- sets (hints_outcome.c).
CREATE FUNCTION siox_app_mpi_opens(app_exe text, app_args text)
RETURNS TABLE (job text, start_ns bigint, hint_set bigint, path text)
LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN p.job = '' THEN 'proc:' || p.proc_id ELSE p.job END, a.start_ns,
         a.attr_vals[array_position(a.attr_ids, (SELECT o.id FROM ontology o WHERE o.name = 'mpi/hint_set'))],
         x.value
    FROM processes p JOIN activities a
      ON a.aid BETWEEN (p.proc_id::bigint << 32) AND ((p.proc_id::bigint << 32) | 4294967295)
    JOIN activity_types t ON t.type_id = a.type_id AND t.name = 'MPI_File_open'
    JOIN activity_text_attrs x ON x.aid = a.aid
     AND x.attr_id = (SELECT o.id FROM ontology o WHERE o.name = 'posix/path')
   WHERE p.exe = app_exe AND p.args = app_args
$$;

-- The hint sets (mpi/hint_set, NULL for none) the MPI_File_open calls of
-- one job applied; job_key as in siox_processes. Used to pick the sets to
-- judge for a job (hints_outcome.c).
CREATE FUNCTION siox_job_mpi_opens(job_key text)
RETURNS TABLE (hint_set bigint)
LANGUAGE sql STABLE AS $$
  SELECT a.attr_vals[array_position(a.attr_ids, (SELECT o.id FROM ontology o WHERE o.name = 'mpi/hint_set'))]
    FROM processes p JOIN activities a
      ON a.aid BETWEEN (p.proc_id::bigint << 32) AND ((p.proc_id::bigint << 32) | 4294967295)
    JOIN activity_types t ON t.type_id = a.type_id AND t.name = 'MPI_File_open'
   WHERE p.job = job_key OR (p.job = '' AND 'proc:' || p.proc_id = job_key)
$$;
