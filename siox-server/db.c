/*
 * Thin libpq helpers used by every warehouse-facing file of siox-server:
 * run a statement, run a parameterised (or prepared) query, stream one
 * COPY. Errors are logged here once, with PostgreSQL's own message, and
 * returned as -EIO.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server.h"

void siox_log(const char *fmt, ...) {
  struct timespec ts;
  struct tm tm;
  char stamp[32];
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  /* One fprintf per line, so lines from the two threads do not interleave. */
  fprintf(stderr, "%s.%03ldZ siox-server: %s\n", stamp, ts.tv_nsec / 1000000, line);
}

static void log_pg(const char *what, PGconn *c, PGresult *r) {
  const char *msg = r ? PQresultErrorMessage(r) : PQerrorMessage(c);
  size_t n = strlen(msg);
  while (n && msg[n - 1] == '\n') n--;
  siox_log("database: %s: %.*s", what, (int)n, msg);
}

int siox_db_exec(PGconn *c, const char *sql) {
  PGresult *r = PQexec(c, sql);
  ExecStatusType st = PQresultStatus(r);
  int ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
  if (!ok) log_pg(sql, c, r);
  PQclear(r);
  return ok ? 0 : -EIO;
}

PGresult *siox_db_query(PGconn *c, const char *sql, int n, const char *const *params) {
  PGresult *r = PQexecParams(c, sql, n, NULL, params, NULL, NULL, 0);
  ExecStatusType st = PQresultStatus(r);
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return r;
  log_pg(sql, c, r);
  PQclear(r);
  return NULL;
}

int siox_db_copy(PGconn *c, const char *sql, const uint8_t *data, size_t len) {
  PGresult *r = PQexec(c, sql);
  if (PQresultStatus(r) != PGRES_COPY_IN) {
    log_pg(sql, c, r);
    PQclear(r);
    return -EIO;
  }
  PQclear(r);
  int ok = 1;
  /* libpq buffers what we hand it; 1 MiB pieces keep its buffer small. */
  for (size_t off = 0; ok && off < len; off += 1 << 20) {
    size_t n = len - off < (1u << 20) ? len - off : (1u << 20);
    ok = PQputCopyData(c, (const char *)data + off, (int)n) == 1;
  }
  ok = PQputCopyEnd(c, ok ? NULL : "siox-server: send failed") == 1 && ok;
  int dup = 0;
  while ((r = PQgetResult(c))) {
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
      const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
      dup = state && strcmp(state, "23505") == 0;
      if (!dup) log_pg(sql, c, r);
      ok = 0;
    }
    PQclear(r);
  }
  return ok ? 0 : dup ? -EEXIST : -EIO;
}

PGconn *siox_db_connect(const char *conninfo, int wait_ms) {
  for (int waited = 0;; waited += 100) {
    PGconn *c = PQconnectdb(conninfo);
    if (PQstatus(c) == CONNECTION_OK) {
      PQclear(PQexec(c, "SET client_min_messages = warning"));
      return c;
    }
    if (waited >= wait_ms) {
      log_pg("connect", c, NULL);
      PQfinish(c);
      return NULL;
    }
    PQfinish(c);
    usleep(100 * 1000);
  }
}

char *siox_int_array(const void *v, size_t n, size_t stride) {
  char *s = malloc(n * 21 + 3), *p = s;
  if (!s) return NULL;
  *p++ = '{';
  for (size_t i = 0; i < n; i++) p += sprintf(p, i ? ",%lld" : "%lld", (long long)*(const int64_t *)((const char *)v + i * stride));
  strcpy(p, "}");
  return s;
}
