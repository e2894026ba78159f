/*
 * Blame of one call, step by step (siox_blame_call_run): loads the call's
 * causal tree, picks the suspect on the critical path (blame.c), judges it
 * against its peers (blame_peers.c), finds what it waited for
 * (blame_wait.c), scores the baseline (blame_baseline.c), finds the
 * unlinked time (blame_unlinked.c) and, when a collective call waited for
 * another rank's I/O, blames that rank's call instead (blame_sibling.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "blame_doc.h"

/* The peers nearest in time, over all nodes of the kind. Not fewer: 5,000
 * cut a third of a call at 10M activities, but a busy suspect's own node
 * then filled them and left no peer on the other nodes (bench_blame (f)). */
#define PEER_LIMIT 20000

/* The peer fetch blame.c and blame_wait.c call (blame_peers.h). */
static int fetch(void *ctx, const struct siox_act *x, const struct siox_blame_sample **s, size_t *n) {
  return siox_blame_peers_fetch(ctx, x, s, n);
}

/* A failed step's message: its own, else the peer fetch's, else ENOMEM's. */
static int failed(const struct siox_blame_call *k, int rc, char *err, size_t errlen) {
  if (!err[0]) snprintf(err, errlen, "%s", k->f.err[0] ? k->f.err : "out of memory");
  return rc == -ENOMEM || rc == -EIO || rc == -ENOENT ? rc : -EIO;
}

static int load(PGconn *c, const struct siox_blame_opts *o, int64_t aid, struct siox_blame_call *k, char *err,
                size_t errlen) {
  int rc = siox_wh_load_tree(c, aid, (int)o->depth, &k->t, err, errlen);
  if (rc == -ENOENT)
    snprintf(err, errlen, "activity %" PRId64 " is not in the warehouse (see `siox top` for ids)", aid);
  else if (rc && !err[0])
    snprintf(err, errlen, "%s", strerror(-rc));
  return rc;
}

/* The waiting step, the baseline of the resource (else the suspect), the class. */
static int charge(PGconn *c, const struct siox_blame_opts *o, struct siox_blame_call *k, char *err, size_t errlen) {
  int rc = siox_blame_wait_run(c, &k->b, fetch, &k->f, &k->w, err, errlen);
  if (rc) return rc;
  blame_baseline_score(c, o, &k->b, k->w.resource ? k->w.resource : k->b.suspect, &k->f.q, &k->v);
  siox_blame_wait_classify(&k->w, blame_baseline_vote(&k->v));
  return 0;
}

static int blame_one(PGconn *c, const struct siox_blame_opts *o, int64_t aid, struct siox_blame_call *k, char *err,
                     size_t errlen) {
  struct siox_blame_rule rule = SIOX_BLAME_RULE_DEFAULT;
  rule.ratio = o->ratio;
  rule.refit_kind = o->refit_kind;
  memset(k, 0, sizeof(*k));
  err[0] = '\0';
  int rc = load(c, o, aid, k, err, errlen);
  if (rc) return rc;
  if ((rc = siox_blame_walk(k->t, &rule, &k->b)) != 0) return failed(k, rc, err, errlen);
  siox_blame_peers_init(&k->f, c, k->b.path[0], (int64_t)o->margin_s * 1000000000, PEER_LIMIT);
  if ((rc = siox_blame_find(&k->b, fetch, &k->f)) != 0) return failed(k, rc, err, errlen);
  if ((rc = charge(c, o, k, err, errlen)) != 0) return failed(k, rc, err, errlen);
  if ((rc = siox_blame_unlinked_run(c, &k->b, &k->w, &k->u, err, errlen)) != 0) return failed(k, rc, err, errlen);
  return 0;
}

void siox_blame_call_release(struct siox_blame_call *k) {
  siox_unlinked_release(&k->u);
  siox_blame_wait_release(&k->w);
  siox_blame_release(&k->b);
  siox_blame_peers_release(&k->f);
  siox_tree_destroy(k->t);
  k->t = NULL;
}

/* What k->via says: the call asked about and the sibling followed. */
static void via_of(const struct siox_blame_call *k, const struct siox_blame_sibling *sib, struct siox_blame_via *v) {
  *v = (struct siox_blame_via){.used = true, .sibling_aid = sib->aid, .sibling_pid = sib->pid};
  v->root_aid = k->b.path[0]->aid;
  v->root_ns = k->b.path[0]->inclusive_ns;
  v->coll_aid = sib->coll->aid;
  snprintf(v->root_name, sizeof(v->root_name), "%s", k->b.path[0]->name);
  snprintf(v->coll_name, sizeof(v->coll_name), "%s", sib->coll->name);
}

int siox_blame_call_run(PGconn *c, const struct siox_blame_opts *o, int64_t aid, struct siox_blame_call *k, char *err,
                        size_t errlen) {
  struct siox_blame_sibling sib;
  struct siox_blame_via via;
  int rc = blame_one(c, o, aid, k, err, errlen);
  if (rc) return rc;
  if ((rc = siox_blame_sibling_find(c, &k->b, &k->w, &sib, err, errlen)) != 0) return rc == -ENOMEM ? rc : -EIO;
  if (sib.aid == 0) return 0;
  via_of(k, &sib, &via);
  siox_blame_call_release(k);
  rc = blame_one(c, o, via.sibling_aid, k, err, errlen);
  k->via = via;
  return rc;
}
