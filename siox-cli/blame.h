/*
 * Blame for one call (DESIGN.md "Blame for one call"), in memory: walk the
 * causal tree's critical path to the deepest component that holds most of
 * the time (the suspect), then judge it against peer samples the warehouse
 * found (same SWID and activity type on other nodes, same job and window).
 * Pure: cmd_blame.c fetches the samples and prints the verdict.
 */
#ifndef SIOX_CLI_BLAME_H
#define SIOX_CLI_BLAME_H

#include "graph.h"

struct siox_blame_rule {
  double share;     /* descend while the critical child holds >= share of the root's time */
  double ratio;     /* culprit: value >= ratio x the peers' median ... */
  double pct;       /* ... and above the peers' pct percentile (0..1) ... */
  size_t min_peers; /* ... with at least this many peer samples */
};
#define SIOX_BLAME_RULE_DEFAULT ((struct siox_blame_rule){0.5, 3.0, 0.9, 3})

/* One peer activity, as the warehouse returns it. Strings are borrowed. */
struct siox_blame_sample {
  int64_t aid;
  int32_t node_id;
  const char *hwid, *iid;
  int64_t ns;    /* inclusive time */
  int64_t bytes; /* io/bytes, or -1 */
};

/* A peer node: its samples' median of the compared value. hwid/iid borrowed
 * from the samples. */
struct siox_blame_peer {
  int32_t node_id;
  const char *hwid, *iid;
  size_t n;
  double median;
};

enum siox_verdict {
  SIOX_VERDICT_CULPRIT,  /* the suspect stands out from its peers */
  SIOX_VERDICT_NORMAL,   /* it does not: the time went there, but it looks normal */
  SIOX_VERDICT_NO_PEERS, /* too few peer samples to judge */
};

struct siox_blame {
  struct siox_blame_rule rule;
  const struct siox_act **path; /* critical path, root first (owned array) */
  size_t npath;
  size_t suspect_idx;
  const struct siox_act *suspect;
  /* Filled by siox_blame_judge. Values are inclusive seconds, or seconds per
   * byte when per_byte (the suspect has an io/bytes count). */
  bool per_byte;
  double value, peer_median, peer_p90, ratio;
  size_t peer_samples;  /* samples on other nodes that were compared */
  size_t peer_skipped;  /* samples on other nodes without a byte count */
  size_t own_samples;   /* other samples on the suspect's own node */
  double own_median;
  struct siox_blame_peer *peers; /* owned; sorted by median, slowest first */
  size_t npeers;
  enum siox_verdict verdict;
};

/* Walks t's critical path and picks the suspect: the deepest activity on it
 * whose inclusive time is >= rule->share of the root's. Fills out->path,
 * suspect; out owns the path array (siox_blame_release). 0, -EINVAL for an
 * unfinished tree, -ENOMEM. */
int siox_blame_walk(const struct siox_tree *t, const struct siox_blame_rule *rule, struct siox_blame *out);

/* Compares the suspect with n samples (the suspect's own aid is ignored if
 * present) and sets the verdict and evidence. 0 or -ENOMEM. */
int siox_blame_judge(struct siox_blame *b, const struct siox_blame_sample *s, size_t n);

void siox_blame_release(struct siox_blame *b);

/* Median and nearest-rank percentile of v (sorted in place); 0 when n == 0. */
double siox_median(double *v, size_t n);
double siox_percentile(double *v, size_t n, double p);

#endif
