/*
 * Blame through a collective call: the rule (blame_collective.h).
 */
#include "blame_collective.h"

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
