/*
 * Reading one kind of activity in a time window (siox_wh.h, "Blame
 * latency"): by the (type_id, start_ns) index, never by activities_start.
 *
 * Why the planner needs telling: activities_start follows the heap's order
 * (rows arrive in time order), so the planner costs a plain index scan of a
 * time window on it as cheap and filters the type afterwards, reading every
 * node's activities in the window (a brick's 4 s around a call: 26k rows,
 * 25k buffers, for 6.7k of its own). (type_id, start_ns) does not follow
 * the heap, so a plain index scan on it is costed as random reads; as a
 * bitmap scan (its rows sorted by page) it reads the few pages the type's
 * rows sit on (190 buffers). With plain index scans off for the one
 * statement, the planner takes the bitmap. A row comparison does not help
 * here: PostgreSQL uses only one of its bounds to stop the scan.
 */
#include "siox/siox_wh.h"

/* The plain way: three round trips. */
static PGresult *exec_window_plain(PGconn *c, const char *sql, int nparams, const char *const *params, int format) {
  PQclear(PQexec(c, "SET enable_indexscan = off"));
  PGresult *res = PQexecParams(c, sql, nparams, NULL, params, NULL, NULL, format);
  PQclear(PQexec(c, "RESET enable_indexscan"));
  return res;
}

/* The statement's one result (NULL when none came), draining the rest. */
static PGresult *one_result(PGconn *c) {
  PGresult *keep = NULL, *r;
  while ((r = PQgetResult(c)) != NULL) {
    if (!keep) keep = r;
    else PQclear(r);
  }
  return keep;
}

/* SET, the statement and RESET sent at once in libpq's pipeline mode: one
 * round trip instead of three (blame makes five such reads; each round
 * trip is a scheduling delay on a loaded host). They run as one implicit
 * transaction up to the sync, so when the statement fails, the SET is
 * rolled back with it and the RESET (aborted) is not needed. */
static PGresult *exec_window(PGconn *c, const char *sql, int nparams, const char *const *params, int format) {
  if (PQpipelineStatus(c) != PQ_PIPELINE_OFF || PQenterPipelineMode(c) != 1)
    return exec_window_plain(c, sql, nparams, params, format);
  int sent = PQsendQueryParams(c, "SET enable_indexscan = off", 0, NULL, NULL, NULL, NULL, 0) &&
             PQsendQueryParams(c, sql, nparams, NULL, params, NULL, NULL, format) &&
             PQsendQueryParams(c, "RESET enable_indexscan", 0, NULL, NULL, NULL, NULL, 0) && PQpipelineSync(c);
  PGresult *res = NULL, *r;
  if (sent) {
    PQclear(one_result(c)); /* SET */
    res = one_result(c);    /* the statement */
    PQclear(one_result(c)); /* RESET */
    while ((r = PQgetResult(c)) != NULL && PQresultStatus(r) != PGRES_PIPELINE_SYNC) PQclear(r);
    PQclear(r);
  }
  PQexitPipelineMode(c);
  if (!sent && !res) res = PQmakeEmptyPGresult(c, PGRES_FATAL_ERROR); /* PQerrorMessage says why */
  return res;
}

PGresult *siox_wh_exec_window(PGconn *c, const char *sql, int nparams, const char *const *params) {
  return exec_window(c, sql, nparams, params, 0);
}

PGresult *siox_wh_exec_window_binary(PGconn *c, const char *sql, int nparams, const char *const *params) {
  return exec_window(c, sql, nparams, params, 1);
}
