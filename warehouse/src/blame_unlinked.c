/*
 * The time of a call no linked component covers (blame_unlinked.h).
 */
#include "blame_unlinked.h"

#include <errno.h>
#include <stdlib.h>

static size_t count(const struct siox_act *a) {
  size_t n = 1;
  for (size_t i = 0; i < a->nchildren; i++) n += count(a->children[i]);
  return n;
}

/* The intervals of the activities below an implicit link (the first
 * such activity on each branch and everything under it: a brick's work
 * lies inside its client's, so its subtree adds nothing but is harmless). */
static void remote(const struct siox_act *a, bool below, struct siox_interval *iv, size_t *n) {
  below = below || (a->depth > 0 && a->link == SIOX_LINK_IMPLICIT);
  if (below) iv[(*n)++] = (struct siox_interval){a->start_ns, a->end_ns};
  for (size_t i = 0; i < a->nchildren; i++) remote(a->children[i], below, iv, n);
}

static int cmp_iv(const void *x, const void *y) {
  const struct siox_interval *a = x, *b = y;
  return (a->start > b->start) - (a->start < b->start);
}

/* The complement of the union of iv[0..n) inside [start, end), into out. */
static size_t complement(int64_t start, int64_t end, struct siox_interval *iv, size_t n, struct siox_interval *out) {
  qsort(iv, n, sizeof(*iv), cmp_iv);
  size_t m = 0;
  int64_t at = start; /* covered up to here */
  for (size_t i = 0; i < n && at < end; i++) {
    int64_t s = iv[i].start < start ? start : iv[i].start, e = iv[i].end > end ? end : iv[i].end;
    if (e <= at) continue;
    if (s > at) out[m++] = (struct siox_interval){at, s};
    at = e;
  }
  if (at < end) out[m++] = (struct siox_interval){at, end};
  return m;
}

int siox_unlinked_find(const struct siox_act *root, struct siox_unlinked *out) {
  *out = (struct siox_unlinked){.start_ns = root->start_ns, .total_ns = root->end_ns > root->start_ns ? root->end_ns - root->start_ns : 0};
  size_t n = count(root), k = 0;
  struct siox_interval *iv = malloc(n * sizeof(*iv));
  out->gaps = malloc((n + 1) * sizeof(*out->gaps));
  if (!iv || !out->gaps) {
    free(iv);
    siox_unlinked_release(out);
    return -ENOMEM;
  }
  remote(root, false, iv, &k);
  out->linked = k;
  if (out->total_ns > 0) out->ngaps = complement(root->start_ns, root->end_ns, iv, k, out->gaps);
  for (size_t i = 0; i < out->ngaps; i++) out->unlinked_ns += out->gaps[i].end - out->gaps[i].start;
  free(iv);
  return 0;
}

const struct siox_interval *siox_unlinked_longest(const struct siox_unlinked *u) {
  const struct siox_interval *best = NULL;
  for (size_t i = 0; i < u->ngaps; i++)
    if (!best || u->gaps[i].end - u->gaps[i].start > best->end - best->start) best = &u->gaps[i];
  return best;
}

void siox_unlinked_release(struct siox_unlinked *u) {
  free(u->gaps);
  u->gaps = NULL;
  u->ngaps = 0;
}

bool siox_unlinked_outweighs(const struct siox_unlinked *u, int64_t charged_ns) {
  return 2 * u->unlinked_ns >= u->total_ns && u->unlinked_ns > 2 * charged_ns;
}
