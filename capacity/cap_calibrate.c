/*
 * The model calibrated from the warehouse: samples, placement, the
 * components' hosts and declared bandwidths read by libsiox-warehouse (wh_capacity_samples.c), fitted here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "siox/siox_wh.h"
#include "siox_capacity.h"

struct cal {
  siox_cap_model *m;
  struct siox_cap_sample *s;
  size_t n, cap;
  struct siox_cap_posix_op *p; /* the volume's POSIX reads and writes (the kernel's part) */
  size_t np, capp;
  int64_t *mpi[2]; /* durations of the window's MPI_File_open [0] and _close [1] */
  size_t nmpi[2], capmpi[2];
  char **via; /* names of the bricks that served client samples (their via, until resolve_vias) */
  size_t nvia;
};

/* The index of brick name in c->via (added when new), or -ENOMEM. */
static int64_t via_name(struct cal *c, const char *name) {
  for (size_t i = 0; i < c->nvia; i++)
    if (strcmp(c->via[i], name) == 0) return (int64_t)i;
  char **v = realloc(c->via, (c->nvia + 1) * sizeof(*v));
  if (!v) return -ENOMEM;
  c->via = v;
  if (!(v[c->nvia] = strdup(name))) return -ENOMEM;
  return (int64_t)c->nvia++;
}

/* Samples' via from 1 + an index in c->via to 1 + the brick's component
 * (0: a brick with no sample of its own in the window, not known). */
static void resolve_vias(struct cal *c) {
  for (size_t i = 0; i < c->n; i++) {
    if (!c->s[i].via) continue;
    int64_t k = siox_cap_model_find(c->m, c->via[c->s[i].via - 1]);
    c->s[i].via = k >= 0 && c->m->comp[k].kind == SIOX_CAP_BRICK ? (uint32_t)k + 1 : 0;
  }
}

static int on_sample(void *ctx, const struct siox_wh_cap_sample *w) {
  struct cal *c = ctx;
  int cls = siox_cap_class_of_fop(w->fop);
  if (cls < 0) return 0; /* fops the model has no class for (unlink, ...) */
  int64_t k = siox_cap_model_comp(c->m, w->component, w->brick ? SIOX_CAP_BRICK : SIOX_CAP_CLIENT);
  if (k < 0) return (int)k;
  /* The brick that served a client's request: which requests queue behind
   * which (README "Reads queued behind another"); its sample may come
   * later in the walk, so by name first (resolve_vias). */
  int64_t via = w->via ? via_name(c, w->via) : -1;
  if (via < -1) return (int)via;
  if (c->n == c->cap) {
    size_t nc = c->cap ? 2 * c->cap : 1024;
    struct siox_cap_sample *s = realloc(c->s, nc * sizeof(*s));
    if (!s) return -ENOMEM;
    c->s = s;
    c->cap = nc;
  }
  c->s[c->n++] = (struct siox_cap_sample){(uint32_t)k, (uint32_t)cls, w->bytes, w->start_ns, w->ns, w->span_ns,
                                            w->object, (uint32_t)(via + 1)};
  return 0;
}

static int on_posix(void *ctx, const struct siox_wh_cap_posix *w) {
  struct cal *c = ctx;
  int64_t k = siox_cap_model_find(c->m, w->host);
  if (k < 0 || c->m->comp[k].kind != SIOX_CAP_CLIENT) return 0; /* a node with no GlusterFS client sample */
  if (c->np == c->capp) {
    size_t nc = c->capp ? 2 * c->capp : 256;
    struct siox_cap_posix_op *p = realloc(c->p, nc * sizeof(*p));
    if (!p) return -ENOMEM;
    c->p = p;
    c->capp = nc;
  }
  c->p[c->np++] = (struct siox_cap_posix_op){(uint32_t)k, w->write ? SIOX_CAP_WRITE : SIOX_CAP_READ, w->bytes,
                                              w->start_ns, w->end_ns};
  return 0;
}

static int on_mpi(void *ctx, int close, int64_t ns) {
  struct cal *c = ctx;
  if (c->nmpi[close] == c->capmpi[close]) {
    size_t nc = c->capmpi[close] ? 2 * c->capmpi[close] : 64;
    int64_t *v = realloc(c->mpi[close], nc * sizeof(*v));
    if (!v) return -ENOMEM;
    c->mpi[close] = v;
    c->capmpi[close] = nc;
  }
  c->mpi[close][c->nmpi[close]++] = ns;
  return 0;
}

/* A component's host: the first its processes report (a component runs on one). */
static int on_host(void *ctx, const char *component, const char *host) {
  struct cal *c = ctx;
  int64_t k = siox_cap_model_find(c->m, component);
  if (k >= 0 && !c->m->comp[k].host[0]) snprintf(c->m->comp[k].host, sizeof c->m->comp[k].host, "%s", host);
  return 0;
}

static void cal_free(struct cal *c) {
  free(c->s);
  free(c->p);
  free(c->mpi[0]);
  free(c->mpi[1]);
  for (size_t i = 0; i < c->nvia; i++) free(c->via[i]);
  free(c->via);
}

static int on_place(void *ctx, const char *path, const char *brick) {
  struct cal *c = ctx;
  int64_t k = siox_cap_model_find(c->m, brick);
  if (k < 0 || c->m->comp[k].kind != SIOX_CAP_BRICK) return 0; /* a brick with no sample in the window */
  return siox_cap_model_place(c->m, path, (uint32_t)k);
}

static int on_declared(void *ctx, const char *brick, double bps) {
  struct cal *c = ctx;
  int64_t k = siox_cap_model_find(c->m, brick);
  if (k >= 0) c->m->comp[k].declared_bps = bps;
  return 0;
}

int siox_cap_model_from_warehouse(PGconn *pg, int64_t since_ns, int64_t until_ns, siox_cap_model **out, char *err,
                                  size_t errlen) {
  struct cal c = {.m = siox_cap_model_new()};
  int rc = -ENOMEM;
  if (!c.m) goto fail;
  if ((rc = siox_wh_capacity_samples(pg, since_ns, until_ns, on_sample, &c, err, errlen)) < 0) goto fail;
  if (c.n == 0) {
    snprintf(err, errlen, "no GlusterFS brick or client activity in the window: nothing to calibrate the model on "
                          "(load the debug/siox-brick and debug/siox-client translators)");
    rc = -ENOENT;
    goto fail;
  }
  resolve_vias(&c);
  if ((rc = siox_cap_model_fit(c.m, c.s, c.n)) < 0) goto fail;
  if ((rc = siox_wh_capacity_hosts(pg, on_host, &c, err, errlen)) < 0) goto fail;
  siox_cap_model_nodes(c.m);
  if ((rc = siox_wh_capacity_posix(pg, since_ns, until_ns, on_posix, &c, err, errlen)) < 0 ||
      (rc = siox_cap_model_kernel(c.m, c.p, c.np, c.s, c.n)) < 0)
    goto fail;
  if ((rc = siox_wh_capacity_mpi_opens(pg, since_ns, until_ns, on_mpi, &c, err, errlen)) < 0 ||
      (rc = siox_cap_model_collective(c.m, c.mpi[0], c.nmpi[0], c.mpi[1], c.nmpi[1])) < 0)
    goto fail;
  if ((rc = siox_wh_capacity_placement(pg, since_ns, until_ns, on_place, &c, err, errlen)) < 0) goto fail;
  if ((rc = siox_wh_capacity_declared(pg, on_declared, &c, err, errlen)) < 0) goto fail;
  cal_free(&c);
  *out = c.m;
  return 0;
fail:
  if (rc == -ENOMEM) snprintf(err, errlen, "out of memory");
  cal_free(&c);
  siox_cap_model_free(c.m);
  return rc;
}
