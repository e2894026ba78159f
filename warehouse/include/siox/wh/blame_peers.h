/*
 * The peers blame judges against (README.md "Blame"), fetched from the
 * warehouse once per kind (layer and activity name) and kept until the
 * report is printed: the verdicts' peer names point into them. A
 * siox_blame_peers is the ctx of siox_blame_peers_fetch, the
 * siox_blame_fetch_fn that siox_blame_find and siox_blame_wait_run call.
 */
#ifndef SIOX_CLI_BLAME_PEERS_H
#define SIOX_CLI_BLAME_PEERS_H

#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

#include "blame.h"
#include "warehouse.h"

struct siox_blame_kind_peers {
  const char *swid, *name; /* borrowed from the tree */
  struct siox_peer_set set;
};

struct siox_blame_peers {
  PGconn *c;
  struct siox_peer_query q;             /* the call's job and window; swid/name per kind */
  struct siox_blame_kind_peers *kinds;  /* owned; freed by siox_blame_peers_release */
  size_t n, cap;
  char err[2048];                       /* why the last fetch failed ("": out of memory) */
};

/* Sets p up for call root: peers of its job (root->job, root->aid's owner)
 * starting within its interval widened by margin_ns each side, at most
 * limit per kind. Release it with siox_blame_peers_release. */
void siox_blame_peers_init(struct siox_blame_peers *p, PGconn *c, const struct siox_act *root, int64_t margin_ns,
                           long limit);
/* siox_blame_fetch_fn: the samples of x's kind (fetched on first use, with
 * q.mid_ns = x's start), valid until release. 0, or negative errno with
 * p->err set (empty when growing the cache ran out of memory). */
int siox_blame_peers_fetch(void *p, const struct siox_act *x, const struct siox_blame_sample **s, size_t *n);
void siox_blame_peers_release(struct siox_blame_peers *p);

#endif
