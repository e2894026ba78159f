/*
 * Warehouse schema versioning, run once at server start before any batch is
 * accepted: each embedded schema/NNN_*.sql newer than the table
 * schema_version is applied in its own transaction, then the generated
 * ontology rows are (re)loaded. An advisory lock serialises servers that
 * start together on one database.
 */
#include <errno.h>
#include <stdio.h>

#include "schema_sql.h"
#include "siox/siox_wh.h"
#include "wh_pg.h"


struct migration {
  PGconn *c;
  siox_wh_log_fn log;
  void *ctx;
  char *err;
  size_t errlen;
};

/* PQexec, not PQexecParams: a schema file is many statements. */
static int exec(struct migration *m, const char *what, const char *sql) {
  return siox_wh_exec(m->c, what, sql, m->err, m->errlen);
}

static int applied(struct migration *m, int version, int *yes) {
  char v[16];
  snprintf(v, sizeof v, "%d", version);
  const char *p[] = {v};
  PGresult *r = siox_wh_query(m->c, "reading schema_version", "SELECT 1 FROM schema_version WHERE version = $1", 1, p,
                              m->err, m->errlen);
  if (!r) return -EIO;
  *yes = PQntuples(r) > 0;
  PQclear(r);
  return 0;
}

static int apply(struct migration *m, const struct siox_schema_file *f) {
  char v[16];
  snprintf(v, sizeof v, "%d", f->version);
  const char *p[] = {v, f->name};
  if (exec(m, "BEGIN", "BEGIN") != 0) return -EIO;
  PGresult *r = NULL;
  if (exec(m, f->name, f->sql) == 0)
    r = siox_wh_query(m->c, "recording the schema version", "INSERT INTO schema_version (version, name) VALUES ($1, $2)",
                      2, p, m->err, m->errlen);
  if (!r || exec(m, "COMMIT", "COMMIT") != 0) {
    PQclear(r);
    PQclear(PQexec(m->c, "ROLLBACK"));
    if (m->log) m->log(m->ctx, m->err);
    if (m->log) m->log(m->ctx, "nothing of it was applied");
    return -EIO;
  }
  PQclear(r);
  if (m->log) {
    char msg[256];
    snprintf(msg, sizeof msg, "schema %s applied", f->name);
    m->log(m->ctx, msg);
  }
  return 0;
}

static int migrate_locked(struct migration *m) {
  for (size_t i = 0; i < siox_schema_nfiles; i++) {
    int yes, rc = applied(m, siox_schema_files[i].version, &yes);
    if (rc == 0 && !yes) rc = apply(m, &siox_schema_files[i]);
    if (rc != 0) return rc;
  }
  if (exec(m, "BEGIN", "BEGIN") != 0) return -EIO;
  if (exec(m, "loading the ontology", siox_ontology_sql) != 0 || exec(m, "COMMIT", "COMMIT") != 0) {
    PQclear(PQexec(m->c, "ROLLBACK"));
    return -EIO;
  }
  return 0;
}

int siox_wh_migrate(PGconn *c, siox_wh_log_fn log, void *ctx, char *err, size_t errlen) {
  struct migration m = {c, log, ctx, err, errlen};
  if (exec(&m, "creating schema_version",
           "CREATE TABLE IF NOT EXISTS schema_version ("
           " version integer PRIMARY KEY, name text NOT NULL,"
           " applied_at timestamptz NOT NULL DEFAULT now())") != 0 ||
      exec(&m, "taking the migration lock", SIOX_WH_MIGRATE_LOCK) != 0)
    return -EIO;
  int rc = migrate_locked(&m);
  PQclear(PQexec(c, SIOX_WH_MIGRATE_UNLOCK));
  return rc;
}
