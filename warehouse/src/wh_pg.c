/* The library's libpq helpers (wh_pg.h). */
#include "wh_pg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int siox_wh_failed(PGresult *res, PGconn *c, const char *what, char *err, size_t errlen) {
  const char *m = res ? PQresultErrorMessage(res) : "";
  const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
  if (!m || !*m) m = PQerrorMessage(c);
  /* 42501 insufficient_privilege: e.g. `siox hints --analyze` by a user */
  snprintf(err, errlen, "%s%s: %s", state && strcmp(state, "42501") == 0 ? "permission denied: " : "", what, m);
  err[strcspn(err, "\n")] = '\0';
  PQclear(res);
  return -EIO;
}

int64_t siox_wh_i64(const PGresult *res, int r, int col) {
  return PQgetisnull(res, r, col) ? 0 : strtoll(PQgetvalue(res, r, col), NULL, 10);
}

int64_t siox_wh_bin_i64(const PGresult *res, int r, int col) {
  const unsigned char *p = (const unsigned char *)PQgetvalue(res, r, col);
  int len = PQgetisnull(res, r, col) ? 0 : PQgetlength(res, r, col);
  uint64_t v = len > 0 && (p[0] & 0x80) ? UINT64_MAX : 0; /* the sign, extended */
  for (int i = 0; i < len && i < 8; i++) v = v << 8 | p[i];
  return (int64_t)v;
}

double siox_wh_f64(const PGresult *res, int r, int col) {
  return PQgetisnull(res, r, col) ? 0 : strtod(PQgetvalue(res, r, col), NULL);
}

PGresult *siox_wh_query(PGconn *c, const char *what, const char *sql, int n, const char *const *params, char *err,
                        size_t errlen) {
  PGresult *r = PQexecParams(c, sql, n, NULL, params, NULL, NULL, 0);
  ExecStatusType st = PQresultStatus(r);
  if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) return r;
  siox_wh_failed(r, c, what, err, errlen);
  return NULL;
}

int siox_wh_exec(PGconn *c, const char *what, const char *sql, char *err, size_t errlen) {
  PGresult *r = PQexec(c, sql);
  ExecStatusType st = PQresultStatus(r);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) return siox_wh_failed(r, c, what, err, errlen);
  PQclear(r);
  return 0;
}
