/*
 * Capacity planning over the knowledge base's load aggregates
 * (knowledge-base/src/capacity*.c, schema 009): per component (a node such
 * as a brick or a device, a client node, a job) its rates, peak, utilisation
 * against the most it was ever seen to do, latency against load, and which
 * component saturates first when the load grows by a factor. Conventions as
 * in siox_kb.h (caller owns the connection; -1 and err on failure).
 */
#ifndef SIOX_KB_CAPACITY_H
#define SIOX_KB_CAPACITY_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>
#include <libpq-fe.h>

struct siox_kb_capacity_query {
  int64_t since_ns, until_ns; /* buckets starting in [since, until) */
  const char *kind;           /* "node", "host", "job", or NULL for all */
  const char *component;      /* a role (brick, device, layer, client, job): that role only;
                                 else a substring of the label, or the key; NULL: all */
  double what_if;             /* load growth factor to project (>= 1; 0 means 1) */
};

struct siox_kb_capacity_row {
  char kind[8];    /* node | host | job */
  char key[128];   /* node_id, host name or job id */
  char role[16];   /* brick | device | layer | client | job */
  char label[320]; /* "hwid swid [iid]" for a node, else the key */
  int bytes_metric; /* 1: rates below are bytes/s; 0: ops/s (no byte counts) */
  int64_t ops, bytes;
  double seconds;                /* window length */
  double rate, peak;             /* mean and busiest bucket, in the metric */
  double bytes_per_s, ops_per_s; /* means */
  double capacity;               /* the most this component or a peer of its kind did in one bucket,
                                    ever (or node/bandwidth when set), in the metric */
  int capacity_nominal;          /* 1: capacity from node/bandwidth */
  int peers;                     /* components of its kind ever seen, itself included: with 1
                                    and no nominal figure its capacity is only its own best */
  double utilization;            /* peak / capacity */
  double mean_utilization;       /* rate / capacity */
  double busy;                   /* sum of latencies / window: mean requests in flight */
  double lat_low_ns, lat_high_ns; /* mean latency in the quieter / busier half of its buckets */
  double lat_slope;              /* latency (ns) per unit of load (metric), least squares; 0 when unknown */
  double lat_intercept_ns;
  double saturation_factor;      /* growth at which peak reaches capacity (capacity / peak) */
  double projected_utilization;  /* what_if * utilization */
  double projected_lat_ns;       /* the latency fit at what_if * peak (0 when unknown) */
};

/* Components with load in the window, first to saturate first: smallest
 * saturation_factor, those whose capacity is only their own best (peers 1,
 * not nominal) after all others. *out is malloc'ed (free() it). Returns the
 * number of rows, or -1. */
int siox_kb_capacity_report(PGconn *c, const struct siox_kb_capacity_query *q, struct siox_kb_capacity_row **out,
                            size_t *n, char *err, size_t errcap);

/* The document `siox capacity --json` prints and siox web's /api/component
 * serves (capacity_document.c): {since_ns, until_ns, what_if,
 * saturates_first, components: [rows]} of n rows of the report for query q.
 * The caller owns it (json_object_put). */
json_object *siox_kb_capacity_json(const struct siox_kb_capacity_query *q, const struct siox_kb_capacity_row *r,
                                   size_t n);
/* That document of siox_kb_capacity_report(c, q): 0, or -EIO with err set
 * (a query failed, no knowledge-base schema). */
int siox_kb_capacity_document(PGconn *c, const struct siox_kb_capacity_query *q, json_object **out, char *err,
                              size_t errcap);

/* One bucket of a component's load, for plots. */
struct siox_kb_capacity_point {
  int64_t bucket_ns;
  double bytes_per_s, ops_per_s, mean_lat_ns; /* mean_lat_ns 0 when no ops */
};

/* The buckets of one component (kind, key) in [since, until), in time order,
 * empty buckets included. *out is malloc'ed (free() it). Returns the number
 * of points, or -1. */
int siox_kb_capacity_series(PGconn *c, const char *kind, const char *key, int64_t since_ns, int64_t until_ns,
                            struct siox_kb_capacity_point **out, size_t *n, char *err, size_t errcap);

#endif
