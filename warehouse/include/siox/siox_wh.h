/*
 * libsiox-warehouse: the one way into the SIOX warehouse (README.md).
 *
 * The warehouse is a PostgreSQL database that siox-server fills. This
 * library owns its schema (warehouse/schema, one numbered sequence), its
 * connection and every query and analysis on its core tables; front ends
 * (siox, siox web) present what it returns.
 *
 * Conventions: functions return 0 or a negative errno and, on error, a
 * message in err (never printed here). The connection handle is opaque;
 * what a function allocates for the caller says who frees it. Results are
 * plain structs the front ends read (never write): trees (wh/graph.h),
 * blame (wh/blame*.h), waiting (wh/waiting.h); the queries that fill them
 * take the connection siox_wh_pg gives (wh/warehouse.h).
 */
#ifndef SIOX_WH_H
#define SIOX_WH_H

#include <libpq-fe.h>
#include <stddef.h>

/* An open warehouse. */
struct siox_wh;

/* Opens the warehouse at conninfo (a libpq connection string or URI; the
 * caller finds it: siox's --db, --data-dir/conninfo, $SIOX_DB). *out is the
 * caller's, closed with siox_wh_close; NULL on error. 0, -ECONNREFUSED (not
 * reachable), -EACCES (refused this user), -ENOMEM; err says where (without
 * a password) and why. Sessions run in UTC. */
int siox_wh_open(const char *conninfo, struct siox_wh **out, char *err, size_t errlen);

/* Closes wh (NULL is fine). */
void siox_wh_close(struct siox_wh *wh);

/* The libpq connection under wh, borrowed (valid until siox_wh_close): the
 * queries below and libsiox-kb take it. NULL for NULL. */
PGconn *siox_wh_pg(struct siox_wh *wh);

/* Says one line of progress (e.g. "schema 015_blame_indexes.sql applied"). */
typedef void (*siox_wh_log_fn)(void *ctx, const char *line);

/* Brings the database at c to the newest schema (warehouse/schema, embedded
 * at build time) and reloads the ontology rows: each NNN_*.sql not yet in
 * schema_version in its own transaction, under an advisory lock so that
 * servers starting together take turns. log (may be NULL) hears each
 * applied file. 0 or -EIO with err saying which step failed. */
int siox_wh_migrate(PGconn *c, siox_wh_log_fn log, void *ctx, char *err, size_t errlen);

/* The queries and the analyses. */
#include "siox/wh/warehouse.h"
#include "siox/wh/graph.h"
#include "siox/wh/blame.h"
#include "siox/wh/blame_class.h"
#include "siox/wh/blame_collective.h"
#include "siox/wh/blame_job.h"
#include "siox/wh/blame_unlinked.h"
#include "siox/wh/blame_wait.h"
#include "siox/wh/waiting.h"
#include "siox/wh/export.h"

#endif
