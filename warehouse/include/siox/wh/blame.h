/*
 * Blame for one call (README.md "Blame for one call"), in memory: walk the
 * causal tree down the heaviest children to the deepest component that holds
 * most of the time (the suspect), collect the deep components that spent
 * time themselves (the candidates), and judge them against peer samples the
 * warehouse found (same SWID and activity type on other nodes, same job and
 * window). Pure: cmd_blame.c fetches the samples and prints the verdict.
 */
#ifndef SIOX_CLI_BLAME_H
#define SIOX_CLI_BLAME_H

#include "graph.h"

struct siox_blame_rule {
  double share;     /* the suspect: deepest level whose group holds >= share of the root's time */
  double ratio;     /* culprit: value >= ratio x the peers' median ... */
  double pct;       /* ... and above the peers' pct percentile (0..1) ... */
  size_t min_peers; /* ... with at least this many peer samples */
  bool refit_kind;  /* fit the kind's latency model per call, not the kept one (schema 024) */
};
#define SIOX_BLAME_RULE_DEFAULT ((struct siox_blame_rule){0.5, 3.0, 0.9, 3, false})

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
  /* The walked path, root first (owned array): at each level the heaviest
   * member of the heaviest group of same-kind children. */
  const struct siox_act **path;
  size_t npath;
  size_t suspect_idx; /* index into path, or npath when a candidate off the path was named */
  const struct siox_act *suspect;
  /* Deep components (below an implicit link) that spent at least half of
   * their time in themselves; judged by siox_blame_find. Owned array. */
  const struct siox_act **cands;
  size_t ncands;
  /* Filled by siox_blame_judge. Values are inclusive seconds; when per_byte
   * (the suspect has an io/bytes count, and so do peers) seconds per byte,
   * or, when line (the peers show two sizes or more), the time over the
   * peers' latency line line_a_s + line_b_s * bytes for the sample's size:
   * a fixed cost per call plus a cost per byte, so that a small piece is
   * not judged by the per-byte rate of large ones. */
  bool per_byte, line;
  double line_a_s, line_b_s;
  double value, peer_median, peer_p90, ratio;
  size_t peer_samples;  /* samples on other nodes that were compared */
  size_t peer_skipped;  /* samples on other nodes without a byte count */
  size_t own_samples;   /* other samples on the suspect's own node */
  double own_median;
  struct siox_blame_peer *peers; /* owned; sorted by median, slowest first */
  size_t npeers;
  enum siox_verdict verdict;
  double excess_s; /* culprit: its time minus the peers' median time for its bytes */
};

/* Walks t from the root: at each level the children of the current group
 * are grouped by (SWID, name) and the walk enters the group whose intervals'
 * union is largest (a trailing collective that only waits loses against the
 * write that did the work; a write split into pieces counts as a whole).
 * The suspect is the deepest level whose group holds >= rule->share of the
 * root's time. Also collects the candidates. Fills out; out owns its arrays
 * (siox_blame_release). 0, -EINVAL for an unfinished tree, -ENOMEM. */
int siox_blame_walk(const struct siox_tree *t, const struct siox_blame_rule *rule, struct siox_blame *out);

/* Compares the suspect with n samples (the suspect's own aid is ignored if
 * present) and sets the verdict and evidence. 0 or -ENOMEM. */
int siox_blame_judge(struct siox_blame *b, const struct siox_blame_sample *s, size_t n);

/* Seconds the peers' latency line gives for bytes (b->line must be set). */
double siox_blame_line_s(const struct siox_blame *b, int64_t bytes);

/* Gives the samples of x's kind (its SWID and name, all nodes). They must
 * stay valid until the blame is released. 0 or a negative errno. */
typedef int (*siox_blame_fetch_fn)(void *ctx, const struct siox_act *x, const struct siox_blame_sample **s,
                                   size_t *n);

/* Judges the suspect and every candidate against the samples fetch gives.
 * The candidate culprit with the largest excess over its peers' median is
 * named (deep components first: a call waiting on a slow brick looks slow
 * itself); with none, the suspect's own judgement stands. 0 or the first
 * error of fetch or siox_blame_judge. */
int siox_blame_find(struct siox_blame *b, siox_blame_fetch_fn fetch, void *ctx);

/* Judges x against its peers as siox_blame_find judges a candidate: out
 * shares b's path (not owned) and owns its peers (free out->peers). */
int siox_blame_judge_act(const struct siox_blame *b, const struct siox_act *x, siox_blame_fetch_fn fetch, void *ctx,
                         struct siox_blame *out);
void siox_blame_release(struct siox_blame *b);

/* Median and nearest-rank percentile of v (reordered in place: order_stat.c
 * selects, it does not sort); 0 when n == 0. */
double siox_median(double *v, size_t n);
/* The Theil-Sen line y = a + b * x through k points (at most 64 are used),
 * as blame fits its peers' line: false when no two x differ. */
bool siox_line_fit(const double *x, const double *y, size_t k, double *a, double *b);
double siox_percentile(double *v, size_t n, double p);

#endif
