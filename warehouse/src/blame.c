/*
 * Blame for one call, in memory (blame.h). The rules live here and in
 * README.md "Blame": walk down the heaviest group of same-kind children;
 * the deepest level still holding most of the root's time is the suspect;
 * deep components that spent their own time are candidates; the candidate
 * (else the suspect) is the culprit when its time (against the peers'
 * latency line for its size where sizes are known) is several times its
 * peers' median and beyond their high percentile, the largest excess
 * winning.
 */
#include "blame.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the walk ---------------------------------------------------------- */

static bool same_kind(const struct siox_act *a, const struct siox_act *b) {
  return strcmp(a->swid, b->swid) == 0 && strcmp(a->name, b->name) == 0;
}

/* Time the acts of kind k among kids[0..n) cover inside the root's interval
 * (a union: ranks' and pieces' intervals overlap); iv is scratch. */
static int64_t group_ns(const struct siox_act *root, const struct siox_act *k, struct siox_act *const *kids, size_t n,
                        struct siox_interval *iv) {
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (same_kind(kids[i], k)) iv[m++] = (struct siox_interval){kids[i]->start_ns, kids[i]->end_ns};
  return root->inclusive_ns - siox_exclusive_ns(root->start_ns, root->end_ns, iv, m);
}

/* Heavier member: longer, then later end, then lower aid. */
static bool heavier(const struct siox_act *a, const struct siox_act *b) {
  if (a->inclusive_ns != b->inclusive_ns) return a->inclusive_ns > b->inclusive_ns;
  if (a->end_ns != b->end_ns) return a->end_ns > b->end_ns;
  return a->aid < b->aid;
}

/* Picks the heaviest group among kids[0..n): returns its heaviest member
 * and its covered time in *ns. */
static const struct siox_act *heaviest_group(const struct siox_act *root, struct siox_act *const *kids, size_t n,
                                             struct siox_interval *iv, int64_t *ns) {
  const struct siox_act *best = NULL;
  *ns = -1;
  for (size_t i = 0; i < n; i++) {
    int64_t g = group_ns(root, kids[i], kids, n, iv);
    if (g > *ns || (g == *ns && !same_kind(kids[i], best) && heavier(kids[i], best))) {
      *ns = g;
      best = kids[i];
    }
    if (same_kind(kids[i], best) && heavier(kids[i], best)) best = kids[i];
  }
  return best;
}

/* The children of every member of the level (members of one kind) in kids;
 * returns how many. */
static size_t next_level(struct siox_act *const *lvl, size_t n, struct siox_act **kids) {
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < lvl[i]->nchildren; j++) kids[m++] = lvl[i]->children[j];
  return m;
}

/* Keeps only the acts of k's kind; returns how many. */
static size_t keep_kind(struct siox_act **v, size_t n, const struct siox_act *k) {
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (same_kind(v[i], k)) v[m++] = v[i];
  return m;
}

/* Candidates: below an implicit link (another process or host: the
 * components, not the caller waiting for them) and at least half of their
 * time spent in themselves. */
static void collect(const struct siox_act *a, bool remote, struct siox_blame *out) {
  remote = remote || (a->depth > 0 && a->link == SIOX_LINK_IMPLICIT);
  if (remote && a->inclusive_ns > 0 && 2 * a->exclusive_ns >= a->inclusive_ns) out->cands[out->ncands++] = a;
  for (size_t i = 0; i < a->nchildren; i++) collect(a->children[i], remote, out);
}

static int walk(const struct siox_tree *t, struct siox_blame *out, struct siox_act **lvl, struct siox_act **kids,
                struct siox_interval *iv) {
  double total = (double)t->root->inclusive_ns;
  bool holding = true;
  size_t n = 1;
  lvl[0] = t->root;
  out->path[out->npath++] = t->root;
  while ((n = next_level(lvl, n, kids)) > 0) {
    int64_t ns;
    const struct siox_act *rep = heaviest_group(t->root, kids, n, iv, &ns);
    n = keep_kind(kids, n, rep);
    memcpy(lvl, kids, n * sizeof(*lvl));
    /* Stop at the first level below the share: descendants' intervals lie
     * (mostly) inside their parents', so nothing deeper holds more. */
    if (holding && (double)ns >= out->rule.share * total)
      out->suspect_idx = out->npath;
    else
      holding = false;
    out->path[out->npath++] = rep;
  }
  out->suspect = out->path[out->suspect_idx];
  collect(t->root, false, out);
  return 0;
}

int siox_blame_walk(const struct siox_tree *t, const struct siox_blame_rule *rule, struct siox_blame *out) {
  memset(out, 0, sizeof(*out));
  out->rule = *rule;
  if (!t->finished || !t->root) return -EINVAL;
  size_t n = t->n ? t->n : 1;
  struct siox_act **lvl = malloc(n * sizeof(*lvl)), **kids = malloc(n * sizeof(*kids));
  struct siox_interval *iv = malloc(n * sizeof(*iv));
  out->path = calloc(n, sizeof(*out->path));
  out->cands = calloc(n, sizeof(*out->cands));
  int rc = lvl && kids && iv && out->path && out->cands ? walk(t, out, lvl, kids, iv) : -ENOMEM;
  free(lvl);
  free(kids);
  free(iv);
  return rc;
}

double siox_blame_line_s(const struct siox_blame *b, int64_t bytes) {
  return b->line_a_s + b->line_b_s * (double)bytes;
}

/* The compared value of one sample: seconds, seconds per byte, or seconds
 * over the peers' line for its size. Returns false when the comparison
 * needs a byte count the sample lacks. */
static bool sample_value(const struct siox_blame *b, int64_t ns, int64_t bytes, double *out) {
  double s = (double)ns / 1e9;
  if (!b->per_byte) {
    *out = s;
    return true;
  }
  if (bytes <= 0) return false;
  *out = b->line ? s / siox_blame_line_s(b, bytes) : s / (double)bytes;
  return true;
}

/* ---- the peers' latency line ----------------------------------------- */

#define LINE_POINTS 64 /* size groups kept for the fit (pairs: 2016) */

struct point {
  double x, y;
};

static int cmp_point(const void *p, const void *q) {
  const struct point *a = p, *b = q;
  return (a->x > b->x) - (a->x < b->x);
}

/* Merges the samples (sorted by size) into at most LINE_POINTS points, each
 * the median size and median time of a run of equal count that never
 * splits a size; returns how many. tmp holds n doubles. */
static size_t size_groups(const struct point *v, size_t n, struct point *g, double *tmp) {
  size_t k = 0, per = (n + LINE_POINTS - 1) / LINE_POINTS;
  for (size_t i = 0; i < n && k < LINE_POINTS;) {
    size_t j = i + per < n ? i + per : n;
    while (j < n && v[j].x == v[j - 1].x) j++;
    for (size_t m = i; m < j; m++) tmp[m - i] = v[m].x;
    g[k].x = siox_median(tmp, j - i);
    for (size_t m = i; m < j; m++) tmp[m - i] = v[m].y;
    g[k++].y = siox_median(tmp, j - i);
    i = j;
  }
  return k;
}

/* Theil-Sen over the groups: the median of the pairwise slopes, then the
 * median intercept; robust to the slow node's samples among the peers. A
 * negative term is clamped (then the other is refitted alone). */
static bool theil_sen(const struct point *g, size_t k, double *tmp, double *a, double *b) {
  size_t m = 0;
  for (size_t i = 0; i < k; i++)
    for (size_t j = i + 1; j < k; j++)
      if (g[j].x > g[i].x) tmp[m++] = (g[j].y - g[i].y) / (g[j].x - g[i].x);
  if (m == 0) return false;
  *b = fmax(0, siox_median(tmp, m));
  for (size_t i = 0; i < k; i++) tmp[i] = g[i].y - *b * g[i].x;
  *a = siox_median(tmp, k);
  if (*a < 0) {
    *a = 0;
    for (size_t i = 0; i < k; i++) tmp[i] = g[i].y / g[i].x;
    *b = siox_median(tmp, k);
  }
  return *a > 0 || *b > 0;
}

bool siox_line_fit(const double *x, const double *y, size_t k, double *a, double *b) {
  struct point g[LINE_POINTS];
  double tmp[LINE_POINTS * LINE_POINTS];
  if (k > LINE_POINTS) k = LINE_POINTS;
  for (size_t i = 0; i < k; i++) g[i] = (struct point){x[i], y[i]};
  return theil_sen(g, k, tmp, a, b);
}

/* Fits the peers' line (seconds = a + b * bytes) when they show >= 2
 * sizes; false (per-byte comparison) otherwise or on -ENOMEM. */
static bool fit_line(const struct siox_blame *b, const struct siox_blame_sample *s, size_t n, double *la,
                     double *lb) {
  struct point *v = malloc((n ? n : 1) * sizeof(*v)), g[LINE_POINTS];
  double *tmp = malloc((n > LINE_POINTS * LINE_POINTS ? n : LINE_POINTS * LINE_POINTS) * sizeof(*tmp));
  size_t m = 0;
  bool ok = false;
  for (size_t i = 0; v && tmp && i < n; i++)
    if (s[i].node_id != b->suspect->node_id && s[i].bytes > 0)
      v[m++] = (struct point){(double)s[i].bytes, (double)s[i].ns / 1e9};
  if (v && tmp && m > 1) {
    qsort(v, m, sizeof(*v), cmp_point);
    if (v[0].x != v[m - 1].x) ok = theil_sen(g, size_groups(v, m, g, tmp), tmp, la, lb);
  }
  free(v);
  free(tmp);
  return ok;
}

static int cmp_peer(const void *x, const void *y) {
  const struct siox_blame_peer *a = x, *b = y;
  return (a->median < b->median) - (a->median > b->median);
}

/* Groups the comparable peer values by node into b->peers (median each). */
static int group_peers(struct siox_blame *b, const struct siox_blame_sample *s, const bool *use, const double *val,
                       size_t n) {
  double *tmp = malloc((n ? n : 1) * sizeof(*tmp));
  bool *done = calloc(n ? n : 1, sizeof(*done));
  b->peers = calloc(n ? n : 1, sizeof(*b->peers));
  if (!tmp || !done || !b->peers) {
    free(tmp);
    free(done);
    return -ENOMEM;
  }
  for (size_t i = 0; i < n; i++) {
    if (!use[i] || done[i]) continue;
    size_t m = 0;
    for (size_t j = i; j < n; j++) {
      if (use[j] && !done[j] && s[j].node_id == s[i].node_id) {
        tmp[m++] = val[j];
        done[j] = true;
      }
    }
    b->peers[b->npeers++] =
        (struct siox_blame_peer){.node_id = s[i].node_id, .hwid = s[i].hwid, .iid = s[i].iid, .n = m,
                                 .median = siox_median(tmp, m)};
  }
  if (b->npeers > 1) qsort(b->peers, b->npeers, sizeof(*b->peers), cmp_peer);
  free(tmp);
  free(done);
  return 0;
}

/* Splits samples into peers (other nodes, comparable) and own (same node). */
static void classify(struct siox_blame *b, const struct siox_blame_sample *s, size_t n, bool *use, double *val,
                     double *own) {
  const struct siox_act *x = b->suspect;
  for (size_t i = 0; i < n; i++) {
    use[i] = false;
    if (s[i].aid == x->aid) continue;
    double v;
    if (!sample_value(b, s[i].ns, s[i].bytes, &v)) {
      if (s[i].node_id != x->node_id) b->peer_skipped++;
      continue;
    }
    if (s[i].node_id == x->node_id) {
      own[b->own_samples++] = v;
    } else {
      use[i] = true;
      val[i] = v;
      b->peer_samples++;
    }
  }
}

static void decide(struct siox_blame *b, double *pv) {
  b->peer_median = siox_median(pv, b->peer_samples);
  b->peer_p90 = siox_percentile(pv, b->peer_samples, b->rule.pct);
  /* Peers that took no time at all: any time of ours stands out. */
  b->ratio = b->peer_median > 0 ? b->value / b->peer_median : (b->value > 0 ? 1e9 : 1.0);
  if (b->peer_samples < b->rule.min_peers)
    b->verdict = SIOX_VERDICT_NO_PEERS;
  else if (b->ratio >= b->rule.ratio && b->value > b->peer_p90)
    b->verdict = SIOX_VERDICT_CULPRIT;
  else
    b->verdict = SIOX_VERDICT_NORMAL;
}

/* Per-byte comparison needs sizes on both sides; with none on the peers'
 * side compare plain times rather than judging against nothing. */
static bool any_peer_bytes(const struct siox_act *x, const struct siox_blame_sample *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i].node_id != x->node_id && s[i].bytes > 0) return true;
  return false;
}

int siox_blame_judge(struct siox_blame *b, const struct siox_blame_sample *s, size_t n) {
  const struct siox_act *x = b->suspect;
  b->per_byte = x->bytes > 0 && any_peer_bytes(x, s, n);
  b->line = b->per_byte && fit_line(b, s, n, &b->line_a_s, &b->line_b_s);
  sample_value(b, x->inclusive_ns, x->bytes, &b->value);
  bool *use = calloc(n ? n : 1, sizeof(*use));
  double *val = calloc(n ? n : 1, sizeof(*val));
  double *own = calloc(n ? n : 1, sizeof(*own));
  double *pv = calloc(n ? n : 1, sizeof(*pv));
  int rc = (use && val && own && pv) ? 0 : -ENOMEM;
  if (rc == 0) {
    classify(b, s, n, use, val, own);
    b->own_median = siox_median(own, b->own_samples);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
      if (use[i]) pv[m++] = val[i];
    decide(b, pv);
    rc = group_peers(b, s, use, val, n);
  }
  free(use);
  free(val);
  free(own);
  free(pv);
  return rc;
}

/* ---- choosing among the candidates -------------------------------------- */

/* Seconds the judged activity took beyond its peers' median for its bytes. */
static double excess_of(const struct siox_blame *b) {
  double d = b->value - b->peer_median;
  if (!b->per_byte) return d;
  return d * (b->line ? siox_blame_line_s(b, b->suspect->bytes) : (double)b->suspect->bytes);
}

/* Judges x as if it were the suspect; trial shares b's path (not owned). */
static int trial(const struct siox_blame *b, const struct siox_act *x, siox_blame_fetch_fn fetch, void *ctx,
                 struct siox_blame *out) {
  const struct siox_blame_sample *s = NULL;
  size_t n = 0;
  *out = (struct siox_blame){.rule = b->rule, .path = b->path, .npath = b->npath, .suspect = x};
  int rc = fetch(ctx, x, &s, &n);
  if (rc == 0) rc = siox_blame_judge(out, s, n);
  if (rc == 0 && out->verdict == SIOX_VERDICT_CULPRIT) out->excess_s = excess_of(out);
  return rc;
}

int siox_blame_judge_act(const struct siox_blame *b, const struct siox_act *x, siox_blame_fetch_fn fetch, void *ctx,
                         struct siox_blame *out) {
  return trial(b, x, fetch, ctx, out);
}

/* Makes the judged candidate c b's answer; c's peers move to b. */
static void adopt(struct siox_blame *b, struct siox_blame *c) {
  free(b->peers);
  const struct siox_act **path = b->path, **cands = b->cands;
  size_t npath = b->npath, ncands = b->ncands;
  *b = *c;
  b->path = path;
  b->npath = npath;
  b->cands = cands;
  b->ncands = ncands;
  b->suspect_idx = npath;
  for (size_t i = 0; i < npath; i++)
    if (path[i] == c->suspect) b->suspect_idx = i;
}

int siox_blame_find(struct siox_blame *b, siox_blame_fetch_fn fetch, void *ctx) {
  struct siox_blame best = {0}, t;
  int rc = 0;
  for (size_t i = 0; i < b->ncands && rc == 0; i++) {
    if ((rc = trial(b, b->cands[i], fetch, ctx, &t)) == 0 && t.verdict == SIOX_VERDICT_CULPRIT &&
        (best.suspect == NULL || t.excess_s > best.excess_s)) {
      free(best.peers);
      best = t;
    } else {
      free(t.peers);
    }
  }
  if (rc == 0 && best.suspect) {
    adopt(b, &best);
    return 0;
  }
  free(best.peers);
  if (rc != 0) return rc;
  if ((rc = trial(b, b->suspect, fetch, ctx, &t)) == 0)
    adopt(b, &t);
  else
    free(t.peers);
  return rc;
}

void siox_blame_release(struct siox_blame *b) {
  free(b->path);
  free(b->peers);
  free(b->cands);
  b->path = NULL;
  b->peers = NULL;
  b->cands = NULL;
}
