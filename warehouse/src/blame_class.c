/*
 * The kind's latency model and the class of a verdict (blame_class.h;
 * rules in README.md "Classes").
 */
#include "blame_class.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blame.h"

/* ---- the kind's latency model ------------------------------------------- */

#define SIZE_CLASSES 64 /* class 0: no size; class k: bytes in [2^(k-1), 2^k) */

static int size_class(int64_t bytes) {
  int k = 0;
  while (bytes > 0 && k < SIZE_CLASSES - 1) {
    bytes >>= 1;
    k++;
  }
  return k;
}

static int cmp_sample(const void *x, const void *y) {
  const struct siox_kind_sample *a = x, *b = y;
  if (a->node_id != b->node_id) return (a->node_id > b->node_id) - (a->node_id < b->node_id);
  int ca = size_class(a->bytes), cb = size_class(b->bytes);
  return (ca > cb) - (ca < cb);
}

/* Per (component, size class): median size and time, appended to the
 * class's lists xs[c], ys[c] (one entry per component). */
static void per_component(struct siox_kind_sample *v, size_t n, double *tmp, double **xs, double **ys,
                          size_t *cnt, size_t *nodes) {
  for (size_t i = 0; i < n;) {
    size_t j = i;
    int c = size_class(v[i].bytes);
    while (j < n && v[j].node_id == v[i].node_id && size_class(v[j].bytes) == c) j++;
    if (i == 0 || v[i].node_id != v[i - 1].node_id) (*nodes)++;
    for (size_t k = i; k < j; k++) tmp[k - i] = v[k].bytes > 0 ? (double)v[k].bytes : 0;
    xs[c][cnt[c]] = siox_median(tmp, j - i);
    for (size_t k = i; k < j; k++) tmp[k - i] = (double)v[k].ns / 1e9;
    ys[c][cnt[c]++] = siox_median(tmp, j - i);
    i = j;
  }
}

/* Components a size class needs to enter the fit: SIOX_KIND_MIN_NODES,
 * and a quarter of the kind's components (blame_class.h). */
static size_t class_support(size_t nodes) {
  size_t q = (nodes + SIOX_KIND_CLASS_SHARE - 1) / SIOX_KIND_CLASS_SHARE;
  return q > SIOX_KIND_MIN_NODES ? q : SIOX_KIND_MIN_NODES;
}

static void fit_points(struct siox_kind_model *m, double **xs, double **ys, const size_t *cnt) {
  double px[SIZE_CLASSES], py[SIZE_CLASSES];
  size_t k = 0, need = class_support(m->nodes);
  for (int c = 0; c < SIZE_CLASSES; c++) {
    if (cnt[c] < need) continue;
    px[k] = siox_median(xs[c], cnt[c]);
    py[k++] = siox_median(ys[c], cnt[c]);
  }
  m->points = k;
  if (k == 0) return;
  if (k > 1 && siox_line_fit(px, py, k, &m->a_s, &m->b_s)) {
    m->have = true;
    return;
  }
  /* One size (or none): its time, per byte when it has a size. */
  m->a_s = px[0] > 0 ? 0 : py[0];
  m->b_s = px[0] > 0 ? py[0] / px[0] : 0;
  m->have = py[0] > 0;
}

static size_t count_nodes(const struct siox_kind_sample *v, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (i == 0 || v[i].node_id != v[i - 1].node_id) k++;
  return k;
}

int siox_kind_model_fit(const struct siox_kind_sample *s, size_t n, struct siox_kind_model *m) {
  memset(m, 0, sizeof(*m));
  m->samples = n;
  struct siox_kind_sample *v = malloc((n + 1) * sizeof(*v));
  double *tmp = malloc((n + 1) * sizeof(*tmp)), *pool = NULL, *xs[SIZE_CLASSES], *ys[SIZE_CLASSES];
  size_t cnt[SIZE_CLASSES] = {0}, nodes = 0;
  if (v && tmp) {
    memcpy(v, s, n * sizeof(*v));
    qsort(v, n, sizeof(*v), cmp_sample);
    nodes = count_nodes(v, n);
    /* At most one entry per component in each size class. */
    pool = malloc((2 * SIZE_CLASSES * (nodes + 1)) * sizeof(*pool));
  }
  int rc = pool ? 0 : -ENOMEM;
  if (rc == 0) {
    for (int c = 0; c < SIZE_CLASSES; c++) {
      xs[c] = pool + (size_t)(2 * c) * (nodes + 1);
      ys[c] = pool + (size_t)(2 * c + 1) * (nodes + 1);
    }
    per_component(v, n, tmp, xs, ys, cnt, &m->nodes);
    if (m->nodes >= SIOX_KIND_MIN_NODES) fit_points(m, xs, ys, cnt);
  }
  free(v);
  free(tmp);
  free(pool);
  return rc;
}

double siox_kind_model_expect_s(const struct siox_kind_model *m, int64_t bytes) {
  return m->a_s + m->b_s * (double)(bytes > 0 ? bytes : 0);
}

double siox_kind_model_median_ratio(const struct siox_kind_model *m, const struct siox_kind_sample *s, size_t n) {
  if (!m->have || n == 0) return 0;
  double *r = malloc(n * sizeof(*r));
  if (!r) return 0;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    double e = siox_kind_model_expect_s(m, s[i].bytes);
    if (e > 0) r[k++] = (double)s[i].ns / 1e9 / e;
  }
  double med = k ? siox_median(r, k) : 0;
  free(r);
  return med;
}

/* ---- the class ---------------------------------------------------------- */

/* Rule 1: the first evidence that exists judges the service. */
static enum siox_evidence first_evidence(const struct siox_class_input *in, int *judged) {
  if (in->peers >= 0) return *judged = in->peers, SIOX_EVIDENCE_PEERS;
  if (in->kind >= 0) return *judged = in->kind, SIOX_EVIDENCE_KIND;
  if (in->baseline >= 0) return *judged = in->baseline, SIOX_EVIDENCE_BASELINE;
  return *judged = -1, SIOX_EVIDENCE_NONE;
}

static bool waited(const struct siox_class_input *in) {
  const struct siox_wait *w = in->wait;
  return w && w->total_ns > 0 && (double)w->queued_ns >= in->wait_share * (double)w->total_ns;
}

static bool busy_with_others(const struct siox_class_input *in) {
  const struct siox_wait *w = in->wait;
  return in->ops_shared_ratio > 0 && in->ops_shared_ratio < in->ratio && waited(in) &&
         w->queued_other_jobs_ns > w->queued_same_job_ns;
}

struct siox_class_verdict siox_classify(const struct siox_class_input *in) {
  struct siox_class_verdict v = {.cls = SIOX_CLASS_NONE};
  int judged;
  v.by = first_evidence(in, &judged);
  v.slow_service = judged == 1;
  bool known_ops = in->ops >= SIOX_CLASS_MIN_OPS && in->ops_ratio > 0;
  bool ops_slow = known_ops && in->ops_ratio >= in->ratio;
  /* Slow only because it served other jobs' requests at once: busy, not
   * faulty (a healthy brick hammered by another job). */
  if (ops_slow && busy_with_others(in)) ops_slow = false;
  /* Rules 2 and 3: a slow request on a component that serves its other
   * operations normally is a transient; the component's own operations
   * being slow is a fault even when this one request was not judged. */
  if (ops_slow || (v.slow_service && !known_ops)) {
    v.cls = SIOX_CLASS_FAULT;
    if (ops_slow && v.by == SIOX_EVIDENCE_NONE) v.by = SIOX_EVIDENCE_KIND;
    return v;
  }
  if (waited(in)) { /* rule 4 */
    const struct siox_wait *w = in->wait;
    v.cls = w->queued_other_jobs_ns >= w->queued_same_job_ns ? SIOX_CLASS_INTERFERENCE : SIOX_CLASS_SELF;
    if (v.by == SIOX_EVIDENCE_NONE && known_ops) v.by = SIOX_EVIDENCE_KIND;
    return v;
  }
  if (v.slow_service) { /* rule 2: slow alone, the component otherwise fine */
    v.cls = SIOX_CLASS_TRANSIENT;
    return v;
  }
  if (v.by != SIOX_EVIDENCE_NONE || known_ops) v.cls = SIOX_CLASS_NORMAL;
  if (v.by == SIOX_EVIDENCE_NONE && known_ops) v.by = SIOX_EVIDENCE_KIND;
  return v;
}

const char *siox_class_name(enum siox_class c) {
  static const char *const names[] = {"none", "normal", "fault", "transient", "interference", "self-inflicted"};
  return names[c];
}

const char *siox_evidence_name(enum siox_evidence e) {
  static const char *const names[] = {"none", "peers", "kind-model", "baseline"};
  return names[e];
}
