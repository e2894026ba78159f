/*
 * Incremental folding of new activities into a knowledge-base aggregate
 * (baselines.c, capacity.c). Private to libsiox-kb.
 */
#ifndef SIOX_KB_BASELINES_FOLD_H
#define SIOX_KB_BASELINES_FOLD_H

#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

/* The window of one fold: activities with lo_ns < end_ns <= hi_ns, found
 * through the start_ns index as start_ns in (from_ns, hi_ns]. */
struct kb_fold_window {
  int64_t lo_ns, hi_ns, from_ns;
};

/* The window's activities as a FROM item (the warehouse's
 * siox_fold_activities, schema 032, inlined by the planner), with $1 =
 * from_ns, $2 = lo_ns, $3 = hi_ns. */
#define KB_FOLD_ACTIVITIES " siox_fold_activities($1::bigint, $2::bigint, $3::bigint)"

/* Begins a transaction and locks the aggregate's row of kb_fold_state (so two
 * folds never count an activity twice). The window ends at now minus the
 * row's settle time or settle_ns, whichever is longer. Returns 1 with *w set
 * when there is something to fold, 0 when not (transaction committed), -1
 * on error (rolled back, err set). */
int kb_fold_begin(PGconn *c, const char *name, int64_t settle_ns, struct kb_fold_window *w, char *err, size_t errcap);

/* Runs one statement of the fold with the window's three parameters. Returns
 * the number of rows it affected, or -1 (err set; the caller rolls back). */
long kb_fold_exec(PGconn *c, const char *sql, const struct kb_fold_window *w, char *err, size_t errcap);

/* Runs one statement of the fold without parameters. Returns 0, or -1 (err
 * set; the caller rolls back). */
int kb_fold_step(PGconn *c, const char *sql, char *err, size_t errcap);

/* Runs a query without parameters and returns its number of rows, or -1
 * (err set; the caller rolls back). */
long kb_fold_rows(PGconn *c, const char *sql, char *err, size_t errcap);

/* Advances the watermark to hi_ns, adds folded to the count and commits.
 * Returns 0, or -1 (rolled back, err set). */
int kb_fold_commit(PGconn *c, const char *name, const struct kb_fold_window *w, long folded, char *err,
                   size_t errcap);

/* Rolls the fold back after an error; err stays as it was. */
void kb_fold_abort(PGconn *c);

/* Writes "what: <libpq message>" into err, first line only. Returns -1. */
int kb_pq_fail(PGresult *r, const char *what, char *err, size_t errcap);

#endif
