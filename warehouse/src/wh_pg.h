/*
 * The library's libpq helpers (private: not in siox_wh.h): the one way its
 * files turn a failed result into an error and read numbers out of rows.
 */
#ifndef SIOX_WH_PG_H
#define SIOX_WH_PG_H

#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

/* Formats "<what>: <server message>" into err (prefixed "permission denied: "
 * for SQLSTATE 42501), clears res and returns -EIO. */
int siox_wh_failed(PGresult *res, PGconn *c, const char *what, char *err, size_t errlen);
/* Column col of row r as an int64 (0 when NULL). */
int64_t siox_wh_i64(const PGresult *res, int r, int col);
/* Column col of row r as a double (0 when NULL). */
double siox_wh_f64(const PGresult *res, int r, int col);
/* Runs sql with n text parameters; the result when it has tuples (or is a
 * command's OK), else NULL with err set by siox_wh_failed. */
PGresult *siox_wh_query(PGconn *c, const char *what, const char *sql, int n, const char *const *params, char *err,
                        size_t errlen);
/* Runs sql with PQexec (so it may be several statements, e.g. a schema
 * file); 0, or siox_wh_failed's -EIO with err set. */
int siox_wh_exec(PGconn *c, const char *what, const char *sql, char *err, size_t errlen);

/* branch (one parenthesised SELECT whose tables are written {S}T) once per
 * shard on a coordinator, "{S}" made "siox_shard_K." and the branches
 * joined by UNION ALL, or once with "{S}" dropped on a single warehouse
 * (wh_fanout.c: why). Malloc'd; NULL with err set on failure. */
char *siox_wh_fanout(PGconn *c, const char *branch, char *err, size_t errlen);
/* The same, but one (written like branch) on a single warehouse: for a
 * statement spelled one way to steer the local planner and another for
 * postgres_fdw to ship whole (warehouse_waiting.c's kind history). */
char *siox_wh_fanout_or(PGconn *c, const char *one, const char *branch, char *err, size_t errlen);

/* The advisory lock that serializes schema migrations, wherever they run
 * (a server's start, a shard's setup, the coordinator's build). */
/* SQL: the activities of process P (a SQL expression) as a range of the
 * primary key, aid = proc_id << 32 | local number; activities has no
 * proc_id index, so "a.aid " SIOX_WH_AIDS_OF("p.proc_id") is how a process's
 * activities are read. */
#define SIOX_WH_AIDS_OF(p) "BETWEEN (" p "::bigint << 32) AND ((" p "::bigint << 32) | 4294967295)"
#define SIOX_WH_MIGRATE_LOCK "SELECT pg_advisory_lock(5105290)"
#define SIOX_WH_MIGRATE_UNLOCK "SELECT pg_advisory_unlock(5105290)"

#endif
