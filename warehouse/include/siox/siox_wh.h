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
#include <stdint.h>

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
#include "siox/wh/shards.h"
#include "siox/wh/graph.h"
#include "siox/wh/blame.h"
#include "siox/wh/blame_class.h"
#include "siox/wh/blame_collective.h"
#include "siox/wh/blame_job.h"
#include "siox/wh/blame_peers.h"
#include "siox/wh/blame_sibling.h"
#include "siox/wh/blame_unlinked.h"
#include "siox/wh/blame_wait.h"
#include "siox/wh/waiting.h"
#include "siox/wh/export.h"
#include "siox/wh/job_rows.h"
#include "siox/wh/documents.h"
/* ---- Job views (issue 14 section 2; wh_job_*.c, wh_jobs.c, wh_critical_files.c) ----
 * A job is processes.job, keyed by (uid, job id) as everywhere in SIOX. Its
 * I/O is what its processes' I/O layers recorded (HDF5, MPI-IO, POSIX,
 * stdio); the calls the application made itself are the top-level ones (no
 * explicit parent): their bytes and time are the job's, so nested layers
 * are not counted twice. Documents are json-c objects, the same for
 * `siox ... --json` and `siox web`; the caller frees them with
 * json_object_put. */
#include <stdint.h>

struct json_object;

/* One I/O interval on one file (an index below nfiles). */
struct siox_wh_span {
  int64_t start_ns, end_ns;
  uint32_t file;
};

/* A file's time in the sweep: busy_ns, the union of its own spans;
 * exclusive_ns, its share of the job's busy time, each instant divided
 * equally among the files active then (idle gaps belong to nobody). */
struct siox_wh_file_share {
  int64_t busy_ns;
  double exclusive_ns;
};

/* IOMiner's critical-file sweep line over n spans, O(n log n). Fills
 * out[nfiles] and *busy_ns (the union of all spans: the exclusive times add
 * up to it). Empty spans and files >= nfiles are ignored. 0 or -ENOMEM. */
int siox_wh_critical_files(const struct siox_wh_span *s, size_t n, size_t nfiles, struct siox_wh_file_share *out,
                           int64_t *busy_ns);

/* What `siox jobs` lists. since_ns: only jobs with a process first seen at
 * or after it (0: all). sort: "io_time", "bytes" or "bandwidth", most first
 * (NULL: the newest first). */
struct siox_wh_jobs_query {
  int64_t since_ns;
  const char *sort;
};

/* The jobs document: {"jobs": [{job, uid, processes, activities, first_ns,
 * last_ns, bytes_read, bytes_written, io_time_ns, bandwidth_bps,
 * worst_component, factors: {...}}]} (README.md, "Job views"). 0, -EINVAL
 * (bad sort), -EIO (query failed; err). */
int siox_wh_jobs(struct siox_wh *wh, const struct siox_wh_jobs_query *q, struct json_object **out, char *err,
                 size_t errlen);

/* The summary document of job: totals, per layer and per file statistics,
 * critical files (README.md, "Job views"). 0, -ENOENT (no activity of the
 * job visible; err), -EINVAL (the id names several users' jobs), -EIO. */
int siox_wh_job_summary(struct siox_wh *wh, const char *job, struct json_object **out, char *err, size_t errlen);

/* The rank x time heatmap of job: bins time bins over the job's span, one
 * row per rank, with the bytes moved and the I/O time of the top-level calls
 * in each cell (aggregated here: a job of 1M activities ships bins x ranks
 * cells). 0, -ENOENT, -EINVAL, -EIO as siox_wh_job_summary. */
int siox_wh_job_heatmap(struct siox_wh *wh, const char *job, int bins, struct json_object **out, char *err,
                        size_t errlen);

/* The job page's document: {job, summary, heatmap}, the two documents above
 * (heatmap with bins) built from one load of the job instead of two. 0,
 * -ENOENT, -EINVAL (bins out of 1..4096, or several owners), -EIO. */
int siox_wh_job_page(struct siox_wh *wh, const char *job, int bins, struct json_object **out, char *err,
                     size_t errlen);

/* A job whose page (siox_wh_job_page with some bins) is not stored for the
 * stamp its listed sums were stored under (README.md, "Stored aggregates"). */
struct siox_wh_unviewed {
  char *job;
  int uid;
  int64_t acts, max_aid; /* the stamp */
};

/* Up to max jobs whose sums a listing stored at least settle_s seconds ago
 * (the job has not changed since: it ended) and whose page's documents
 * (summary, heatmap of bins) are not stored for that stamp, the most
 * recently listed first; `siox web` computes them ahead of the first view.
 * *out is freed with siox_wh_unviewed_free. 0 (none on a warehouse older
 * than schema 026), -ENOMEM, -EIO (query failed; err). */
int siox_wh_job_unviewed(struct siox_wh *wh, int bins, int settle_s, size_t max, struct siox_wh_unviewed **out,
                         size_t *n, char *err, size_t errlen);
void siox_wh_unviewed_free(struct siox_wh_unviewed *u, size_t n);

/* The latency over time of the components whose label ("hwid swid#iid")
 * contains pattern, or of a role (brick, client, device), from since_ns:
 * {pattern, bins, components: [{node_id, label, first_ns, last_ns,
 * activities, bins: [{t_ns, n, mean_ns}]}]}, bins equal time bins over the
 * components' span (empty bins left out). 0, -EINVAL, -EIO. */
int siox_wh_component_latency(struct siox_wh *wh, const char *pattern, int64_t since_ns, int bins,
                              struct json_object **out, char *err, size_t errlen);
/* ---- blame latency (issue 10) ------------------------------------------
 * Runs one parameterised statement that reads activities of given types in
 * a time window, so that the (type_id, start_ns) index serves it (plain
 * index scans off for that statement only; src/wh_window_scan.c says why).
 * The result is the caller's (PQclear), as from PQexecParams. */
PGresult *siox_wh_exec_window(PGconn *c, const char *sql, int nparams, const char *const *params);
/* The same with the result in binary format (PQgetvalue gives each value
 * in network byte order: no text to print at the server and parse here,
 * for reads of tens of thousands of numbers such as blame's peers). */
PGresult *siox_wh_exec_window_binary(PGconn *c, const char *sql, int nparams, const char *const *params);

/* ---- capacity planning: the storage model's measurements
 * (wh_capacity_samples.c; issue 13, capacity/README.md) ---- */
struct siox_wh_cap_sample {
  const char *component; /* brick name (HWID of a GlusterFS-brick node) or client host */
  int brick;             /* 1: a brick's activity, 0: a GlusterFS client's */
  const char *fop;       /* the activity type: writev, readv, lookup, ... */
  uint64_t bytes;        /* io/bytes, 0 when absent */
  int64_t start_ns;
  int64_t ns;            /* exclusive time: a brick's whole time, a client's minus its linked brick's */
  int64_t span_ns;       /* the activity's whole time, start to end (a client's includes its brick's) */
  int64_t object;        /* the object (file) it was a call on (its remote call's), 0: none recorded */
  const char *via;       /* a client's: the brick (hwid) of its linked brick activity; NULL for a brick's */
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
/* The POSIX pread and pwrite calls that started in [since, until) while a
 * GlusterFS client request was in progress (reads and writes on the
 * volume; a local file's are rare at those moments), with their host (the
 * POSIX node's HWID, which names the client node as its GlusterFS client
 * does), bytes and times, in start order. 0, -EIO (err), or the callback's. */
struct siox_wh_cap_posix {
  const char *host;
  int write;      /* 1: pwrite, 0: pread */
  uint64_t bytes; /* io/bytes */
  int64_t start_ns, end_ns;
};
typedef int (*siox_wh_cap_posix_cb)(void *ctx, const struct siox_wh_cap_posix *p);
int siox_wh_capacity_posix(PGconn *c, int64_t since_ns, int64_t until_ns, siox_wh_cap_posix_cb cb, void *ctx,
                           char *err, size_t errlen);
/* The MPI_File_open (close 0) and MPI_File_close (close 1) calls that
 * started in [since, until), their durations. 0, -EIO (err), or the callback's. */
typedef int (*siox_wh_cap_mpi_cb)(void *ctx, int close, int64_t ns);
int siox_wh_capacity_mpi_opens(PGconn *c, int64_t since_ns, int64_t until_ns, siox_wh_cap_mpi_cb cb, void *ctx,
                               char *err, size_t errlen);
/* Per posix/path whose object a brick received calls for in the window: the
 * brick that received most (the file's brick). */
int siox_wh_capacity_placement(PGconn *c, int64_t since_ns, int64_t until_ns, siox_wh_cap_place_cb cb, void *ctx,
                               char *err, size_t errlen);
/* The hosts (processes.host) of the processes that made each brick's and
 * client's activities: where a component runs (a brick's name need not
 * name its machine: the testbed's bricks are brickN:/dir on one host). */
typedef int (*siox_wh_cap_host_cb)(void *ctx, const char *component, const char *host);
int siox_wh_capacity_hosts(PGconn *c, siox_wh_cap_host_cb cb, void *ctx, char *err, size_t errlen);
/* Bricks that declare a node/bandwidth attribute (bytes/s). */
int siox_wh_capacity_declared(PGconn *c, siox_wh_cap_declared_cb cb, void *ctx, char *err, size_t errlen);

#endif
