/*
 * Incremental folds: the watermark bookkeeping shared by the baselines and
 * the capacity aggregates. Each fold is one transaction that reads the
 * activities which ended since the last fold and settled (see 008_*.sql),
 * adds them to the aggregate and moves the watermark.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baselines_fold.h"

int kb_pq_fail(PGresult *r, const char *what, char *err, size_t errcap) {
  if (err && errcap) {
    snprintf(err, errcap, "%s: %s", what, r ? PQresultErrorMessage(r) : "out of memory");
    err[strcspn(err, "\n")] = '\0';
  }
  return -1;
}

static int exec_plain(PGconn *c, const char *sql, char *err, size_t errcap) {
  PGresult *r = PQexec(c, sql);
  int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  if (!ok) kb_pq_fail(r, sql, err, errcap);
  PQclear(r);
  return ok ? 0 : -1;
}

int kb_fold_step(PGconn *c, const char *sql, char *err, size_t errcap) {
  PGresult *r = PQexec(c, sql);
  int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
  if (!ok) kb_pq_fail(r, "folding activities", err, errcap);
  PQclear(r);
  return ok ? 0 : -1;
}

long kb_fold_rows(PGconn *c, const char *sql, char *err, size_t errcap) {
  PGresult *r = PQexec(c, sql);
  long n = PQresultStatus(r) == PGRES_TUPLES_OK ? PQntuples(r) : kb_pq_fail(r, "folding activities", err, errcap);
  PQclear(r);
  return n;
}

void kb_fold_abort(PGconn *c) {
  PGresult *r = PQexec(c, "ROLLBACK");
  PQclear(r);
}

/* Settled end: now on the server's clock (activity times are on it too)
 * minus the settle time, so that rows still in flight are left for later. */
static const char window_sql[] =
    "SELECT watermark_ns, (extract(epoch FROM clock_timestamp()) * 1e9)::bigint"
    "       - greatest(settle_ns, $2::bigint),"
    "       lookback_ns"
    "  FROM kb_fold_state WHERE name = $1 FOR UPDATE";

int kb_fold_begin(PGconn *c, const char *name, int64_t settle_ns, struct kb_fold_window *w, char *err, size_t errcap) {
  if (exec_plain(c, "BEGIN", err, errcap) < 0) return -1;
  char settle[24];
  snprintf(settle, sizeof settle, "%" PRId64, settle_ns);
  const char *params[2] = {name, settle};
  PGresult *r = PQexecParams(c, window_sql, 2, NULL, params, NULL, NULL, 0);
  if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
    if (PQresultStatus(r) == PGRES_TUPLES_OK && err && errcap)
      snprintf(err, errcap, "kb_fold_state has no row '%s' (schema older than 009?)", name);
    else
      kb_pq_fail(r, "reading kb_fold_state", err, errcap);
    PQclear(r);
    kb_fold_abort(c);
    return -1;
  }
  w->lo_ns = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
  w->hi_ns = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
  w->from_ns = w->lo_ns - strtoll(PQgetvalue(r, 0, 2), NULL, 10);
  PQclear(r);
  if (w->hi_ns > w->lo_ns) return 1;
  return exec_plain(c, "COMMIT", err, errcap) < 0 ? -1 : 0;
}

long kb_fold_exec(PGconn *c, const char *sql, const struct kb_fold_window *w, char *err, size_t errcap) {
  char p[3][24];
  snprintf(p[0], sizeof p[0], "%" PRId64, w->from_ns);
  snprintf(p[1], sizeof p[1], "%" PRId64, w->lo_ns);
  snprintf(p[2], sizeof p[2], "%" PRId64, w->hi_ns);
  const char *params[3] = {p[0], p[1], p[2]};
  PGresult *r = PQexecParams(c, sql, 3, NULL, params, NULL, NULL, 0);
  ExecStatusType st = PQresultStatus(r);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    kb_pq_fail(r, "folding activities", err, errcap);
    PQclear(r);
    return -1;
  }
  long n = st == PGRES_TUPLES_OK ? PQntuples(r) : strtol(PQcmdTuples(r), NULL, 10);
  PQclear(r);
  return n;
}

int kb_fold_commit(PGconn *c, const char *name, const struct kb_fold_window *w, long folded, char *err,
                   size_t errcap) {
  char hi[24], n[24];
  snprintf(hi, sizeof hi, "%" PRId64, w->hi_ns);
  snprintf(n, sizeof n, "%ld", folded);
  const char *params[3] = {name, hi, n};
  PGresult *r = PQexecParams(c,
                             "UPDATE kb_fold_state SET watermark_ns = $2::bigint, folded = folded + $3::bigint,"
                             " updated_at = now() WHERE name = $1",
                             3, NULL, params, NULL, NULL, 0);
  int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  if (!ok) kb_pq_fail(r, "moving the fold watermark", err, errcap);
  PQclear(r);
  if (!ok || exec_plain(c, "COMMIT", err, errcap) < 0) {
    kb_fold_abort(c);
    return -1;
  }
  return 0;
}
