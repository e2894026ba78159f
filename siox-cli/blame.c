/*
 * Blame for one call, in memory (blame.h). The rules live here and in
 * README.md "Blame": follow the critical path while the child still holds
 * most of the root's time; the last such activity is the suspect; it is the
 * culprit when its time (per byte where sizes are known) is several times its
 * peers' median and beyond their high percentile.
 */
#include "blame.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int siox_blame_walk(const struct siox_tree *t, const struct siox_blame_rule *rule, struct siox_blame *out) {
  memset(out, 0, sizeof(*out));
  out->rule = *rule;
  if (!t->finished || !t->root) return -EINVAL;
  size_t n = 0;
  for (const struct siox_act *a = t->root; a; a = siox_act_critical_child(a)) n++;
  out->path = calloc(n, sizeof(*out->path));
  if (!out->path) return -ENOMEM;
  double total = (double)t->root->inclusive_ns;
  bool holding = true;
  for (const struct siox_act *a = t->root; a; a = siox_act_critical_child(a)) {
    /* Stop at the first child below the share: descendants' intervals lie
     * (mostly) inside their parent's, so nothing deeper holds more. */
    if (holding && (out->npath == 0 || (double)a->inclusive_ns >= rule->share * total))
      out->suspect_idx = out->npath;
    else
      holding = false;
    out->path[out->npath++] = a;
  }
  out->suspect = out->path[out->suspect_idx];
  return 0;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

double siox_median(double *v, size_t n) {
  if (n == 0) return 0;
  qsort(v, n, sizeof(*v), cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double siox_percentile(double *v, size_t n, double p) {
  if (n == 0) return 0;
  qsort(v, n, sizeof(*v), cmp_double);
  size_t rank = (size_t)ceil(p * (double)n);
  return v[rank ? rank - 1 : 0];
}

/* The compared value of one sample: seconds, or seconds per byte. Returns
 * false when per-byte comparison needs a byte count the sample lacks. */
static bool sample_value(bool per_byte, int64_t ns, int64_t bytes, double *out) {
  if (per_byte && bytes <= 0) return false;
  *out = per_byte ? (double)ns / 1e9 / (double)bytes : (double)ns / 1e9;
  return true;
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
    if (!sample_value(b->per_byte, s[i].ns, s[i].bytes, &v)) {
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
  sample_value(b->per_byte, x->inclusive_ns, x->bytes, &b->value);
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

void siox_blame_release(struct siox_blame *b) {
  free(b->path);
  free(b->peers);
  b->path = NULL;
  b->peers = NULL;
}
