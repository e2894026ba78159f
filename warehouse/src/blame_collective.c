/*
 * Blame through a collective call: the rule (blame_collective.h).
 */
#include "blame_collective.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static bool is_collective(const struct siox_act *a) {
  for (size_t i = 0; i < a->nattrs; i++) {
    const struct siox_attr *x = &a->attrs[i];
    if (strcmp(x->name, "mpi/collective") == 0) return x->kind == SIOX_AV_U64 ? x->v.u == 1 : x->v.i == 1;
  }
  return false;
}

const struct siox_act *siox_collective_on_path(const struct siox_blame *b) {
  for (size_t i = b->npath; i-- > 0;)
    if (is_collective(b->path[i])) return b->path[i];
  return NULL;
}

static int64_t overlap_ns(const struct siox_act *c, const struct siox_sibling *s) {
  int64_t from = c->start_ns > s->start_ns ? c->start_ns : s->start_ns;
  int64_t to = c->end_ns < s->end_ns ? c->end_ns : s->end_ns;
  return to > from ? to - from : 0;
}

/* Is a a better pick than b (both overlap and made I/O)? */
static bool better(const struct siox_act *c, const struct siox_sibling *a, const struct siox_sibling *b) {
  int64_t oa = overlap_ns(c, a), ob = overlap_ns(c, b);
  if (oa != ob) return oa > ob;
  if (a->io_ns != b->io_ns) return a->io_ns > b->io_ns;
  return a->aid < b->aid;
}

long siox_collective_pick(const struct siox_act *c, const struct siox_sibling *s, size_t n) {
  long best = -1;
  for (size_t i = 0; i < n; i++) {
    if (s[i].aid == c->aid || s[i].io_ns <= 0 || overlap_ns(c, &s[i]) == 0) continue;
    if (best < 0 || better(c, &s[i], &s[best])) best = (long)i;
  }
  return best;
}

/* ---- waiting in a collective ------------------------------------------ */

static const char *const by_definition[] = {"MPI_File_open",     "MPI_File_close",         "MPI_File_set_view",
                                            "MPI_File_set_size", "MPI_File_set_info",      "MPI_File_preallocate",
                                            "MPI_File_sync",     "MPI_File_set_atomicity", NULL};

bool siox_collective_call(const struct siox_act *a) {
  if (is_collective(a)) return true;
  for (const char *const *n = by_definition; *n; n++)
    if (strcmp(a->name, *n) == 0) return true;
  return false;
}

static bool reaches_component(const struct siox_act *a) {
  for (size_t i = 0; i < a->nchildren; i++)
    if (a->children[i]->link == SIOX_LINK_IMPLICIT || reaches_component(a->children[i])) return true;
  return false;
}

static void waits(const struct siox_act *a, const struct siox_act **out, size_t cap, size_t *n) {
  if (a->depth > 0 && a->link == SIOX_LINK_IMPLICIT) return; /* another process's work */
  if (siox_collective_call(a) && !reaches_component(a)) {
    if (*n < cap) out[*n] = a;
    (*n)++; /* counted beyond cap too: the caller sizes out by it */
    return;
  }
  for (size_t i = 0; i < a->nchildren; i++) waits(a->children[i], out, cap, n);
}

size_t siox_collective_waits(const struct siox_act *root, const struct siox_act **out, size_t cap) {
  size_t n = 0;
  waits(root, out, cap, &n);
  return n;
}

/* The latest start of a sibling in the origin's process: until then that
 * rank had not entered the collective (0: the origin is no sibling). */
static int64_t arrival(const struct siox_served *r, const struct siox_sibling *s, size_t n) {
  int64_t at = 0;
  for (size_t i = 0; i < n; i++)
    if (s[i].pid == r->pid && r->host && strcmp(s[i].host, r->host) == 0 && s[i].start_ns > at) at = s[i].start_ns;
  return at;
}

static int cmp_iv(const void *x, const void *y) {
  const struct siox_interval *a = x, *b = y;
  return (a->start > b->start) - (a->start < b->start);
}

/* Length of the union of iv[0..k) intersected with the stretches of u. */
static int64_t union_in(struct siox_interval *iv, size_t k, const struct siox_unlinked *u) {
  qsort(iv, k, sizeof(*iv), cmp_iv);
  int64_t total = 0, at = INT64_MIN;
  for (size_t i = 0; i < k; i++) {
    int64_t from = iv[i].start > at ? iv[i].start : at, to = iv[i].end;
    if (to <= from) continue;
    for (size_t g = 0; g < u->ngaps; g++) {
      int64_t a = from > u->gaps[g].start ? from : u->gaps[g].start, b = to < u->gaps[g].end ? to : u->gaps[g].end;
      if (b > a) total += b - a;
    }
    at = to;
  }
  return total;
}

int siox_collective_wait_ns(const struct siox_act *c, const struct siox_sibling *s, size_t n,
                            const struct siox_served *served, size_t nserved, const struct siox_unlinked *u,
                            int64_t *ns) {
  *ns = 0;
  /* A failed allocation is an error, never "no wait": blame would judge
   * the fault with the evidence for it missing. */
  if (nserved >= SIZE_MAX / sizeof(struct siox_interval)) return -ENOMEM;
  struct siox_interval *iv = malloc((nserved + 1) * sizeof(*iv));
  size_t k = 0;
  if (!iv) return -ENOMEM;
  for (size_t i = 0; i < nserved; i++) {
    const struct siox_served *r = &served[i];
    int64_t late = r->own ? 0 : arrival(r, s, n);
    int64_t from = r->start_ns > c->start_ns ? r->start_ns : c->start_ns;
    int64_t to = r->end_ns < c->end_ns ? r->end_ns : c->end_ns;
    if (to > late) to = late;
    if (to > from) iv[k++] = (struct siox_interval){from, to};
  }
  *ns = union_in(iv, k, u);
  free(iv);
  return 0;
}

int siox_collective_waited(const struct siox_act *root, const struct siox_served *served, size_t nserved,
                           const struct siox_unlinked *u, siox_sibling_fetch_fn fetch, void *ctx, int64_t *ns) {
  *ns = 0;
  size_t n = siox_collective_waits(root, NULL, 0); /* all of them: no cap */
  if (n == 0) return 0;
  const struct siox_act **coll = malloc(n * sizeof(*coll));
  if (!coll) return -ENOMEM;
  siox_collective_waits(root, coll, n);
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    struct siox_sibling *s = NULL;
    size_t ns_n = 0;
    int64_t one = 0;
    rc = fetch(ctx, coll[i], &s, &ns_n);
    if (rc == 0) rc = siox_collective_wait_ns(coll[i], s, ns_n, served, nserved, u, &one);
    *ns += one;
    free(s);
  }
  free(coll);
  return rc;
}
