-- Knowledge base, schema version 6: applications, findings and hint sets.
-- (Migrations of the knowledge base share the warehouse's version sequence;
-- siox-server embeds and applies them.)

-- An application: executable + a stable hash of its command line
-- (siox_kb_args_hash of processes.args).
CREATE TABLE kb_apps (
  app_id    serial PRIMARY KEY,
  exe       text NOT NULL,
  args_hash bigint NOT NULL,
  args      text NOT NULL DEFAULT '',   -- one example, for display
  UNIQUE (exe, args_hash)
);

-- A hint set for an application and a file pattern (siox_kb_file_pattern),
-- meant for one MPI-IO component. hints: JSON object key -> string value;
-- rationale: JSON object key -> why this value (the data it came from).
-- The newest row that is not superseded is the one served.
CREATE TABLE kb_hint_sets (
  hint_set_id     bigserial PRIMARY KEY,
  app_id          integer NOT NULL REFERENCES kb_apps,
  file_pattern    text NOT NULL,
  component       text NOT NULL,
  hints           jsonb NOT NULL,
  rationale       jsonb NOT NULL DEFAULT '{}',
  expected_gain_s double precision NOT NULL DEFAULT 0,
  source_job      text NOT NULL DEFAULT '',
  superseded      boolean NOT NULL DEFAULT false,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX kb_hint_sets_lookup ON kb_hint_sets (app_id, file_pattern, component) WHERE NOT superseded;
