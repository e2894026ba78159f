/*
 * The queries on the warehouse's core tables (schema: warehouse/schema/
 * 001_init.sql and on), on the connection siox_wh_pg gives. Everything
 * returns negative errno and a message in err; nothing here prints.
 */
#ifndef SIOX_CLI_WAREHOUSE_H
#define SIOX_CLI_WAREHOUSE_H

#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

#include "blame.h"
#include "blame_class.h"
#include "waiting.h"
#include "graph.h"

/* Loads aid and everything it caused, following explicit and implicit links
 * down to `depth` levels, with node, type, process and attributes. *out is a
 * finished tree the caller destroys. 0, -ENOENT (no such activity), -EIO
 * (query failed; err says why), -ENOMEM. */
int siox_wh_load_tree(PGconn *c, int64_t aid, int depth, struct siox_tree **out, char *err, size_t errlen);

/* ---- top -------------------------------------------------------------- */
struct siox_top_query {
  long limit;
  const char *job, *layer, *name; /* NULL: any */
  int roots_only;                 /* only activities nothing caused */
};
struct siox_top_row {
  int64_t aid, start_ns, duration_ns, bytes; /* bytes -1 when unknown */
  int32_t err;
  const char *host, *hwid, *swid, *name, *job; /* borrowed from the result */
};
struct siox_top {
  struct siox_top_row *rows;
  size_t n;
  PGresult *res;
};
/* Slowest activities first. The caller frees *out with siox_wh_top_free.
 * 0, -EIO (err says why), -ENOMEM. */
int siox_wh_top(PGconn *c, const struct siox_top_query *q, struct siox_top *out, char *err, size_t errlen);
void siox_wh_top_free(struct siox_top *t);

/* ---- blame peers ------------------------------------------------------ */
struct siox_peer_query {
  const char *swid, *name; /* the suspect's layer and activity type */
  const char *job;         /* the call's job; "" matches only job-less processes */
  int64_t call_aid;        /* the call: its process's uid keys the job */
  int64_t from_ns, to_ns;  /* start times within this window */
  long limit;              /* the samples nearest to mid_ns are kept */
  int64_t mid_ns;
};
struct siox_peer_set {
  struct siox_blame_sample *s; /* hwid, iid borrowed from nodes */
  size_t n;
  PGresult *nodes;
};
/* Samples of the suspect's kind (all nodes, its own included), nearest
 * to mid_ns first (then by aid), read ring by ring (wh_peers.c). The
 * caller frees *out with siox_wh_peers_free. 0, -EIO, -ENOMEM. */
int siox_wh_peers(PGconn *c, const struct siox_peer_query *q, struct siox_peer_set *out, char *err, size_t errlen);
void siox_wh_peers_free(struct siox_peer_set *p);

/* ---- waiting (warehouse_waiting.c) ----------------------------------- */
struct siox_served_set {
  struct siox_served *s; /* strings borrowed from res; own is false */
  const char **names;    /* each request's activity name, borrowed */
  size_t n;
  PGresult *res;
};
/* Every activity of node node_id overlapping [from_ns, to_ns); those
 * overlapping the call [call_from_ns, call_to_ns) with the process and job
 * of the top of their causal chain (the call each served; its own when
 * nothing links it), the others as their own origin with pid 0, host and
 * job "" (the waiting analysis of that call reads no other's origin).
 * 0, -EIO, -ENOMEM. */
int siox_wh_served(PGconn *c, int32_t node_id, int64_t from_ns, int64_t to_ns, int64_t call_from_ns,
                   int64_t call_to_ns, struct siox_served_set *out, char *err, size_t errlen);
/* As siox_wh_served, for the FUSE channel of a mount: the fops of client
 * process proc_id on every node of node_id's layer and host. */
int siox_wh_served_proc(PGconn *c, int32_t node_id, int32_t proc_id, int64_t from_ns, int64_t to_ns,
                        int64_t call_from_ns, int64_t call_to_ns, struct siox_served_set *out, char *err,
                        size_t errlen);
void siox_wh_served_free(struct siox_served_set *s);

/* ---- collective calls (warehouse_collective.c) ------------------------ */
struct siox_sibling;
/* The siblings of collective call aid (blame_collective.h): calls of its
 * layer and name in the other processes of its job (same owner), of the
 * same file when the call sent its range, overlapping its interval, with
 * the time of their own POSIX children. *out is malloc'd (free it). 0,
 * -EIO, -ENOMEM. */
int siox_wh_siblings(PGconn *c, int64_t aid, struct siox_sibling **out, size_t *n, char *err, size_t errlen);

struct siox_kind_set {
  struct siox_kind_sample *s;
  size_t n;
};
/* The latest samples (at most per_node each) of activity `name` on every
 * node of layer `swid` that started before to_ns: the history the kind's
 * latency model learns from. 0, -EIO, -ENOMEM. */
int siox_wh_kind_samples(PGconn *c, const char *swid, const char *name, int64_t to_ns, long per_node,
                         struct siox_kind_set *out, char *err, size_t errlen);
void siox_wh_kind_free(struct siox_kind_set *k);

/* ---- the kinds' models, kept (wh_kind_models.c, schema 024) ----------- */
struct siox_kind_model;
/* Fits the model of kind (swid, name) on its history before to_ns
 * (siox_wh_kind_samples, SIOX_KIND_HISTORY_PER_NODE per component). 0,
 * -EIO, -ENOMEM. */
int siox_wh_kind_model_fit_at(PGconn *c, const char *swid, const char *name, int64_t to_ns,
                              struct siox_kind_model *m, char *err, size_t errlen);
/* Folds the settled minutes since the last fold (settled: ended before now
 * minus the larger of settle_ns and kb_fold_state's settle time): at each
 * minute boundary, the model of every kind that had operations in the
 * minute before it, fitted as siox_wh_kind_model_fit_at. At most max_steps
 * minutes (<= 0: all), each its own transaction. The number of models
 * written, or a negative errno. */
int siox_wh_kind_models_update(PGconn *c, int64_t settle_ns, int max_steps, char *err, size_t errlen);
/* The kept model of kind (swid, name) for a call starting at to_ns: the
 * newest fitted at or before it, when the fold has reached to_ns -
 * max_lag_ns. 1 found (*m, and *model_to_ns its history's end), 0 none
 * (or no such table: a warehouse before 024), -EIO. */
int siox_wh_kind_model(PGconn *c, const char *swid, const char *name, int64_t to_ns, int64_t max_lag_ns,
                       struct siox_kind_model *m, int64_t *model_to_ns, char *err, size_t errlen);

/* ---- counts ----------------------------------------------------------- */
struct siox_wh_counts {
  int64_t activities, processes, nodes, daemons, implicit_links, dropped;
  int64_t dropped_validation; /* activities daemons' validation dropped (client_stats.daemon_dropped_invalid) */
  int64_t quarantined;        /* activities in batches daemons quarantined (quarantined_batches) */
};
/* 0 or -EIO. */
int siox_wh_counts(PGconn *c, struct siox_wh_counts *out, char *err, size_t errlen);

/* warehouse_loss.c: how complete the trace of a job / process / everything
 * is. made is what the processes said they made (client_stats); stored is
 * what the warehouse holds (stored_reported: of processes that reported);
 * the dropped_* say where the rest went; unaccounted = made -
 * stored_reported - every dropped_* (0 when the account is complete). */
struct siox_wh_loss {
  int64_t processes, unreported, made, stored, stored_reported;
  int64_t dropped_client, dropped_exit, dropped_daemon_spool, dropped_daemon_invalid, unaccounted;
};
/* job NULL: any; proc_id 0: any. 0 or -EIO. */
int siox_wh_loss(PGconn *c, const char *job, int64_t proc_id, struct siox_wh_loss *out, char *err, size_t errlen);

/* ---- job spans (warehouse_job_span.c) --------------------------------- */
/* The time span of a call's whole run: every activity of the processes of
 * its job (of its process when job is ""), the job keyed by (uid, job id)
 * of the process of aid. Widens [*from, *to]. 0, -ENOENT (no activity),
 * -EIO. */
int siox_wh_job_span(PGconn *c, int64_t aid, const char *job, int64_t *from, int64_t *to, char *err, size_t errlen);
/* [*from, *to]: the first start and last end of the activities of job's
 * processes (those the caller may see). 0, -ENOENT (none; err), -EIO. */
int siox_wh_job_window(PGconn *c, const char *job, int64_t *from, int64_t *to, char *err, size_t errlen);
/* 1 when some process carries job id job (or is "proc:<id>" of a job-less
 * process), 0 when none, -EIO. */
int siox_wh_job_exists(PGconn *c, const char *job, char *err, size_t errlen);
#endif
