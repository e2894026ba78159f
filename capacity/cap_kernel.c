/*
 * The client node's part above GlusterFS (siox_cap_model_kernel in
 * siox_capacity.h; README "The kernel's part"). A POSIX write of 1 MiB on
 * the volume is 8 FUSE requests, and between them the kernel copies the
 * pages, queues the next request, and the writer and the GlusterFS client's
 * threads wait for a CPU. None of that is in a client or brick activity;
 * the trace shows it as time a POSIX call of the volume was in progress and
 * no request of the client was. Per call (not per byte: README "The
 * kernel's part"), it is what each read/write operation's first request
 * adds to its client stage.
 */
#include <errno.h>
#include <stdlib.h>

#include "siox_capacity.h"

struct iv {
  int64_t lo, hi;
};

static int by_lo(const void *a, const void *b) {
  int64_t x = ((const struct iv *)a)->lo, y = ((const struct iv *)b)->lo;
  return (x > y) - (x < y);
}

/* Sorts and merges v[0..n) into disjoint intervals in place; returns how many. */
static size_t merge(struct iv *v, size_t n) {
  if (!n) return 0;
  qsort(v, n, sizeof(*v), by_lo);
  size_t k = 0;
  for (size_t i = 1; i < n; i++) {
    if (v[i].lo <= v[k].hi) {
      if (v[i].hi > v[k].hi) v[k].hi = v[i].hi;
    } else {
      v[++k] = v[i];
    }
  }
  return k + 1;
}

/* Time in the union a not covered by the union b (both merged). */
static int64_t outside(const struct iv *a, size_t na, const struct iv *b, size_t nb) {
  int64_t t = 0;
  size_t j = 0;
  for (size_t i = 0; i < na; i++) {
    int64_t lo = a[i].lo, cov = 0;
    while (j < nb && b[j].hi <= lo) j++;
    for (size_t k = j; k < nb && b[k].lo < a[i].hi; k++) {
      int64_t x = b[k].lo > lo ? b[k].lo : lo, y = b[k].hi < a[i].hi ? b[k].hi : a[i].hi;
      if (y > x) cov += y - x;
    }
    t += a[i].hi - a[i].lo - cov;
  }
  return t;
}

/* A breakpoint of the sweep: a call of the class starting (+1) or ending
 * (-1), or a busy interval's edge (0: only splits the time). */
struct bp {
  int64_t t;
  int d;
};

static int by_t(const void *a, const void *b) {
  int64_t x = ((const struct bp *)a)->t, y = ((const struct bp *)b)->t;
  return (x > y) - (x < y);
}

/* F at each of the nt distinct times t[]: the outside time up to there,
 * each moment shared equally by the calls in progress (so a stretch two
 * overlapping calls both wait through counts once, half to each). */
static size_t share_curve(struct bp *e, size_t ne, const struct iv *busy, size_t nbusy, int64_t *t, double *F) {
  qsort(e, ne, sizeof(*e), by_t);
  size_t nt = 0, j = 0;
  int active = 0;
  double acc = 0;
  for (size_t i = 0; i < ne;) {
    int64_t now = e[i].t;
    if (nt) { /* the stretch [t[nt-1], now) had `active` calls */
      int64_t lo = t[nt - 1];
      if (active > 0) {
        struct iv seg = {lo, now};
        while (j < nbusy && busy[j].hi <= lo) j++;
        acc += (double)outside(&seg, 1, busy + j, nbusy - j) / active;
      }
    }
    t[nt] = now;
    F[nt++] = acc;
    for (; i < ne && e[i].t == now; i++) active += e[i].d;
  }
  return nt;
}

static double curve_at(const int64_t *t, const double *F, size_t nt, int64_t x) {
  size_t lo = 0, hi = nt; /* t[] holds every call's ends: an exact hit */
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (t[mid] <= x) lo = mid;
    else hi = mid;
  }
  return F[lo];
}

static int by_start(const void *a, const void *b) {
  const struct siox_cap_sample *x = *(const struct siox_cap_sample *const *)a, *y = *(const struct siox_cap_sample *const *)b;
  return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

/* A call of client c's class cls that took time: the calls the kernel part
 * is taken over (one_class and per_brick walk them in the same order). */
static int is_call(const struct siox_cap_posix_op *o, uint32_t c, uint32_t cls) {
  return o->comp == c && o->cls == cls && o->end_ns > o->start_ns;
}

/* The brick a call's requests went to: the serving brick of the first of
 * r (the client's reads with a known brick, by start) that started in the
 * call, -1 when none did. */
static int64_t call_brick(const struct siox_cap_sample *const *r, size_t nr, int64_t lo, int64_t hi) {
  size_t a = 0, b = nr;
  while (a < b) {
    size_t mid = a + (b - a) / 2;
    if (r[mid]->start_ns < lo) a = mid + 1;
    else b = mid;
  }
  return a < nr && r[a]->start_ns <= hi ? (int64_t)r[a]->via - 1 : -1;
}

/* Each brick's kernel_fit[READ] and kernel_call_ns[READ]: the robust
 * estimate over the shares y of client c's read calls whose requests it
 * served (README "The read-back's kernel part": behind a slow brick's
 * requests the kernel's work is hidden, behind a healthy one's it is not). */
static int per_brick(siox_cap_model *m, uint32_t c, const struct siox_cap_posix_op *p, size_t np, const double *y,
                     const struct siox_cap_sample *s, size_t n) {
  size_t nr = 0, k = 0;
  for (size_t i = 0; i < n; i++) nr += s[i].comp == c && s[i].cls == SIOX_CAP_READ && s[i].via;
  const struct siox_cap_sample **r = malloc((nr ? nr : 1) * sizeof(*r));
  int64_t *at = malloc((np ? np : 1) * sizeof(*at));
  double *x = calloc(np ? np : 1, sizeof(*x)), *yb = malloc((np ? np : 1) * sizeof(*yb));
  int rc = -ENOMEM;
  if (!r || !at || !x || !yb) goto out;
  nr = 0;
  for (size_t i = 0; i < n; i++)
    if (s[i].comp == c && s[i].cls == SIOX_CAP_READ && s[i].via) r[nr++] = &s[i];
  qsort(r, nr, sizeof(*r), by_start);
  for (size_t i = 0; i < np; i++)
    if (is_call(&p[i], c, SIOX_CAP_READ))
      at[k++] = call_brick(r, nr, p[i].start_ns, p[i].end_ns);
  rc = 0;
  for (uint32_t b = 0; b < m->ncomp && rc == 0; b++) {
    if (m->comp[b].kind != SIOX_CAP_BRICK) continue;
    size_t nb = 0;
    for (size_t i = 0; i < k; i++)
      if (at[i] == (int64_t)b) yb[nb++] = y[i];
    if (!nb) continue;
    rc = siox_cap_fit_robust(x, yb, nb, &m->comp[b].kernel_fit[SIOX_CAP_READ]);
    if (rc >= 0) rc = 0, m->comp[b].kernel_call_ns[SIOX_CAP_READ] = m->comp[b].kernel_fit[SIOX_CAP_READ].a_ns;
  }
out:
  free(r);
  free(at);
  free(x);
  free(yb);
  return rc;
}

/* The client's kernel_fit and kernel_call_ns of class cls: each call's
 * share of the outside time, fitted robustly (README "The kernel's part":
 * a disturbed call's stall is left out of the estimate and kept apart as
 * the fit's excess_ns, its mean over all calls); for reads, of the main
 * client, each brick's too (per_brick). */
static int one_class(siox_cap_model *m, uint32_t c, uint32_t cls, const struct siox_cap_posix_op *p, size_t np,
                     const struct iv *busy, size_t nbusy, const struct siox_cap_sample *s, size_t n_s) {
  size_t k = 0;
  for (size_t i = 0; i < np; i++)
    if (is_call(&p[i], c, cls)) k++;
  if (!k) return 0;
  size_t ne = 2 * k + 2 * nbusy;
  struct bp *e = malloc(ne * sizeof(*e));
  int64_t *t = malloc(ne * sizeof(*t));
  double *F = malloc(ne * sizeof(*F)), *x = calloc(k, sizeof(*x)), *y = malloc(k * sizeof(*y));
  int rc = -ENOMEM;
  if (!e || !t || !F || !x || !y) goto out;
  ne = 0;
  for (size_t i = 0; i < np; i++) {
    if (!is_call(&p[i], c, cls)) continue;
    e[ne++] = (struct bp){p[i].start_ns, 1};
    e[ne++] = (struct bp){p[i].end_ns, -1};
  }
  for (size_t i = 0; i < nbusy; i++) {
    e[ne++] = (struct bp){busy[i].lo, 0};
    e[ne++] = (struct bp){busy[i].hi, 0};
  }
  size_t nt = share_curve(e, ne, busy, nbusy, t, F), n = 0;
  for (size_t i = 0; i < np; i++)
    if (is_call(&p[i], c, cls))
      y[n++] = curve_at(t, F, nt, p[i].end_ns) - curve_at(t, F, nt, p[i].start_ns);
  struct siox_cap_fit *f = &m->comp[c].kernel_fit[cls];
  if ((rc = siox_cap_fit_robust(x, y, n, f)) < 0) goto out;
  m->comp[c].kernel_call_ns[cls] = f->a_ns;
  rc = 0;
  if (cls == SIOX_CAP_READ && (int64_t)c == siox_cap_model_main_client(m)) rc = per_brick(m, c, p, np, y, s, n_s);
out:
  free(e);
  free(t);
  free(F);
  free(x);
  free(y);
  return rc;
}

int siox_cap_model_kernel(siox_cap_model *m, const struct siox_cap_posix_op *p, size_t np,
                          const struct siox_cap_sample *s, size_t n) {
  for (size_t i = 0; i < np; i++)
    if (p[i].comp >= m->ncomp || m->comp[p[i].comp].kind != SIOX_CAP_CLIENT ||
        (p[i].cls != SIOX_CAP_READ && p[i].cls != SIOX_CAP_WRITE))
      return -EINVAL;
  struct iv *busy = malloc((n ? n : 1) * sizeof(*busy));
  if (!busy) return -ENOMEM;
  int rc = 0;
  for (uint32_t c = 0; c < m->ncomp; c++) {
    if (m->comp[c].kind != SIOX_CAP_CLIENT) continue;
    size_t nb = 0; /* when the client had a request in GlusterFS (any class) */
    for (size_t i = 0; i < n; i++)
      if (s[i].comp == c) busy[nb++] = (struct iv){s[i].start_ns, s[i].start_ns + (s[i].span_ns > 0 ? s[i].span_ns : s[i].ns)};
    nb = merge(busy, nb);
    if ((rc = one_class(m, c, SIOX_CAP_READ, p, np, busy, nb, s, n)) < 0 ||
        (rc = one_class(m, c, SIOX_CAP_WRITE, p, np, busy, nb, s, n)) < 0)
      break;
  }
  free(busy);
  return rc;
}

double siox_cap_kernel_ns(const siox_cap_model *m, uint32_t c, int64_t brick, int cls) {
  if (!m->kernel_path) return 0;
  const struct siox_cap_comp *k = &m->comp[c];
  if (cls == SIOX_CAP_READ && !m->kernel_pooled && brick >= 0 && (size_t)brick < m->ncomp &&
      m->comp[brick].kernel_fit[cls].n)
    k = &m->comp[brick];
  return k->kernel_call_ns[cls] + (m->with_delays || m->kernel_mean ? k->kernel_fit[cls].excess_ns : 0);
}
