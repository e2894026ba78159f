-- SIOX warehouse, schema version 11: who may read what.
--
-- Three group roles (NOLOGIN):
--   siox_writer  siox-server's ingest, matcher and analysis thread: reads and
--                writes every row
--   siox_reader  `siox` (and a future `siox web`) run by a user: reads only
--                that user's rows (row-level security below)
--   siox_admin   reads every row
-- A user's login role (named after the Unix user, so that peer
-- authentication maps one to the other) is a member of siox_reader or
-- siox_admin; siox-server creates it (siox-server/roles.c) and records it in
-- siox_users. The tables' owner and superusers bypass row-level security,
-- so a server that owns the schema keeps seeing everything.
--
-- Creating the group roles needs CREATEROLE. A site database (--db) whose
-- owner lacks it must have them created by its DBA first:
--   CREATE ROLE siox_writer NOLOGIN; CREATE ROLE siox_reader NOLOGIN;
--   CREATE ROLE siox_admin NOLOGIN;
DO $$
DECLARE
  r text;
  can boolean;
BEGIN
  SELECT rolsuper OR rolcreaterole INTO can FROM pg_roles WHERE rolname = current_user;
  FOREACH r IN ARRAY ARRAY['siox_writer', 'siox_reader', 'siox_admin'] LOOP
    CONTINUE WHEN EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r);
    IF NOT can THEN
      RAISE EXCEPTION 'role % does not exist and % may not create it: as a superuser run CREATE ROLE % NOLOGIN', r, current_user, r;
    END IF;
    EXECUTE format('CREATE ROLE %I NOLOGIN', r);
  END LOOP;
END $$;

-- The Unix users siox-server made login roles for. uid is the one the
-- daemon stamped on processes.uid (SO_PEERCRED). Not secret: the same
-- pairs are in /etc/passwd.
CREATE TABLE siox_users (
  uid        integer PRIMARY KEY,
  role       name NOT NULL UNIQUE,
  admin      boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Rows of other users' processes (GlusterFS bricks, devices: root's) that a
-- user may read because they are causally below one of the user's own
-- activities: the server adds them after each matcher pass (roles.c).
CREATE TABLE siox_activity_grants (
  uid integer NOT NULL,
  aid bigint NOT NULL,
  PRIMARY KEY (uid, aid)
);

-- link_id orders causal links, so that the grant pass (roles.c) looks only
-- at the links made since its last pass.
ALTER TABLE causal_links ADD COLUMN link_id bigserial;
CREATE INDEX causal_links_link_id ON causal_links (link_id);

-- Both functions name their tables with a fixed search_path (this schema,
-- then pg_temp last): a function body is resolved when it runs, and a user
-- could otherwise put a temporary siox_users or processes in its way.
DO $$
BEGIN
  -- The caller's uid, NULL for a role that is no user. A policy calls it
  -- as (SELECT siox_my_uid()), so it runs once per query, not once per row.
  EXECUTE format($f$
    CREATE FUNCTION siox_my_uid() RETURNS integer LANGUAGE sql STABLE PARALLEL SAFE
      SET search_path = %I, pg_temp
      AS 'SELECT uid FROM siox_users WHERE role = current_user'$f$, current_schema());
  -- 1 when every process of job j (the knowledge base's key: processes.job,
  -- or proc:<proc_id> for a process without one) is the caller's. The
  -- knowledge base analyses a job by its id alone, so a job whose id two
  -- users' processes carry (a forged or reused id) mixes their data: its
  -- findings and load are for the admin only. SECURITY DEFINER: it must see
  -- the other user's processes, which row-level security hides from the
  -- caller; session_user is the caller's login role.
  EXECUTE format($f$
    CREATE FUNCTION siox_job_is_mine(j text) RETURNS boolean LANGUAGE sql STABLE SECURITY DEFINER
      SET search_path = %I, pg_temp
      AS 'SELECT coalesce(bool_and(p.uid = u.uid), false) FROM siox_users u, processes p
           WHERE u.role = session_user AND (p.job = j OR (p.job = '''' AND ''proc:'' || p.proc_id = j))'$f$,
    current_schema());
END $$;


GRANT SELECT ON ALL TABLES IN SCHEMA public TO siox_reader, siox_admin;
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA public TO siox_writer;
GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO siox_writer;
-- Tables of later migrations get the same grants.
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO siox_reader, siox_admin;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLES TO siox_writer;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO siox_writer;

-- Row-level security. Each table gets one policy for the writer and the
-- admin (everything) and one for readers (their own rows). The reader's
-- tests are uncorrelated IN (subquery): PostgreSQL hashes the subquery's
-- result once per query, so a scan of activities pays one hash probe a row.
--   own process:  proc_id IN (SELECT proc_id FROM processes WHERE uid = me)
--   granted row:  aid IN (SELECT aid FROM siox_activity_grants WHERE uid = me)
DO $$
DECLARE
  t text;
  own_proc constant text := '(SELECT p.proc_id FROM processes p WHERE p.uid = (SELECT siox_my_uid()))';
  granted constant text := '(SELECT g.aid FROM siox_activity_grants g WHERE g.uid = (SELECT siox_my_uid()))';
  reader_rule text;
  rules constant text[][] := ARRAY[
    -- table, the reader's USING clause (%1$s: own processes, %2$s: granted aids)
    ['processes', 'uid = (SELECT siox_my_uid()) OR proc_id IN (SELECT (g.aid >> 32)::integer FROM siox_activity_grants g WHERE g.uid = (SELECT siox_my_uid()))'],
    ['activities', 'proc_id IN %1$s OR aid IN %2$s'],
    ['activity_text_attrs', '(aid >> 32)::integer IN %1$s OR aid IN %2$s'],
    ['remote_calls', '(aid >> 32)::integer IN %1$s OR aid IN %2$s'],
    ['causal_links', '(parent_aid >> 32)::integer IN %1$s OR child_aid IN %2$s'],
    ['client_stats', 'proc_id IN %1$s'],
    ['descriptor_mappings', 'proc_id IN %1$s'],
    ['process_nodes', 'proc_id IN %1$s'],
    ['process_types', 'proc_id IN %1$s'],
    ['process_targets', 'proc_id IN %1$s'],
    -- process-scope descriptors only: global ones hold every user's paths
    ['descriptors', 'scope_key IN (SELECT p.proc_id::text FROM processes p WHERE p.uid = (SELECT siox_my_uid()))'],
    ['siox_activity_grants', 'uid = (SELECT siox_my_uid())'],
    -- knowledge base: per-job and per-application rows
    ['kb_findings', 'siox_job_is_mine(job)'],
    ['kb_analysis_runs', 'siox_job_is_mine(job)'],
    ['kb_apps', 'exe IN (SELECT p.exe FROM processes p WHERE p.uid = (SELECT siox_my_uid()))'],
    ['kb_hint_sets', 'app_id IN (SELECT a.app_id FROM kb_apps a)'],
    -- node and host loads are component aggregates; a job's is its owner's
    ['kb_capacity', 'kind <> ''job'' OR siox_job_is_mine(key)']];
BEGIN
  FOR i IN 1 .. array_length(rules, 1) LOOP
    t := rules[i][1];
    reader_rule := format(rules[i][2], own_proc, granted);
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY siox_all ON %I TO siox_writer, siox_admin USING (true) WITH CHECK (true)', t);
    EXECUTE format('CREATE POLICY siox_own ON %I FOR SELECT TO siox_reader USING (%s)', t, reader_rule);
  END LOOP;
END $$;

-- A view reads its tables with its owner's rights, past row-level security,
-- unless it is security_invoker (PostgreSQL 15). On older servers readers
-- lose the two views that expose activities; they keep the tables.
DO $$
BEGIN
  IF current_setting('server_version_num')::integer >= 150000 THEN
    ALTER VIEW causal_edges SET (security_invoker = true);
    ALTER VIEW activity_attributes SET (security_invoker = true);
  ELSE
    REVOKE SELECT ON causal_edges, activity_attributes FROM siox_reader;
  END IF;
END $$;
