/*
 * Scoring latencies against the per-component baselines of the knowledge
 * base (knowledge-base/src/baselines_*.c, schema 008): one activity (for
 * `siox blame`) or every component active in a time window (for `siox
 * anomalies`). Conventions as in siox_kb.h: the caller owns the connection,
 * errors return -1 with a one-line reason in err[errcap].
 *
 * A baseline is the latency histogram of one (node, activity type, size
 * class); an activity is scored against its own baseline with itself (or
 * the window being judged) taken out, so that a component cannot hide its
 * slowness by having been folded in already.
 */
#ifndef SIOX_KB_BASELINES_H
#define SIOX_KB_BASELINES_H

#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

/* Fewer baseline samples than this and a score says "no baseline". */
#define SIOX_KB_MIN_BASELINE 20

struct siox_kb_score {
  int found;          /* 1: a baseline with >= SIOX_KB_MIN_BASELINE samples */
  int size_class;     /* floor(log2(io/bytes)), -1 without a byte count */
  int64_t base_n;     /* baseline samples (the activity itself excluded) */
  int64_t latency_ns; /* the activity's latency */
  double percentile;  /* 0..100: share of the baseline faster than it */
  double p50_ns, p90_ns, p99_ns;
};

/* Scores activity aid against the baseline of its node, type and size
 * class, with the activity itself and every folded activity of that
 * baseline starting in [exclude_from_ns, exclude_to_ns) taken out (pass the
 * judged call's time window, so that the episode being judged does not
 * count as its own normal; 0, 0 for the activity alone). Returns 1 (out
 * filled; out->found says whether there is a usable baseline), 0 when there
 * is no such activity, -1 on error. */
int siox_kb_baseline_score(PGconn *c, int64_t aid, int64_t exclude_from_ns, int64_t exclude_to_ns,
                           struct siox_kb_score *out, char *err, size_t errcap);

/* ---- anomalies ------------------------------------------------------------ */
struct siox_kb_anomaly_rule {
  double percentile;   /* abnormal when the window's median ranks at or above this (default 95) */
  double min_ratio;    /* ... and is at least this many times the baseline's median (default 2):
                          a tight baseline ranks a 20 % drift at p99, which is not worth a page */
  int64_t min_samples; /* in the window (default 5) */
};

struct siox_kb_anomaly {
  int node_id, type_id, size_class;
  char hwid[256], swid[64], iid[64], name[128];
  int64_t n;                   /* activities in the window */
  double p50_ns, p90_ns;       /* the window's own percentiles */
  int64_t base_n;              /* baseline samples outside the window (0: none) */
  double base_p50_ns, base_p99_ns;
  double percentile;           /* rank of the window's median in the baseline, 0..100 */
  double ratio;                /* the window's median / the baseline's median (0: no baseline) */
  double above_base_p99;       /* share (0..1) of the window's activities above the baseline's p99 */
  int64_t slowest_aids[3];     /* 0 where fewer */
  int abnormal;                /* judged by the rule */
};

/* Every (component, type, size class) with activities starting in
 * [since_ns, until_ns), most abnormal first (by percentile). *out is
 * malloc'ed (free() it); *n its length. rule NULL: the defaults. Returns the
 * number of abnormal ones, or -1. */
int siox_kb_anomalies(PGconn *c, int64_t since_ns, int64_t until_ns, const struct siox_kb_anomaly_rule *rule,
                      struct siox_kb_anomaly **out, size_t *n, char *err, size_t errcap);

#endif
