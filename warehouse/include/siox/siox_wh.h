/*
 * libsiox-warehouse: the one way into the SIOX warehouse (README.md).
 *
 * The warehouse is a PostgreSQL database that siox-server fills. This
 * library owns its schema, its connection and every query and analysis on
 * its core tables; front ends (siox, siox web) present what it returns.
 *
 * Conventions: functions return 0 or a negative errno and, on error, a
 * message in err (never printed here). Handles are opaque; what a function
 * allocates for the caller says who frees it.
 */
#ifndef SIOX_WH_H
#define SIOX_WH_H

#include <libpq-fe.h>
#include <stddef.h>

/* An open warehouse. */
struct siox_wh;

/* Opens the warehouse at conninfo (a libpq connection string). *out is the
 * caller's, closed with siox_wh_close. 0, -ECONNREFUSED (not reachable),
 * -EACCES (refused this user), -ENOMEM; err says which server and why. */
int siox_wh_open(const char *conninfo, struct siox_wh **out, char *err, size_t errlen);

/* Closes wh (NULL is fine). */
void siox_wh_close(struct siox_wh *wh);

/* The libpq connection under wh, borrowed: for code that still issues its
 * own SQL while it moves here. */
PGconn *siox_wh_pg(struct siox_wh *wh);

/* ---- blame latency (issue 10) ------------------------------------------
 * Runs one parameterised statement that reads activities of given types in
 * a time window, so that the (type_id, start_ns) index serves it (plain
 * index scans off for that statement only; src/wh_window_scan.c says why).
 * The result is the caller's (PQclear), as from PQexecParams. */
PGresult *siox_wh_exec_window(PGconn *c, const char *sql, int nparams, const char *const *params);

/* Sets up c for interactive queries that must answer in milliseconds
 * (`siox blame`): no JIT compilation. */
void siox_wh_interactive(PGconn *c);

#endif
