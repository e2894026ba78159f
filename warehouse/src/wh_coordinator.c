/*
 * The coordinator database: one place to query N shards (issue 15 §2).
 * Schema public there is rebuilt from the shards on every build, in one
 * transaction: per warehouse table a parent partitioned by LIST (shard)
 * whose partitions are postgres_fdw foreign tables on each shard's
 * siox_shard view of that table (schema 023), so each partition's bound is
 * true by construction and the coordinator needs no DDL of its own that
 * could drift from the shards'. Design and pushdown: warehouse/README.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "siox/siox_wh.h"
#include "wh_pg.h"

#define COORD_LOCK "SELECT pg_advisory_xact_lock(5105291)"

struct shard {
  PGconn *c;
  int k;
  char where[512]; /* conninfo without the password, for messages */
};

struct build {
  PGconn *coord;
  struct shard *s;
  int n;
  void (*log)(void *, const char *);
  void *ctx;
  char *err;
  size_t errlen;
};

static void say(struct build *b, const char *fmt, int k, const char *where) {
  if (!b->log) return;
  char line[768];
  snprintf(line, sizeof line, fmt, k, where);
  b->log(b->ctx, line);
}

/* Where a conninfo points, never its password. */
static void describe(const char *ci, char *out, size_t cap) {
  static const char *const shown[] = {"host", "hostaddr", "port", "dbname", NULL};
  PQconninfoOption *o = PQconninfoParse(ci, NULL);
  size_t off = 0;
  out[0] = '\0';
  for (int i = 0; shown[i]; i++)
    for (PQconninfoOption *p = o; p && p->keyword; p++)
      if (p->val && *p->val && strcmp(p->keyword, shown[i]) == 0 && off < cap)
        off += (size_t)snprintf(out + off, cap - off, "%s%s=%s", off ? " " : "", p->keyword, p->val);
  if (!o) snprintf(out, cap, "(unparsable conninfo)");
  PQconninfoFree(o);
}

static int exec(struct build *b, const char *what, const char *sql) {
  return siox_wh_exec(b->coord, what, sql, b->err, b->errlen);
}

/* The shards' notices (schema_version exists, drops cascading) are not
 * the caller's business: errors say what failed. */
static void quiet(void *arg, const char *msg) {
  (void)arg;
  (void)msg;
}

/* Connects, migrates and reads the shard number of shard #i. */
static int open_shard(struct build *b, int i, const char *ci) {
  struct shard *s = &b->s[i];
  describe(ci, s->where, sizeof s->where);
  const char *const keys[] = {"connect_timeout", "fallback_application_name", "dbname", NULL};
  const char *const vals[] = {"10", "siox-coordinator", ci, NULL};
  s->c = PQconnectdbParams(keys, vals, 1);
  if (PQstatus(s->c) != CONNECTION_OK) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", PQerrorMessage(s->c));
    msg[strcspn(msg, "\n")] = '\0';
    snprintf(b->err, b->errlen, "shard at %s: cannot connect: %s", s->where, msg);
    return -ECONNREFUSED;
  }
  PQsetNoticeProcessor(s->c, quiet, NULL);
  char e[900];
  if (siox_wh_migrate(s->c, NULL, NULL, e, sizeof e) != 0) {
    snprintf(b->err, b->errlen, "shard at %s: schema: %s", s->where, e);
    return -EIO;
  }
  PGresult *r = siox_wh_query(s->c, "reading shard_config", "SELECT shard, nshards FROM shard_config", 0, NULL, e, sizeof e);
  if (!r) return snprintf(b->err, b->errlen, "shard at %s: %s", s->where, e), -EIO;
  if (PQntuples(r) != 1) {
    PQclear(r);
    snprintf(b->err, b->errlen, "%s is no shard: start its siox-server with --shard K/N first", s->where);
    return -EINVAL;
  }
  s->k = (int)siox_wh_i64(r, 0, 0);
  int n = (int)siox_wh_i64(r, 0, 1);
  PQclear(r);
  for (int j = 0; j < i; j++)
    if (b->s[j].k == s->k) {
      snprintf(b->err, b->errlen, "%s and %s are both shard %d", b->s[j].where, s->where, s->k);
      return -EINVAL;
    }
  /* Again, now that this build holds the shard's schema: its views follow
   * the newest migration. */
  if (siox_wh_shard_setup(s->c, s->k, n, e, sizeof e) != 0) {
    snprintf(b->err, b->errlen, "shard %d at %s: %s", s->k, s->where, e);
    return -EIO;
  }
  say(b, "shard %d at %s: migrated", s->k, s->where);
  return 0;
}

/* Appends " key 'value'" (comma-separated) to buf. */
static int add_option(struct build *b, char *buf, size_t cap, const char *key, const char *val) {
  char *lit = PQescapeLiteral(b->coord, val, strlen(val));
  if (!lit) return -ENOMEM;
  size_t off = strlen(buf);
  int w = snprintf(buf + off, cap - off, "%s%s %s", off ? ", " : "", key, lit);
  PQfreemem(lit);
  return w < 0 || (size_t)w >= cap - off ? -E2BIG : 0;
}

/* The foreign server and user mapping of shard s from its conninfo: user
 * and password go to the mapping, what postgres_fdw sets itself is left
 * out, the rest (host, port, dbname, ssl...) to the server. */
static int make_server(struct build *b, const struct shard *s, const char *ci) {
  char srv[4096] = "", map[1024] = "", sql[6144];
  PQconninfoOption *o = PQconninfoParse(ci, NULL);
  int rc = o ? 0 : -EINVAL, has_user = 0, has_options = 0;
  for (PQconninfoOption *p = o; rc == 0 && p && p->keyword; p++) {
    if (!p->val || !*p->val || !strcmp(p->keyword, "client_encoding") ||
        !strcmp(p->keyword, "fallback_application_name"))
      continue;
    if (!strcmp(p->keyword, "user") || !strcmp(p->keyword, "password")) {
      has_user |= !strcmp(p->keyword, "user");
      rc = add_option(b, map, sizeof map, p->keyword, p->val);
    } else {
      has_options |= !strcmp(p->keyword, "options");
      rc = add_option(b, srv, sizeof srv, p->keyword, p->val);
    }
  }
  PQconninfoFree(o);
  /* Remote estimates: the shards' own statistics plan the pushed-down
   * scans; fetch_size: fewer round trips for the large scans;
   * async_capable: an Append over the shards' foreign scans starts them
   * all at once instead of one after the other (`siox top` waits for the
   * slowest shard, not their sum); jit off for the coordinator's sessions
   * on the shards: its queries are short scans and top-N sorts, where
   * compiling cost more than it saved (0.3 s of a shard's 1.7 s top at 3.3M
   * activities), unless the conninfo sets its own options. */
  if (rc == 0) rc = add_option(b, srv, sizeof srv, "use_remote_estimate", "true");
  if (rc == 0) rc = add_option(b, srv, sizeof srv, "fetch_size", "10000");
  if (rc == 0) rc = add_option(b, srv, sizeof srv, "async_capable", "true");
  if (rc == 0 && !has_options) rc = add_option(b, srv, sizeof srv, "options", "-c jit=off");
  if (rc == 0 && !has_user) rc = add_option(b, map, sizeof map, "user", "postgres");
  if (rc != 0) return snprintf(b->err, b->errlen, "shard %d at %s: conninfo: %s", s->k, s->where, strerror(-rc)), rc;
  snprintf(sql, sizeof sql,
           "CREATE SERVER siox_shard_%d FOREIGN DATA WRAPPER postgres_fdw OPTIONS (%s);"
           "CREATE USER MAPPING FOR PUBLIC SERVER siox_shard_%d OPTIONS (%s);"
           "CREATE SCHEMA siox_shard_%d;"
           "IMPORT FOREIGN SCHEMA siox_shard FROM SERVER siox_shard_%d INTO siox_shard_%d",
           s->k, srv, s->k, map, s->k, s->k, s->k);
  return exec(b, "creating the shard's foreign tables", sql);
}

/* Drops what an earlier build made: the servers (with their mappings and
 * foreign tables) and the parents in public. */
static const char drop_old[] =
    "CREATE SCHEMA IF NOT EXISTS siox_fdw;"
    "CREATE EXTENSION IF NOT EXISTS postgres_fdw SCHEMA siox_fdw;"
    "DO $$ DECLARE s text; BEGIN"
    "  FOR s IN SELECT srvname FROM pg_foreign_server WHERE srvname LIKE 'siox\\_shard\\_%' LOOP"
    "    EXECUTE format('DROP SERVER %I CASCADE', s);"
    "    EXECUTE format('DROP SCHEMA IF EXISTS %I CASCADE', s);"
    "  END LOOP;"
    "END $$;"
    "DROP SCHEMA IF EXISTS public CASCADE;"
    "CREATE SCHEMA public;";

/* Parents from the first shard's tables; the ontology (the same rows on
 * every shard) is a local copy instead, and job_aggregates (the stored
 * documents of job views, schema 026) a local table of the coordinator's
 * own: the documents of views made through it, computed from every shard
 * and checked against the site's stamp on each view (wh_job_cache.c). As
 * a partitioned foreign table it took no INSERT .. ON CONFLICT, so every
 * job view through the coordinator was computed again and logged an error. */
static int make_parents(struct build *b) {
  char ks[1024] = "", sql[4096];
  for (int i = 0; i < b->n; i++)
    snprintf(ks + strlen(ks), sizeof ks - strlen(ks), "%s%d", i ? "," : "", b->s[i].k);
  snprintf(sql, sizeof sql,
           "DO $$ DECLARE t text; k int; f text := 'siox_shard_%d'; BEGIN"
           "  FOR t IN SELECT foreign_table_name FROM information_schema.foreign_tables"
           "            WHERE foreign_table_schema = f ORDER BY 1 LOOP"
           "    IF t = 'ontology' THEN"
           "      EXECUTE format('CREATE TABLE public.%%I AS SELECT * FROM %%I.%%I', t, f, t);"
           "      EXECUTE format('ALTER TABLE public.%%I DROP COLUMN shard', t);"
           "    ELSIF t = 'job_aggregates' THEN"
           "      EXECUTE format('CREATE TABLE public.%%I (LIKE %%I.%%I)', t, f, t);"
           "      EXECUTE format('ALTER TABLE public.%%I DROP COLUMN shard, ADD PRIMARY KEY (uid, job, kind, bins),"
           "                      ALTER updated_at SET DEFAULT now()', t);"
           "    ELSE"
           "      EXECUTE format('CREATE TABLE public.%%I (LIKE %%I.%%I) PARTITION BY LIST (shard)', t, f, t);"
           "      FOREACH k IN ARRAY ARRAY[%s] LOOP"
           "        EXECUTE format('ALTER TABLE public.%%I ATTACH PARTITION %%I.%%I FOR VALUES IN (%%s)', t,"
           "                       'siox_shard_' || k, t, k);"
           "      END LOOP;"
           "    END IF;"
           "  END LOOP;"
           "  EXECUTE format('ALTER DATABASE %%I SET enable_partitionwise_aggregate = on', current_database());"
           "  EXECUTE format('ALTER DATABASE %%I SET enable_partitionwise_join = on', current_database());"
           "  EXECUTE format('ALTER DATABASE %%I SET jit = off', current_database());"
           "END $$;"
           "CREATE TABLE public.site_shards (shard integer PRIMARY KEY, location text NOT NULL,"
           "                                 built timestamptz NOT NULL DEFAULT now());",
           b->s[0].k, ks);
  int rc = exec(b, "creating the partitioned tables", sql);
  for (int i = 0; rc == 0 && i < b->n; i++) {
    char k[16];
    snprintf(k, sizeof k, "%d", b->s[i].k);
    const char *p[] = {k, b->s[i].where};
    PGresult *r = siox_wh_query(b->coord, "recording the shards", "INSERT INTO site_shards (shard, location) VALUES ($1, $2)",
                                2, p, b->err, b->errlen);
    rc = r ? 0 : -EIO;
    PQclear(r);
  }
  return rc;
}

/* The warehouse's views (causal_edges, activity_attributes, ...), as the
 * first shard defines them, over the parents. */
static int make_views(struct build *b) {
  char e[512];
  PGresult *v = siox_wh_query(b->s[0].c, "reading the shard's views",
                              "SELECT viewname, definition FROM pg_views WHERE schemaname = 'public' ORDER BY 1", 0, NULL,
                              e, sizeof e);
  if (!v) return snprintf(b->err, b->errlen, "shard %d: %s", b->s[0].k, e), -EIO;
  int rc = 0;
  for (int i = 0; rc == 0 && i < PQntuples(v); i++) {
    const char *name = PQgetvalue(v, i, 0), *def = PQgetvalue(v, i, 1);
    char *id = PQescapeIdentifier(b->coord, name, strlen(name));
    size_t cap = strlen(def) + 256;
    char *sql = malloc(cap);
    if (id && sql) {
      snprintf(sql, cap, "CREATE VIEW public.%s AS %s", id, def);
      rc = exec(b, "creating a view", sql);
    } else
      rc = -ENOMEM;
    free(sql);
    PQfreemem(id);
  }
  PQclear(v);
  return rc;
}

/* The warehouse's functions, as the first shard defines them: the SQL the
 * front ends and the knowledge base run names them (schema 032's reads,
 * the kb_hist_* helpers), so the coordinator answers with them too. Not
 * the shard's own (siox_shard_setup, the triggers: nothing is written
 * here) nor an extension's. Bodies are checked when called, not now: one
 * function may name another not created yet. */
static int make_functions(struct build *b) {
  char e[512];
  PGresult *f = siox_wh_query(
      b->s[0].c, "reading the shard's functions",
      "SELECT pg_get_functiondef(p.oid) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
      " JOIN pg_language l ON l.oid = p.prolang"
      " WHERE n.nspname = 'public' AND p.prokind = 'f' AND l.lanname IN ('sql', 'plpgsql')"
      "   AND p.prorettype <> 'trigger'::regtype AND p.proname <> 'siox_shard_setup'"
      "   AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')"
      " ORDER BY p.proname",
      0, NULL, e, sizeof e);
  if (!f) return snprintf(b->err, b->errlen, "shard %d: %s", b->s[0].k, e), -EIO;
  int rc = exec(b, "deferring function checks", "SET LOCAL check_function_bodies = off");
  for (int i = 0; rc == 0 && i < PQntuples(f); i++) rc = exec(b, "creating a function", PQgetvalue(f, i, 0));
  PQclear(f);
  return rc;
}

static int build_locked(struct build *b, const char *const *conninfo) {
  int rc = exec(b, "taking the coordinator lock", COORD_LOCK ";SET LOCAL client_min_messages = warning");
  if (rc == 0) rc = exec(b, "dropping the previous build", drop_old);
  for (int i = 0; rc == 0 && i < b->n; i++) rc = make_server(b, &b->s[i], conninfo[i]);
  if (rc == 0) rc = make_parents(b);
  if (rc == 0) rc = make_views(b);
  if (rc == 0) rc = make_functions(b);
  return rc;
}

int siox_wh_coordinator_build(PGconn *coord, const char *const *conninfo, int n, void (*log)(void *, const char *),
                              void *ctx, char *err, size_t errlen) {
  if (n < 1 || n > SIOX_WH_SHARDS_MAX) return snprintf(err, errlen, "need 1 to %d shards", SIOX_WH_SHARDS_MAX), -EINVAL;
  struct build b = {coord, calloc((size_t)n, sizeof(struct shard)), n, log, ctx, err, errlen};
  if (!b.s) return -ENOMEM;
  int rc = 0;
  /* One shard after the other: each migration under that shard's lock. */
  for (int i = 0; rc == 0 && i < n; i++) rc = open_shard(&b, i, conninfo[i]);
  if (rc == 0 && (rc = exec(&b, "BEGIN", "BEGIN")) == 0) {
    rc = build_locked(&b, conninfo);
    if (rc == 0) rc = exec(&b, "COMMIT", "COMMIT");
    if (rc != 0) PQclear(PQexec(coord, "ROLLBACK"));
  }
  if (rc == 0 && log) {
    char line[64];
    snprintf(line, sizeof line, "coordinator: %d shards", n);
    log(ctx, line);
  }
  for (int i = 0; i < n; i++) PQfinish(b.s[i].c);
  free(b.s);
  return rc;
}
