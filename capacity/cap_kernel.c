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

/* The client's kernel_call_ns of class cls: the outside time over the calls. */
static void one_class(siox_cap_model *m, uint32_t c, uint32_t cls, const struct siox_cap_posix_op *p, size_t np,
                     const struct iv *busy, size_t nbusy, struct iv *buf) {
  size_t k = 0;
  for (size_t i = 0; i < np; i++) {
    if (p[i].comp != c || p[i].cls != cls || p[i].end_ns <= p[i].start_ns) continue;
    buf[k++] = (struct iv){p[i].start_ns, p[i].end_ns};
  }
  if (!k) return;
  size_t calls = k;
  k = merge(buf, k);
  m->comp[c].kernel_call_ns[cls] = (double)outside(buf, k, busy, nbusy) / (double)calls;
}

int siox_cap_model_kernel(siox_cap_model *m, const struct siox_cap_posix_op *p, size_t np,
                          const struct siox_cap_sample *s, size_t n) {
  for (size_t i = 0; i < np; i++)
    if (p[i].comp >= m->ncomp || m->comp[p[i].comp].kind != SIOX_CAP_CLIENT ||
        (p[i].cls != SIOX_CAP_READ && p[i].cls != SIOX_CAP_WRITE))
      return -EINVAL;
  struct iv *busy = malloc((n ? n : 1) * sizeof(*busy)), *buf = malloc((np ? np : 1) * sizeof(*buf));
  if (!busy || !buf) {
    free(busy);
    free(buf);
    return -ENOMEM;
  }
  for (uint32_t c = 0; c < m->ncomp; c++) {
    if (m->comp[c].kind != SIOX_CAP_CLIENT) continue;
    size_t nb = 0; /* when the client had a request in GlusterFS (any class) */
    for (size_t i = 0; i < n; i++)
      if (s[i].comp == c) busy[nb++] = (struct iv){s[i].start_ns, s[i].start_ns + (s[i].span_ns > 0 ? s[i].span_ns : s[i].ns)};
    nb = merge(busy, nb);
    one_class(m, c, SIOX_CAP_READ, p, np, busy, nb, buf);
    one_class(m, c, SIOX_CAP_WRITE, p, np, busy, nb, buf);
  }
  free(busy);
  free(buf);
  return 0;
}
