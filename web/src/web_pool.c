/*
 * Warm warehouse connections for the documents answered in-process (blame,
 * graph, top, capacity; README.md "Documents in-process"). Opening a connection costs ~40 ms and a
 * fresh backend parses and plans its first statements against cold catalog
 * caches (24-34 ms per blame); a pooled one has done both. A request takes
 * the connection used last (LIFO: the warmest), or opens one when all are
 * busy, and gives it back; a connection is kept only while healthy and idle
 * (no transaction open), so no request sees another's session state; one
 * found broken (the warehouse restarted) has the idle ones closed too.
 * Every connection is made with the server's own conninfo: the role, and
 * so row-level security, are those `siox` has for the same user.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "siox/siox_wh.h"
#include "web.h"

struct web_pool {
  const char *conninfo;
  pthread_mutex_t mu;
  struct siox_wh **idle; /* a stack: idle[nidle - 1] was given back last */
  size_t nidle, cap;
};

int web_pool_new(const char *conninfo, size_t cap, struct web_pool **out) {
  struct web_pool *p = calloc(1, sizeof(*p));
  if (!p || !(p->idle = calloc(cap ? cap : 1, sizeof(*p->idle)))) {
    free(p);
    return -ENOMEM;
  }
  p->conninfo = conninfo;
  p->cap = cap ? cap : 1;
  pthread_mutex_init(&p->mu, NULL);
  *out = p;
  return 0;
}

/* An idle connection, NULL when none. */
static struct siox_wh *pop(struct web_pool *p) {
  pthread_mutex_lock(&p->mu);
  struct siox_wh *wh = p->nidle ? p->idle[--p->nidle] : NULL;
  pthread_mutex_unlock(&p->mu);
  return wh;
}

int web_pool_take(struct web_pool *p, struct siox_wh **out, char *err, size_t errlen) {
  if ((*out = pop(p)) != NULL) return 0;
  return siox_wh_open(p->conninfo, out, err, errlen);
}

void web_pool_give(struct web_pool *p, struct siox_wh *wh) {
  if (!wh) return;
  PGconn *c = siox_wh_pg(wh);
  if (PQstatus(c) == CONNECTION_OK && PQtransactionStatus(c) == PQTRANS_IDLE) {
    pthread_mutex_lock(&p->mu);
    if (p->nidle < p->cap) p->idle[p->nidle++] = wh, wh = NULL;
    pthread_mutex_unlock(&p->mu);
  }
  siox_wh_close(wh); /* broken, mid-transaction, or more than the pool keeps */
}

int web_pool_fill(struct web_pool *p, size_t n, char *err, size_t errlen) {
  struct siox_wh *wh;
  for (size_t i = 0; i < n && i < p->cap; i++) {
    int rc = siox_wh_open(p->conninfo, &wh, err, errlen);
    if (rc) return rc;
    web_pool_give(p, wh); /* requests may have filled the pool meanwhile: then closed */
  }
  return 0;
}

void web_pool_flush(struct web_pool *p) {
  struct siox_wh *wh;
  while ((wh = pop(p)) != NULL) siox_wh_close(wh);
}

void web_pool_free(struct web_pool *p) {
  if (!p) return;
  while (p->nidle) siox_wh_close(p->idle[--p->nidle]);
  pthread_mutex_destroy(&p->mu);
  free(p->idle);
  free(p);
}
