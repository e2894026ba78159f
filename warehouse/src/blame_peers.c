/* The peers blame judges against, one query per kind (blame_peers.h). */
#include "blame_peers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void siox_blame_peers_init(struct siox_blame_peers *p, PGconn *c, const struct siox_act *root, int64_t margin_ns,
                           long limit) {
  memset(p, 0, sizeof(*p));
  p->c = c;
  p->q = (struct siox_peer_query){.job = root->job, .call_aid = root->aid, .from_ns = root->start_ns - margin_ns,
                                  .to_ns = root->end_ns + margin_ns, .limit = limit};
}

static int grow(struct siox_blame_peers *p) {
  size_t cap = p->cap ? 2 * p->cap : 8;
  struct siox_blame_kind_peers *k = realloc(p->kinds, cap * sizeof(*k));
  if (!k) return -ENOMEM;
  p->kinds = k;
  p->cap = cap;
  return 0;
}

int siox_blame_peers_fetch(void *vp, const struct siox_act *x, const struct siox_blame_sample **s, size_t *n) {
  struct siox_blame_peers *p = vp;
  size_t i = 0;
  while (i < p->n && (strcmp(p->kinds[i].swid, x->swid) != 0 || strcmp(p->kinds[i].name, x->name) != 0)) i++;
  if (i == p->n) {
    p->err[0] = '\0';
    if (p->n == p->cap && grow(p) != 0) return -ENOMEM;
    struct siox_peer_query q = p->q;
    q.swid = x->swid;
    q.name = x->name;
    q.mid_ns = x->start_ns;
    p->kinds[i] = (struct siox_blame_kind_peers){.swid = x->swid, .name = x->name};
    snprintf(p->err, sizeof(p->err), "out of memory");
    int rc = siox_wh_peers(p->c, &q, &p->kinds[i].set, p->err, sizeof(p->err));
    if (rc != 0) return rc;
    p->n++;
  }
  *s = p->kinds[i].set.s;
  *n = p->kinds[i].set.n;
  return 0;
}

void siox_blame_peers_release(struct siox_blame_peers *p) {
  for (size_t i = 0; i < p->n; i++) siox_wh_peers_free(&p->kinds[i].set);
  free(p->kinds);
  p->kinds = NULL;
  p->n = p->cap = 0;
}
