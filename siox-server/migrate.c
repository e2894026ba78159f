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
#include "server.h"

#define MIGRATE_LOCK "SELECT pg_advisory_lock(5105290)"
#define MIGRATE_UNLOCK "SELECT pg_advisory_unlock(5105290)"

static int applied(PGconn *c, int version, int *yes) {
  char v[16];
  snprintf(v, sizeof v, "%d", version);
  const char *p[] = {v};
  PGresult *r = siox_db_query(c, "SELECT 1 FROM schema_version WHERE version = $1", 1, p);
  if (!r) return -EIO;
  *yes = PQntuples(r) > 0;
  PQclear(r);
  return 0;
}

static int apply(PGconn *c, const struct siox_schema_file *f) {
  char v[16];
  snprintf(v, sizeof v, "%d", f->version);
  const char *p[] = {v, f->name};
  if (siox_db_exec(c, "BEGIN") != 0) return -EIO;
  PGresult *r = NULL;
  if (siox_db_exec(c, f->sql) == 0)
    r = siox_db_query(c, "INSERT INTO schema_version (version, name) VALUES ($1, $2)", 2, p);
  if (!r || siox_db_exec(c, "COMMIT") != 0) {
    PQclear(r);
    siox_db_exec(c, "ROLLBACK");
    return siox_log("schema %s failed; nothing of it was applied", f->name), -EIO;
  }
  PQclear(r);
  siox_log("schema %s applied", f->name);
  return 0;
}

static int migrate_locked(PGconn *c) {
  for (size_t i = 0; i < siox_schema_nfiles; i++) {
    int yes, rc = applied(c, siox_schema_files[i].version, &yes);
    if (rc == 0 && !yes) rc = apply(c, &siox_schema_files[i]);
    if (rc != 0) return rc;
  }
  if (siox_db_exec(c, "BEGIN") != 0) return -EIO;
  if (siox_db_exec(c, siox_ontology_sql) != 0 || siox_db_exec(c, "COMMIT") != 0) {
    siox_db_exec(c, "ROLLBACK");
    return -EIO;
  }
  return 0;
}

int siox_migrate(PGconn *c) {
  if (siox_db_exec(c, "CREATE TABLE IF NOT EXISTS schema_version ("
                      " version integer PRIMARY KEY, name text NOT NULL,"
                      " applied_at timestamptz NOT NULL DEFAULT now())") != 0 ||
      siox_db_exec(c, MIGRATE_LOCK) != 0)
    return -EIO;
  int rc = migrate_locked(c);
  siox_db_exec(c, MIGRATE_UNLOCK);
  return rc;
}
