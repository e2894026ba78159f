/*
 * The storage model: components, their fitted service times and
 * concurrency, and the recorded placement of files (siox_capacity.h).
 */
/* _GNU_SOURCE (set for the whole build) gives strverscmp: bricks in volfile order (brick2 < brick10). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "siox_capacity.h"

#define DEFAULT_CHUNK (128 * 1024) /* FUSE's max request on Linux: the size seen when nothing larger was */

static const char *const class_names[SIOX_CAP_NCLASS] = {"read", "write", "lookup", "open", "close", "fsync", "stat"};

const char *siox_cap_class_name(int cls) {
  return cls >= 0 && cls < SIOX_CAP_NCLASS ? class_names[cls] : NULL;
}

int siox_cap_class_of_fop(const char *fop) {
  static const struct {
    const char *fop;
    int cls;
  } map[] = {{"readv", SIOX_CAP_READ},  {"writev", SIOX_CAP_WRITE}, {"lookup", SIOX_CAP_LOOKUP},
             {"open", SIOX_CAP_OPEN},   {"create", SIOX_CAP_OPEN},  {"flush", SIOX_CAP_CLOSE},
             {"fsync", SIOX_CAP_FSYNC}, {"stat", SIOX_CAP_STAT}};
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (strcmp(fop, map[i].fop) == 0) return map[i].cls;
  return -1;
}

static int grow(void **p, size_t *cap, size_t n, size_t sz) {
  if (n < *cap) return 0;
  size_t nc = *cap ? *cap * 2 : 8;
  void *q = realloc(*p, nc * sz);
  if (!q) return -ENOMEM;
  *p = q;
  *cap = nc;
  return 0;
}

siox_cap_model *siox_cap_model_new(void) {
  siox_cap_model *m = calloc(1, sizeof(*m));
  if (!m) return NULL;
  m->chunk = DEFAULT_CHUNK;
  m->client_cache_bytes = SIOX_CAP_CLIENT_CACHE_BYTES;
  m->cache_read = (struct siox_cap_fit){.n = 1, .a_ns = SIOX_CAP_CACHE_READ_A_NS, .b_ns = SIOX_CAP_CACHE_READ_B_NS};
  m->class_concurrency = 1;
  m->kernel_path = 1;
  m->collective = 1;
  m->node_cpu = 1;
  m->mpi_polling = 0; /* opt-in: over-predicted on a quiet node (README "Ranks waiting in MPI") */
  return m;
}

void siox_cap_model_free(siox_cap_model *m) {
  if (!m) return;
  for (size_t i = 0; i < m->ncomp; i++) free(m->comp[i].name);
  for (size_t i = 0; i < m->nplace; i++) free(m->place_file[i]);
  free(m->comp);
  free(m->place_file);
  free(m->place_comp);
  free(m);
}

siox_cap_model *siox_cap_model_clone(const siox_cap_model *m) {
  siox_cap_model *c = siox_cap_model_new();
  if (!c) return NULL;
  c->chunk = m->chunk;
  c->samples = m->samples;
  c->client_cache_bytes = m->client_cache_bytes;
  c->cache_read = m->cache_read;
  c->with_delays = m->with_delays;
  c->class_concurrency = m->class_concurrency;
  c->kernel_path = m->kernel_path;
  c->kernel_mean = m->kernel_mean;
  c->kernel_pooled = m->kernel_pooled;
  c->read_all = m->read_all;
  c->healthy_ls = m->healthy_ls;
  c->collective = m->collective;
  c->client_cores = m->client_cores;
  c->node_cpu = m->node_cpu;
  c->mpi_polling = m->mpi_polling;
  c->mpi_open_ns = m->mpi_open_ns;
  c->mpi_close_ns = m->mpi_close_ns;
  for (size_t i = 0; i < m->ncomp; i++) {
    int64_t k = siox_cap_model_comp(c, m->comp[i].name, m->comp[i].kind);
    if (k < 0) goto fail;
    char *name = c->comp[k].name;
    c->comp[k] = m->comp[i];
    c->comp[k].name = name;
  }
  for (size_t i = 0; i < m->nplace; i++)
    if (siox_cap_model_place(c, m->place_file[i], m->place_comp[i]) < 0) goto fail;
  return c;
fail:
  siox_cap_model_free(c);
  return NULL;
}

int64_t siox_cap_model_find(const siox_cap_model *m, const char *name) {
  for (size_t i = 0; i < m->ncomp; i++)
    if (strcmp(m->comp[i].name, name) == 0) return (int64_t)i;
  return -1;
}

int64_t siox_cap_model_comp(siox_cap_model *m, const char *name, enum siox_cap_kind kind) {
  int64_t k = siox_cap_model_find(m, name);
  if (k >= 0) return k;
  if (grow((void **)&m->comp, &m->capcomp, m->ncomp, sizeof(*m->comp)) < 0) return -ENOMEM;
  struct siox_cap_comp *c = &m->comp[m->ncomp];
  memset(c, 0, sizeof(*c));
  if (!(c->name = strdup(name))) return -ENOMEM;
  c->kind = kind;
  c->servers = 1;
  return (int64_t)m->ncomp++;
}

struct iv_ev {
  int64_t object, t2; /* t2: 2 x time, +1 for a start (ends sort first at equal times) */
};

static int by_object_time(const void *a, const void *b) {
  const struct iv_ev *x = a, *y = b;
  if (x->object != y->object) return (x->object > y->object) - (x->object < y->object);
  return (x->t2 > y->t2) - (x->t2 < y->t2);
}

/* The most samples of component c in flight at once, by a sweep over their
 * starts and ends (ends sort first at equal times, so back-to-back requests
 * do not overlap), into *out:
 *  - cls < 0: of any class, over each sample's own time: c's servers (at
 *    least 1);
 *  - else of class cls on one file at once, over each sample's whole
 *    activity (a client's span holds its brick's part: the kernel sends a
 *    file's next write only when the last one is answered, and that is
 *    what shows); 0 when c never served the class.
 * 0 or -ENOMEM. */
static int in_flight(const struct siox_cap_sample *s, size_t n, uint32_t c, int cls, uint32_t *out) {
  size_t k = 0;
  struct iv_ev *ev = malloc(2 * (n ? n : 1) * sizeof(*ev));
  if (!ev) return -ENOMEM;
  for (size_t i = 0; i < n; i++) {
    if (s[i].comp != c || (cls >= 0 && s[i].cls != (uint32_t)cls)) continue;
    int64_t object = cls < 0 ? 0 : s[i].object, t = cls >= 0 && s[i].span_ns > 0 ? s[i].span_ns : s[i].ns;
    ev[k++] = (struct iv_ev){object, 2 * s[i].start_ns + 1};
    ev[k++] = (struct iv_ev){object, 2 * (s[i].start_ns + t)};
  }
  qsort(ev, k, sizeof(*ev), by_object_time);
  int64_t now = 0, most = cls < 0 ? 1 : 0;
  for (size_t i = 0; i < k; i++) {
    if (i && ev[i].object != ev[i - 1].object) now = 0;
    now += (ev[i].t2 & 1) ? 1 : -1;
    if (now > most) most = now;
  }
  free(ev);
  *out = (uint32_t)most;
  return 0;
}

struct by_start {
  uint32_t comp, via;
  int64_t start;
  size_t i;
};

static int by_comp_via_start(const void *a, const void *b) {
  const struct by_start *x = a, *y = b;
  if (x->comp != y->comp) return (x->comp > y->comp) - (x->comp < y->comp);
  if (x->via != y->via) return (x->via > y->via) - (x->via < y->via);
  if (x->start != y->start) return (x->start > y->start) - (x->start < y->start);
  return (x->i > y->i) - (x->i < y->i);
}

/* queued[i] = 1 for a client's read that started while an earlier request
 * of the same client to the same brick (any class, its whole activity) was
 * still in flight: its exclusive time holds the wait for that one (README
 * "Reads queued behind another"). A sweep per (client, brick) in start
 * order with the latest end so far; an earlier request that ended at the
 * start does not count. 0 or -ENOMEM. */
static int mark_queued(const siox_cap_model *m, const struct siox_cap_sample *s, size_t n, unsigned char *queued) {
  struct by_start *v = malloc((n ? n : 1) * sizeof(*v));
  if (!v) return -ENOMEM;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (m->comp[s[i].comp].kind == SIOX_CAP_CLIENT && s[i].via)
      v[k++] = (struct by_start){s[i].comp, s[i].via, s[i].start_ns, i};
  qsort(v, k, sizeof(*v), by_comp_via_start);
  int64_t end = 0;
  for (size_t j = 0; j < k; j++) {
    const struct siox_cap_sample *r = &s[v[j].i];
    int first = !j || v[j].comp != v[j - 1].comp || v[j].via != v[j - 1].via;
    if (!first && r->cls == SIOX_CAP_READ && end > r->start_ns) queued[v[j].i] = 1;
    int64_t e = r->start_ns + (r->span_ns > 0 ? r->span_ns : r->ns);
    if (first || e > end) end = e;
  }
  free(v);
  return 0;
}

#define MIN_UNQUEUED 5 /* fewer reads not queued: all are fitted (the rule before) */

/* Fits class cls of component c (README "Disturbed samples", "Reads queued
 * behind another"); a client's read line over all reads into read_all too. */
static int fit_class(siox_cap_model *m, const struct siox_cap_sample *s, size_t n, const unsigned char *queued,
                     uint32_t c, int cls, double *x, double *y) {
  struct siox_cap_comp *cp = &m->comp[c];
  int client = cp->kind == SIOX_CAP_CLIENT;
  int (*fit)(const double *, const double *, size_t, struct siox_cap_fit *) =
      client ? siox_cap_fit_robust : siox_cap_fit_line;
  size_t k = 0, nq = 0;
  for (size_t i = 0; i < n; i++)
    if (s[i].comp == c && s[i].cls == (uint32_t)cls) nq += queued[i], x[k] = (double)s[i].bytes, y[k++] = (double)s[i].ns;
  if (!k) return 0;
  int rc = fit(x, y, k, &cp->fit[cls]);
  /* The healthy reference's writes: a brick's writes sampled at several
   * moments, a disturbed moment in the minority left out (README "The
   * healthy reference"). */
  if (rc == 0 && !client && cls == SIOX_CAP_WRITE) rc = siox_cap_fit_robust(x, y, k, &cp->write_robust);
  if (rc < 0 || !client || cls != SIOX_CAP_READ) return rc;
  cp->read_all = cp->fit[cls];
  if (!nq || k - nq < MIN_UNQUEUED) return 0;
  size_t u = 0;
  for (size_t i = 0; i < n; i++)
    if (s[i].comp == c && s[i].cls == (uint32_t)cls && !queued[i]) x[u] = (double)s[i].bytes, y[u++] = (double)s[i].ns;
  if ((rc = fit(x, y, u, &cp->fit[cls])) < 0) return rc;
  cp->fit[cls].queued = nq;
  return 0;
}

void siox_cap_model_read_all(siox_cap_model *m) {
  for (size_t c = 0; c < m->ncomp; c++)
    if (m->comp[c].kind == SIOX_CAP_CLIENT) m->comp[c].fit[SIOX_CAP_READ] = m->comp[c].read_all;
  m->read_all = 1;
}

int siox_cap_model_fit(siox_cap_model *m, const struct siox_cap_sample *s, size_t n) {
  double *x = malloc((n ? n : 1) * sizeof(*x)), *y = malloc((n ? n : 1) * sizeof(*y));
  unsigned char *queued = calloc(n ? n : 1, 1);
  int rc = 0;
  if (!x || !y || !queued) {
    rc = -ENOMEM;
    goto out;
  }
  uint64_t chunk = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i].comp >= m->ncomp || s[i].cls >= SIOX_CAP_NCLASS) {
      rc = -EINVAL;
      goto out;
    }
    if (m->comp[s[i].comp].kind == SIOX_CAP_BRICK && (s[i].cls == SIOX_CAP_READ || s[i].cls == SIOX_CAP_WRITE) &&
        s[i].bytes > chunk)
      chunk = s[i].bytes;
  }
  if (chunk) m->chunk = chunk;
  if ((rc = mark_queued(m, s, n, queued)) < 0) goto out;
  for (uint32_t c = 0; c < m->ncomp; c++) {
    /* A client's exclusive time is a difference (its activity minus its
     * brick's), holding all that delayed the request between them: its
     * disturbed samples are left out (README "Disturbed samples"), and its
     * reads queued behind another request to their brick. A brick's is one
     * translator call, fitted as measured. */
    for (int cls = 0; cls < SIOX_CAP_NCLASS; cls++)
      if ((rc = fit_class(m, s, n, queued, c, cls, x, y)) < 0) goto out;
    if ((rc = in_flight(s, n, c, -1, &m->comp[c].servers)) < 0) goto out;
    for (int cls = 0; m->comp[c].kind == SIOX_CAP_CLIENT && cls < SIOX_CAP_NCLASS; cls++)
      if ((rc = in_flight(s, n, c, cls, &m->comp[c].class_servers[cls])) < 0) goto out;
  }
  m->samples += n;
out:
  free(x);
  free(y);
  free(queued);
  return rc;
}

int64_t siox_cap_model_placed(const siox_cap_model *m, const char *file) {
  for (size_t i = 0; i < m->nplace; i++)
    if (strcmp(m->place_file[i], file) == 0) return m->place_comp[i];
  return -1;
}

int siox_cap_model_place(siox_cap_model *m, const char *file, uint32_t comp) {
  if (comp >= m->ncomp || m->comp[comp].kind != SIOX_CAP_BRICK) return -EINVAL;
  for (size_t i = 0; i < m->nplace; i++)
    if (strcmp(m->place_file[i], file) == 0) {
      m->place_comp[i] = comp;
      return 0;
    }
  size_t cap = m->capplace;
  if (grow((void **)&m->place_file, &cap, m->nplace, sizeof(*m->place_file)) < 0) return -ENOMEM;
  cap = m->capplace;
  if (grow((void **)&m->place_comp, &cap, m->nplace, sizeof(*m->place_comp)) < 0) return -ENOMEM;
  m->capplace = cap;
  if (!(m->place_file[m->nplace] = strdup(file))) return -ENOMEM;
  m->place_comp[m->nplace++] = comp;
  return 0;
}

/* Component indices by name (glibc's qsort_r: the model is the context, no
 * file-level pointer that two threads sorting at once would share). */
static int by_name(const void *a, const void *b, void *model) {
  const siox_cap_model *m = model;
  return strverscmp(m->comp[*(const uint32_t *)a].name, m->comp[*(const uint32_t *)b].name);
}

size_t siox_cap_model_bricks(const siox_cap_model *m, uint32_t *out, size_t max) {
  size_t k = 0;
  uint32_t *all = malloc((m->ncomp ? m->ncomp : 1) * sizeof(*all));
  if (!all) return 0;
  for (uint32_t i = 0; i < m->ncomp; i++)
    if (m->comp[i].kind == SIOX_CAP_BRICK) all[k++] = i;
  qsort_r(all, k, sizeof(*all), by_name, (void *)m);
  for (size_t i = 0; i < k && i < max; i++) out[i] = all[i];
  free(all);
  return k;
}

static double chunk_cost(const siox_cap_model *m, const struct siox_cap_fit *f, int cls) {
  return siox_cap_fit_eval(f, cls == SIOX_CAP_READ || cls == SIOX_CAP_WRITE ? (double)m->chunk : 0);
}

static const struct siox_cap_fit *healthy_fit(const siox_cap_model *m, size_t i, int cls) {
  int robust = cls == SIOX_CAP_WRITE && !m->healthy_ls;
  return robust && m->comp[i].write_robust.n ? &m->comp[i].write_robust : &m->comp[i].fit[cls];
}

/* The lower-median brick by cls's cost of a chunk; with kernel, among
 * those with a kernel part of their reads only. */
static int64_t lower_median_brick(const siox_cap_model *m, int cls, int kernel) {
  size_t f[256];
  size_t k = 0;
  for (size_t i = 0; i < m->ncomp && k < 256; i++)
    if (m->comp[i].kind == SIOX_CAP_BRICK && !m->comp[i].synthetic && m->comp[i].fit[cls].n &&
        (!kernel || m->comp[i].kernel_fit[SIOX_CAP_READ].n))
      f[k++] = i;
  if (!k) return -1;
  for (size_t i = 1; i < k; i++) /* insertion sort by cost: k is a handful of bricks */
    for (size_t j = i; j > 0 && chunk_cost(m, healthy_fit(m, f[j], cls), cls) <
                                    chunk_cost(m, healthy_fit(m, f[j - 1], cls), cls); j--) {
      size_t t = f[j];
      f[j] = f[j - 1];
      f[j - 1] = t;
    }
  return (int64_t)f[(k - 1) / 2];
}

int64_t siox_cap_model_healthy_brick(const siox_cap_model *m, int cls) { return lower_median_brick(m, cls, 0); }

int64_t siox_cap_model_healthy_read_kernel(const siox_cap_model *m) {
  return lower_median_brick(m, SIOX_CAP_READ, 1);
}

void siox_cap_model_healthy(const siox_cap_model *m, int cls, struct siox_cap_fit *out) {
  memset(out, 0, sizeof(*out));
  int64_t b = siox_cap_model_healthy_brick(m, cls);
  if (b >= 0) *out = *healthy_fit(m, (size_t)b, cls);
}

uint32_t siox_cap_comp_servers(const siox_cap_model *m, uint32_t comp) {
  const struct siox_cap_comp *c = &m->comp[comp];
  uint32_t n = c->servers ? c->servers : 1;
  /* A client's requests are its node's CPU work (FUSE's daemon threads):
   * more in flight than cores are not served at once. */
  if (c->kind == SIOX_CAP_CLIENT && m->client_cores && n > m->client_cores) n = m->client_cores;
  return n;
}

double siox_cap_comp_capacity(const siox_cap_model *m, uint32_t comp, int cls, double *lo, double *hi) {
  const struct siox_cap_comp *c = &m->comp[comp];
  const struct siox_cap_fit *f = &c->fit[cls];
  int data = cls == SIOX_CAP_READ || cls == SIOX_CAP_WRITE;
  double per = data ? (double)m->chunk : 1.0;
  if (lo) *lo = 0;
  if (hi) *hi = 0;
  if (data && c->declared_bps > 0) {
    if (lo) *lo = c->declared_bps;
    if (hi) *hi = c->declared_bps;
    return c->declared_bps;
  }
  if (!f->n) return 0;
  double x = data ? (double)m->chunk : 0;
  double t = siox_cap_fit_eval(f, x);
  if (t <= 0) return 0;
  double se = siox_cap_fit_se(f, x);
  double srv = siox_cap_comp_servers(m, comp);
  double cap = srv * per / (t * 1e-9);
  if (lo) *lo = srv * per / ((t + 2 * se) * 1e-9);
  if (hi) *hi = t - 2 * se > 0 ? srv * per / ((t - 2 * se) * 1e-9) : 0; /* 0: unbounded */
  return cap;
}

int64_t siox_cap_model_main_client(const siox_cap_model *m) {
  int64_t best = -1;
  uint64_t most = 0;
  for (size_t i = 0; i < m->ncomp; i++) {
    if (m->comp[i].kind != SIOX_CAP_CLIENT) continue;
    uint64_t n = 0;
    for (int c = 0; c < SIOX_CAP_NCLASS; c++) n += m->comp[i].fit[c].n;
    if (best < 0 || n > most) best = (int64_t)i, most = n;
  }
  return best;
}
