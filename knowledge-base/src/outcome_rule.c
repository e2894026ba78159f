/*
 * The outcome rule of an applied hint set: ratio of medians of the time
 * per byte in the affected calls, runs without the set over runs with it,
 * with a two-stage bootstrap interval. A set is judged slower or faster
 * only when the whole interval lies on one side of 1.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "outcome_rule.h"

/* xorshift64*: small, seeded, the same sequence everywhere. */
static uint64_t next_rand(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ULL;
}

static size_t pick(uint64_t *s, size_t n) { return (size_t)(next_rand(s) % n); }

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of v[n] (sorts v). */
static double median(double *v, size_t n) {
  qsort(v, n, sizeof *v, by_value);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A run's figure over the calls idx[n] (NULL: all of them, in order). */
static double run_figure(const struct kb_run *r, const size_t *idx, size_t n, int per_byte) {
  double t = 0, b = 0;
  for (size_t i = 0; i < n; i++) {
    const struct kb_call *c = &r->calls[idx ? idx[i] : i];
    t += c->s;
    b += per_byte ? c->bytes : 1;
  }
  return b > 0 ? t / b : 0;
}

/* The runs of one side that have calls. */
struct side {
  const struct kb_run **runs;
  size_t n, calls, max_calls;
};

static int side_of(const struct kb_run *r, size_t n, struct side *s) {
  *s = (struct side){0};
  s->runs = malloc((n ? n : 1) * sizeof *s->runs);
  if (!s->runs) return -1;
  for (size_t i = 0; i < n; i++) {
    if (!r[i].n) continue;
    s->runs[s->n++] = &r[i];
    s->calls += r[i].n;
    if (r[i].n > s->max_calls) s->max_calls = r[i].n;
  }
  return 0;
}

static int any_bytes(const struct side *s) {
  for (size_t i = 0; i < s->n; i++)
    for (size_t k = 0; k < s->runs[i]->n; k++)
      if (s->runs[i]->calls[k].bytes > 0) return 1;
  return 0;
}

/* The side's median figure; resampled when rng is given. fig[s->n] and
 * idx[s->max_calls] are scratch. */
static double side_figure(const struct side *s, int per_byte, uint64_t *rng, double *fig, size_t *idx) {
  for (size_t i = 0; i < s->n; i++) {
    const struct kb_run *r = s->runs[rng ? pick(rng, s->n) : i];
    if (!rng) {
      fig[i] = run_figure(r, NULL, r->n, per_byte);
      continue;
    }
    for (size_t k = 0; k < r->n; k++) idx[k] = pick(rng, r->n);
    fig[i] = run_figure(r, idx, r->n, per_byte);
  }
  return median(fig, s->n);
}

static int bootstrap(const struct side *w, const struct side *wo, int per_byte, struct kb_outcome *o) {
  size_t nfig = w->n > wo->n ? w->n : wo->n, ncalls = w->max_calls > wo->max_calls ? w->max_calls : wo->max_calls;
  double *fig = malloc(nfig * sizeof *fig), *ratio = malloc(KB_BOOTSTRAP_ROUNDS * sizeof *ratio);
  size_t *idx = malloc(ncalls * sizeof *idx), n = 0;
  int rc = -1;
  if (!fig || !ratio || !idx) goto out;
  double with = side_figure(w, per_byte, NULL, fig, idx), without = side_figure(wo, per_byte, NULL, fig, idx);
  o->speedup = with > 0 ? without / with : 1;
  uint64_t rng = 0x9E3779B97F4A7C15ULL;
  for (int b = 0; b < KB_BOOTSTRAP_ROUNDS; b++) {
    double x = side_figure(w, per_byte, &rng, fig, idx), y = side_figure(wo, per_byte, &rng, fig, idx);
    if (x > 0) ratio[n++] = y / x;
  }
  if (n == 0) {
    o->ci_low = o->ci_high = o->speedup;
  } else {
    qsort(ratio, n, sizeof *ratio, by_value);
    o->ci_low = ratio[(size_t)floor(0.025 * (double)(n - 1))];
    o->ci_high = ratio[(size_t)ceil(0.975 * (double)(n - 1))];
  }
  o->verdict = o->ci_low > 1 ? KB_FASTER : o->ci_high < 1 ? KB_SLOWER : KB_NO_CHANGE;
  rc = 0;
out:
  free(fig);
  free(ratio);
  free(idx);
  return rc;
}

int kb_outcome_judge(const struct kb_run *with, size_t nw, const struct kb_run *without, size_t nwo,
                     struct kb_outcome *out) {
  struct side w, wo;
  memset(out, 0, sizeof *out);
  out->verdict = KB_NOT_MEASURED;
  out->speedup = out->ci_low = out->ci_high = NAN;
  if (side_of(with, nw, &w) < 0 || side_of(without, nwo, &wo) < 0) {
    free(w.runs);
    return -1;
  }
  out->runs_with = w.n, out->runs_without = wo.n;
  out->calls_with = w.calls, out->calls_without = wo.calls;
  out->per_byte = any_bytes(&w) || any_bytes(&wo);
  int rc = w.n && wo.n ? bootstrap(&w, &wo, out->per_byte, out) : 0;
  free(w.runs);
  free(wo.runs);
  return rc;
}

const char *kb_verdict_name(enum kb_verdict v) {
  switch (v) {
  case KB_NO_CHANGE: return "no_change";
  case KB_FASTER: return "faster";
  case KB_SLOWER: return "slower";
  default: return "not_measured";
  }
}
