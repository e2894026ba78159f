/*
 * The model calibrated from the warehouse: samples, placement and declared
 * bandwidths read by libsiox-warehouse (wh_capacity_samples.c), fitted here.
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
};

static int on_sample(void *ctx, const struct siox_wh_cap_sample *w) {
  struct cal *c = ctx;
  int cls = siox_cap_class_of_fop(w->fop);
  if (cls < 0) return 0; /* fops the model has no class for (unlink, ...) */
  int64_t k = siox_cap_model_comp(c->m, w->component, w->brick ? SIOX_CAP_BRICK : SIOX_CAP_CLIENT);
  if (k < 0) return (int)k;
  if (c->n == c->cap) {
    size_t nc = c->cap ? 2 * c->cap : 1024;
    struct siox_cap_sample *s = realloc(c->s, nc * sizeof(*s));
    if (!s) return -ENOMEM;
    c->s = s;
    c->cap = nc;
  }
  c->s[c->n++] = (struct siox_cap_sample){(uint32_t)k, (uint32_t)cls, w->bytes, w->start_ns, w->ns};
  return 0;
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
  if ((rc = siox_cap_model_fit(c.m, c.s, c.n)) < 0) goto fail;
  if ((rc = siox_wh_capacity_placement(pg, since_ns, until_ns, on_place, &c, err, errlen)) < 0) goto fail;
  if ((rc = siox_wh_capacity_declared(pg, on_declared, &c, err, errlen)) < 0) goto fail;
  free(c.s);
  *out = c.m;
  return 0;
fail:
  if (rc == -ENOMEM) snprintf(err, errlen, "out of memory");
  free(c.s);
  siox_cap_model_free(c.m);
  return rc;
}
