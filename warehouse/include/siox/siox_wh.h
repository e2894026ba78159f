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
#include <stdint.h>

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

/* ---- capacity planning: the storage model's measurements
 * (wh_capacity_samples.c; issue 13, capacity/README.md) ---- */
struct siox_wh_cap_sample {
  const char *component; /* brick name (HWID of a GlusterFS-brick node) or client host */
  int brick;             /* 1: a brick's activity, 0: a GlusterFS client's */
  const char *fop;       /* the activity type: writev, readv, lookup, ... */
  uint64_t bytes;        /* io/bytes, 0 when absent */
  int64_t start_ns;
  int64_t ns;            /* exclusive time: a brick's whole time, a client's minus its linked brick's */
};
/* Callbacks get borrowed strings, valid during the call; a non-zero return
 * stops the walk and is returned. */
typedef int (*siox_wh_cap_sample_cb)(void *ctx, const struct siox_wh_cap_sample *s);
typedef int (*siox_wh_cap_place_cb)(void *ctx, const char *path, const char *brick);
typedef int (*siox_wh_cap_declared_cb)(void *ctx, const char *brick, double bytes_per_s);
/* The successful brick and client activities that started in [since, until),
 * in start order (client activities not linked to a brick are left out). 0,
 * -EIO (err), or the callback's return. */
int siox_wh_capacity_samples(PGconn *c, int64_t since_ns, int64_t until_ns, siox_wh_cap_sample_cb cb, void *ctx,
                             char *err, size_t errlen);
/* Per posix/path whose object a brick received calls for in the window: the
 * brick that received most (the file's brick). */
int siox_wh_capacity_placement(PGconn *c, int64_t since_ns, int64_t until_ns, siox_wh_cap_place_cb cb, void *ctx,
                               char *err, size_t errlen);
/* Bricks that declare a node/bandwidth attribute (bytes/s). */
int siox_wh_capacity_declared(PGconn *c, siox_wh_cap_declared_cb cb, void *ctx, char *err, size_t errlen);

#endif
