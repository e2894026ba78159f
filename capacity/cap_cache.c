/*
 * The client node's page cache of the simulation (cap_cache.h). Extents are
 * kept as inserted (a newer one cuts what it overlaps out of older ones), so
 * least-recently-used eviction works at the granularity of the operations
 * that filled the cache, as the kernel's page reclaim ages pages by use.
 * Lookups scan every extent: the traces simulated here hold thousands of
 * operations, not millions.
 */
#include "cap_cache.h"

#include <errno.h>
#include <stdlib.h>

static uint64_t page_down(uint64_t x) { return x & ~(uint64_t)(CAP_CACHE_PAGE - 1); }
static uint64_t page_up(uint64_t x) { return page_down(x + CAP_CACHE_PAGE - 1); }

static int push(struct cap_cache *c, struct cap_cache_ext x) {
  if (c->n == c->cap) {
    size_t nc = c->cap ? 2 * c->cap : 64;
    struct cap_cache_ext *e = realloc(c->e, nc * sizeof(*e));
    if (!e) return -ENOMEM;
    c->e = e;
    c->cap = nc;
  }
  c->e[c->n++] = x;
  c->bytes += x.hi - x.lo;
  return 0;
}

static void drop(struct cap_cache *c, size_t i) {
  c->bytes -= c->e[i].hi - c->e[i].lo;
  c->e[i] = c->e[--c->n];
}

static int same_file(const struct cap_cache_ext *x, uint32_t copy, uint32_t fid) {
  return x->copy == copy && x->fid == fid;
}

/* Removes [lo, hi) of (copy, fid) from every extent. */
static int cut(struct cap_cache *c, uint32_t copy, uint32_t fid, uint64_t lo, uint64_t hi) {
  for (size_t i = 0; i < c->n;) {
    struct cap_cache_ext *x = &c->e[i];
    if (!same_file(x, copy, fid) || x->hi <= lo || x->lo >= hi) {
      i++;
      continue;
    }
    if (x->lo >= lo && x->hi <= hi) { /* inside: gone (the last moves here: look at i again) */
      drop(c, i);
      continue;
    }
    if (x->lo < lo && x->hi > hi) { /* around: split in two */
      struct cap_cache_ext tail = *x;
      tail.lo = hi;
      c->bytes -= x->hi - lo; /* push adds the tail back */
      x->hi = lo;
      if (push(c, tail) < 0) return -ENOMEM;
      i++;
      continue;
    }
    uint64_t before = x->hi - x->lo;
    if (x->lo < lo) x->hi = lo;
    else x->lo = hi;
    c->bytes -= before - (x->hi - x->lo);
    i++;
  }
  return 0;
}

/* Least recently used out until the cache fits; the newest extent (the one
 * just inserted) loses its lowest pages when it alone is too large. */
static void evict(struct cap_cache *c) {
  while (c->bytes > c->limit && c->n) {
    size_t old = 0;
    for (size_t i = 1; i < c->n; i++)
      if (c->e[i].stamp < c->e[old].stamp) old = i;
    uint64_t over = c->bytes - c->limit, len = c->e[old].hi - c->e[old].lo;
    if (c->n == 1 && len > over) {
      c->e[old].lo = page_up(c->e[old].lo + over);
      if (c->e[old].lo >= c->e[old].hi) drop(c, old);
      else c->bytes -= len - (c->e[old].hi - c->e[old].lo);
      continue;
    }
    drop(c, old);
  }
}

int cap_cache_insert(struct cap_cache *c, uint32_t copy, uint32_t fid, uint64_t lo, uint64_t hi, int is_write) {
  if (!c->limit) return 0;
  uint64_t a = is_write ? page_up(lo) : page_down(lo), b = is_write ? page_down(hi) : page_up(hi);
  if (a >= b) return 0;
  if (cut(c, copy, fid, a, b) < 0) return -ENOMEM;
  if (push(c, (struct cap_cache_ext){copy, fid, a, b, ++c->clock}) < 0) return -ENOMEM;
  evict(c);
  return 0;
}

static int by_lo(const void *pa, const void *pb) {
  const struct cap_cache_ext *a = *(const struct cap_cache_ext *const *)pa, *b = *(const struct cap_cache_ext *const *)pb;
  return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static int add_gap(struct cap_gap **gaps, size_t *ngaps, size_t *capg, uint64_t lo, uint64_t hi) {
  if (lo >= hi) return 0;
  if (*ngaps == *capg) {
    size_t nc = *capg ? 2 * *capg : 4;
    struct cap_gap *g = realloc(*gaps, nc * sizeof(*g));
    if (!g) return -ENOMEM;
    *gaps = g;
    *capg = nc;
  }
  (*gaps)[(*ngaps)++] = (struct cap_gap){lo, hi};
  return 0;
}

int cap_cache_lookup(struct cap_cache *c, uint32_t copy, uint32_t fid, uint64_t lo, uint64_t hi,
                     struct cap_gap **gaps, size_t *ngaps, size_t *capg, uint64_t *missing) {
  *ngaps = 0;
  *missing = 0;
  size_t k = 0;
  struct cap_cache_ext **hit = NULL;
  uint64_t a = page_down(lo), b = page_up(hi);
  for (size_t i = 0; i < c->n; i++)
    if (same_file(&c->e[i], copy, fid) && c->e[i].lo < b && c->e[i].hi > a) k++;
  if (k && !(hit = malloc(k * sizeof(*hit)))) return -ENOMEM;
  k = 0;
  for (size_t i = 0; i < c->n; i++)
    if (same_file(&c->e[i], copy, fid) && c->e[i].lo < b && c->e[i].hi > a) hit[k++] = &c->e[i];
  if (k) qsort(hit, k, sizeof(*hit), by_lo); /* extents of one file never overlap */
  uint64_t at = lo;
  int rc = 0;
  for (size_t i = 0; i < k && rc == 0; i++) {
    hit[i]->stamp = ++c->clock;
    if (hit[i]->lo > at) rc = add_gap(gaps, ngaps, capg, at, hit[i]->lo < hi ? hit[i]->lo : hi);
    if (hit[i]->hi > at) at = hit[i]->hi;
  }
  if (rc == 0 && at < hi) rc = add_gap(gaps, ngaps, capg, at, hi);
  free(hit);
  for (size_t i = 0; i < *ngaps; i++) *missing += (*gaps)[i].hi - (*gaps)[i].lo;
  return rc;
}

void cap_cache_free(struct cap_cache *c) {
  free(c->e);
  c->e = NULL;
  c->n = c->cap = 0;
  c->bytes = 0;
}
