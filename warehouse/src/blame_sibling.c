/*
 * Blame through the siblings of a collective call, with the warehouse
 * (blame_sibling.h): the queries of siox_wh_siblings fed to the pure rules
 * of blame_collective.c.
 */
#include "blame_sibling.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blame_collective.h"
#include "warehouse.h"

int siox_blame_sibling_find(PGconn *c, const struct siox_blame *b, const struct siox_blame_wait *w,
                            struct siox_blame_sibling *out, char *err, size_t errlen) {
  struct siox_sibling *s = NULL;
  size_t n = 0;
  memset(out, 0, sizeof(*out));
  if (w->resource || !(out->coll = siox_collective_on_path(b))) return 0;
  int rc = siox_wh_siblings(c, out->coll->aid, &s, &n, err, errlen);
  if (rc != 0) return rc;
  long i = siox_collective_pick(out->coll, s, n);
  if (i >= 0) {
    out->aid = s[i].aid;
    out->pid = s[i].pid;
  }
  free(s);
  return 0;
}

struct sibling_ctx {
  PGconn *c;
  char *err;
  size_t errlen;
};

static int fetch_siblings(void *vctx, const struct siox_act *coll, struct siox_sibling **s, size_t *n) {
  struct sibling_ctx *x = vctx;
  return siox_wh_siblings(x->c, coll->aid, s, n, x->err, x->errlen);
}

int siox_blame_unlinked_run(PGconn *c, const struct siox_blame *b, struct siox_blame_wait *w,
                            struct siox_unlinked *u, char *err, size_t errlen) {
  struct sibling_ctx x = {c, err, errlen};
  int64_t waited = 0;
  snprintf(err, errlen, "out of memory"); /* a failed query says what failed instead */
  int rc = siox_unlinked_find(b->path[0], u);
  /* The sibling queries are only needed when a fault or transient may be
   * withdrawn for unlinked time (siox_blame_wait_unlinked). */
  if (rc == 0 && w->resource && (w->v.cls == SIOX_CLASS_FAULT || w->v.cls == SIOX_CLASS_TRANSIENT))
    rc = siox_collective_waited(b->path[0], w->served.s, w->served.n, u, fetch_siblings, &x, &waited);
  if (rc == 0) siox_blame_wait_unlinked(w, u, waited);
  return rc;
}
