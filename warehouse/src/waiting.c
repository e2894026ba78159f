/*
 * Waiting at one resource (waiting.h). The rules (README.md "Waiting"):
 *
 * - The call's own service is the union of its own requests at the
 *   resource, clipped to the call. The rest of the call is the gap.
 * - Every instant of the gap at which the resource was serving requests of
 *   others is queued time: the call was not being served, the resource was
 *   busy. An instant with k others in service charges 1/k to each (a brick
 *   with several io-threads serves several at once; none of them alone
 *   held the call back).
 * - The charges are summed per origin process (the top of each request's
 *   causal chain: the application call it served); its share is its charge
 *   over the gap.
 * - Confidence: the resource's busy share of the gap (a resource busy for
 *   10% of the wait explains little of it even where it was busy), halved
 *   for a request that reached the resource after the call's own first one
 *   (FIFO puts it behind the call, so it competed rather than queued ahead).
 * - What no request explains is unexplained, with the time it covers.
 * - Exact queue intervals: when the call's own requests say when they
 *   joined the resource's queue (queue_from_ns: their wind one level up,
 *   from the recorded intervals and the translators' glusterfs/queued_ns),
 *   only those windows [queue_from, start) count as queued at this
 *   resource: others it served while the call was elsewhere (still in the
 *   kernel, the FUSE channel, another queue) held nothing of the call back,
 *   and stay unexplained here. Every request the resource served in such a
 *   window was ahead of the call (it was served, the call was not): its
 *   charge is not halved.
 * - Ahead in the queue: an instant of an own request's queue window at
 *   which the resource served nobody is queued too when others' requests
 *   that joined the same queue (wound by the same node one level up) no
 *   later than the call's were still on their way to the resource and
 *   reached it no later than the call's: a FIFO (the client's connection
 *   to a brick, the kernel's FUSE queue) held the call behind them. They
 *   share the instant's charge.
 * - A reply window (reply_from_ns) is one too: [reply_from, end) of an own
 *   request, whose part below had ended while the resource had not yet
 *   taken its reply up (the client process busy with others' fops). It is
 *   not the call's own service there.
 */
#include "waiting.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

static int64_t clip(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Own requests serve until their reply window, if they have one. */
static int64_t service_end(const struct siox_served *r) {
  return r->own && r->reply_from_ns > 0 && r->reply_from_ns < r->end_ns ? r->reply_from_ns : r->end_ns;
}

static bool covers(const struct siox_served *r, int64_t a, int64_t b) { return r->start_ns <= a && service_end(r) >= b; }

static bool same_origin(const struct siox_served *a, const struct siox_served *b) {
  return a->pid == b->pid && strcmp(a->host, b->host) == 0 && strcmp(a->job, b->job) == 0;
}

/* The breakpoints of every interval (and queue window) inside [start,
 * end], sorted, unique. */
static size_t breakpoints(int64_t start, int64_t end, const struct siox_served *s, size_t n, int64_t *p) {
  size_t m = 0;
  p[m++] = start;
  p[m++] = end;
  for (size_t i = 0; i < n; i++) {
    p[m++] = clip(s[i].start_ns, start, end);
    p[m++] = clip(s[i].end_ns, start, end);
    if (s[i].own && s[i].queue_from_ns > 0) p[m++] = clip(s[i].queue_from_ns, start, end);
    if (s[i].own && s[i].reply_from_ns > 0) p[m++] = clip(s[i].reply_from_ns, start, end);
  }
  qsort(p, m, sizeof(*p), cmp_i64);
  size_t u = 0;
  for (size_t i = 0; i < m; i++)
    if (u == 0 || p[i] != p[u - 1]) p[u++] = p[i];
  return u;
}

/* First start of the call's own requests (end when it has none). */
static int64_t own_first(int64_t end, const struct siox_served *s, size_t n) {
  int64_t f = end;
  for (size_t i = 0; i < n; i++)
    if (s[i].own && s[i].start_ns < f) f = s[i].start_ns;
  return f;
}

/* Whether any own request records when it joined the queue. */
static bool has_windows(const struct siox_served *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i].own && (s[i].queue_from_ns > 0 || s[i].reply_from_ns > 0)) return true;
  return false;
}

/* The own request whose queue window (*queue) or reply window holds
 * [a, b); NULL when none does. */
static const struct siox_served *window_of(const struct siox_served *s, size_t n, int64_t a, int64_t b, bool *queue) {
  for (size_t i = 0; i < n; i++) {
    *queue = true;
    if (s[i].own && s[i].queue_from_ns > 0 && s[i].queue_from_ns <= a && s[i].start_ns >= b) return &s[i];
    *queue = false;
    if (s[i].own && s[i].reply_from_ns > 0 && s[i].reply_from_ns <= a && s[i].end_ns >= b) return &s[i];
  }
  return NULL;
}

/* Whether o was ahead of the own request in its queue during [a, b): it
 * joined the same queue (wound by the same node one level up) no later,
 * had not reached the resource yet, and reached it no later than own. */
static bool ahead_of(const struct siox_served *o, const struct siox_served *own, int64_t b) {
  return !o->own && o->queue_from_ns > 0 && o->queue_node == own->queue_node &&
         o->queue_from_ns <= own->queue_from_ns && o->start_ns >= b && o->start_ns <= own->start_ns;
}

/* The others charged for [a, b) in charged[i]: those in service; with none
 * in service and [a, b) in own's queue window (own: NULL outside one),
 * those ahead of own there (README "Waiting", ahead in the queue). Their
 * number. */
static size_t holders(const struct siox_served *s, size_t n, int64_t a, int64_t b, const struct siox_served *own,
                      bool *charged) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) k += charged[i] = !s[i].own && covers(&s[i], a, b);
  if (k > 0 || !own) return k;
  for (size_t i = 0; i < n; i++) k += charged[i] = ahead_of(&s[i], own, b);
  return k;
}

/* Sweeps the elementary segments: own service, queued time, and each
 * other request's charge (charge[i], ns) and weight (for confidence). */
static void sweep(struct siox_wait *w, const int64_t *p, size_t np, const struct siox_served *s, size_t n,
                  double *charge, bool *charged) {
  for (size_t k = 0; k + 1 < np; k++) {
    int64_t a = p[k], b = p[k + 1];
    bool own = false, queue = false;
    for (size_t i = 0; i < n && !own; i++) own = s[i].own && covers(&s[i], a, b);
    if (own) {
      w->own_ns += b - a;
      continue;
    }
    const struct siox_served *win = w->exact ? window_of(s, n, a, b, &queue) : NULL;
    if (w->exact && !win) continue;
    size_t busy = holders(s, n, a, b, queue ? win : NULL, charged);
    if (busy == 0) continue;
    w->queued_ns += b - a;
    for (size_t i = 0; i < n; i++)
      if (charged[i]) charge[i] += (double)(b - a) / (double)busy;
  }
}

static int cmp_by(const void *x, const void *y) {
  const struct siox_waited_for *a = x, *b = y;
  return (a->charged_ns < b->charged_ns) - (a->charged_ns > b->charged_ns);
}

/* The median service time of origin g's requests that were charged. */
static int64_t origin_median(const struct siox_served *s, size_t n, const double *charge, const struct siox_served *g,
                             int64_t *tmp) {
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (!s[i].own && charge[i] > 0 && same_origin(&s[i], g)) tmp[m++] = s[i].end_ns - s[i].start_ns;
  if (m == 0) return 0;
  qsort(tmp, m, sizeof(*tmp), cmp_i64);
  return m % 2 ? tmp[m / 2] : (tmp[m / 2 - 1] + tmp[m / 2]) / 2;
}

/* Groups the charged requests by origin process into w->by. */
static void group(struct siox_wait *w, const char *job, const struct siox_served *s, size_t n, const double *charge,
                  int64_t first_own, int64_t *tmp, bool *done) {
  double busy = w->gap_ns > 0 ? (double)w->queued_ns / (double)w->gap_ns : 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i].own || charge[i] <= 0 || done[i]) continue;
    struct siox_waited_for g = {.job = s[i].job, .host = s[i].host, .pid = s[i].pid,
                                .same_job = job[0] && strcmp(s[i].job, job) == 0, .first_aid = s[i].aid};
    double sum = 0, weighted = 0;
    for (size_t j = i; j < n; j++) {
      if (s[j].own || charge[j] <= 0 || done[j] || !same_origin(&s[j], &s[i])) continue;
      done[j] = true;
      g.requests++;
      sum += charge[j];
      weighted += charge[j] * (w->exact || s[j].start_ns <= first_own ? 1.0 : 0.5);
    }
    g.charged_ns = (int64_t)(sum + 0.5);
    g.share = w->gap_ns > 0 ? sum / (double)w->gap_ns : 0;
    g.confidence = sum > 0 ? busy * weighted / sum : 0;
    g.median_service_ns = origin_median(s, n, charge, &s[i], tmp);
    if (g.same_job)
      w->queued_same_job_ns += g.charged_ns;
    else
      w->queued_other_jobs_ns += g.charged_ns;
    w->by[w->nby++] = g;
  }
  if (w->nby > 1) qsort(w->by, w->nby, sizeof(*w->by), cmp_by);
}

static void own_totals(struct siox_wait *w, int64_t start, int64_t end, const struct siox_served *s, size_t n,
                       const double *charge, int64_t *tmp) {
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i].own && s[i].end_ns > start && s[i].start_ns < end) {
      w->own_requests++;
      if (s[i].bytes > 0) w->own_bytes += s[i].bytes;
    }
    if (!s[i].own && charge[i] > 0) {
      w->others++;
      tmp[m++] = s[i].end_ns - s[i].start_ns;
    }
  }
  if (m) {
    qsort(tmp, m, sizeof(*tmp), cmp_i64);
    w->others_median_ns = m % 2 ? tmp[m / 2] : (tmp[m / 2 - 1] + tmp[m / 2]) / 2;
  }
}

/* Only requests that overlap the call can cover any of it: the sweep is
 * quadratic in what it is given. */
static size_t overlapping(int64_t start, int64_t end, const struct siox_served *s, size_t n, struct siox_served *out) {
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (s[i].end_ns > start && s[i].start_ns < end) out[m++] = s[i];
  return m;
}

int siox_wait_analyze(int64_t start_ns, int64_t end_ns, const char *job, const struct siox_served *all, size_t na,
                      struct siox_wait *out) {
  memset(out, 0, sizeof(*out));
  if (end_ns < start_ns) return -EINVAL;
  out->total_ns = end_ns - start_ns;
  struct siox_served *s = malloc((na + 1) * sizeof(*s));
  size_t n = s ? overlapping(start_ns, end_ns, all, na, s) : 0;
  /* breakpoints: the call's two ends, each request's two, an own one's
   * queue and reply windows' */
  int64_t *p = malloc((4 * n + 2) * sizeof(*p)), *tmp = malloc((n + 1) * sizeof(*tmp));
  double *charge = calloc(n + 1, sizeof(*charge));
  bool *done = calloc(n + 1, sizeof(*done)), *charged = calloc(n + 1, sizeof(*charged));
  out->by = calloc(n + 1, sizeof(*out->by));
  int rc = s && p && tmp && charge && done && charged && out->by ? 0 : -ENOMEM;
  if (rc == 0) {
    out->exact = has_windows(s, n);
    sweep(out, p, breakpoints(start_ns, end_ns, s, n, p), s, n, charge, charged);
    out->gap_ns = out->total_ns - out->own_ns;
    out->unexplained_ns = out->gap_ns - out->queued_ns;
    own_totals(out, start_ns, end_ns, s, n, charge, tmp);
    group(out, job ? job : "", s, n, charge, own_first(end_ns, s, n), tmp, done);
  }
  free(s);
  free(p);
  free(tmp);
  free(charge);
  free(done);
  free(charged);
  if (rc) siox_wait_release(out);
  return rc;
}

struct edge {
  int64_t t;
  int d; /* +1 a request starts, -1 one ends */
};

static int cmp_edge(const void *x, const void *y) {
  const struct edge *a = x, *b = y;
  return (a->t > b->t) - (a->t < b->t);
}

/* P(t) = the integral of 1/k over time up to each distinct edge time. */
static size_t shared_integral(const struct edge *e, size_t m, int64_t *ts, double *ps) {
  size_t u = 0;
  int k = 0;
  double acc = 0;
  for (size_t i = 0; i < m; i++) {
    if (u > 0 && k > 0) acc += (double)(e[i].t - ts[u - 1]) / k;
    if (u == 0 || e[i].t != ts[u - 1]) {
      ts[u] = e[i].t;
      ps[u++] = acc;
    }
    k += e[i].d;
  }
  return u;
}

static double integral_at(const int64_t *ts, const double *ps, size_t u, int64_t t) {
  size_t lo = 0, hi = u;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (ts[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo < u ? ps[lo] : ps[u - 1];
}

int siox_served_shared_ns(const struct siox_served *s, size_t n, int64_t *out) {
  struct edge *e = malloc((2 * n + 1) * sizeof(*e));
  int64_t *ts = malloc((2 * n + 1) * sizeof(*ts));
  double *ps = malloc((2 * n + 1) * sizeof(*ps));
  int rc = e && ts && ps ? 0 : -ENOMEM;
  if (rc == 0 && n > 0) {
    for (size_t i = 0; i < n; i++) {
      e[2 * i] = (struct edge){s[i].start_ns, +1};
      e[2 * i + 1] = (struct edge){s[i].end_ns, -1};
    }
    qsort(e, 2 * n, sizeof(*e), cmp_edge);
    size_t u = shared_integral(e, 2 * n, ts, ps);
    for (size_t i = 0; i < n; i++)
      out[i] = (int64_t)(integral_at(ts, ps, u, s[i].end_ns) - integral_at(ts, ps, u, s[i].start_ns) + 0.5);
  }
  free(e);
  free(ts);
  free(ps);
  return rc;
}

static bool same_by(const struct siox_waited_for *a, const struct siox_waited_for *b) {
  return a->pid == b->pid && strcmp(a->host, b->host) == 0 && strcmp(a->job, b->job) == 0;
}

/* Adds g to out->by, summing into the entry of the same origin. */
static void merge_one(struct siox_wait *out, const struct siox_waited_for *g) {
  for (size_t i = 0; i < out->nby; i++) {
    struct siox_waited_for *e = &out->by[i];
    if (!same_by(e, g)) continue;
    int64_t sum = e->charged_ns + g->charged_ns;
    if (sum > 0)
      e->confidence =
          (e->confidence * (double)e->charged_ns + g->confidence * (double)g->charged_ns) / (double)sum;
    if (e->median_service_ns == 0) e->median_service_ns = g->median_service_ns;
    e->charged_ns = sum;
    e->requests += g->requests;
    return;
  }
  out->by[out->nby++] = *g;
}

int siox_wait_merge(const struct siox_wait *a, const struct siox_wait *b, struct siox_wait *out) {
  *out = *a;
  out->by = calloc(a->nby + b->nby + 1, sizeof(*out->by));
  if (!out->by) return -ENOMEM;
  out->nby = 0;
  out->queued_same_job_ns = out->queued_other_jobs_ns = 0;
  for (size_t i = 0; i < a->nby; i++) merge_one(out, &a->by[i]);
  for (size_t i = 0; i < b->nby; i++) merge_one(out, &b->by[i]);
  out->queued_ns = a->queued_ns + b->queued_ns;
  if (out->queued_ns > out->gap_ns) out->queued_ns = out->gap_ns;
  out->unexplained_ns = out->gap_ns - out->queued_ns;
  out->others = a->others + b->others;
  out->exact = a->exact || b->exact;
  for (size_t i = 0; i < out->nby; i++) {
    struct siox_waited_for *e = &out->by[i];
    e->share = out->gap_ns > 0 ? (double)e->charged_ns / (double)out->gap_ns : 0;
    if (e->same_job)
      out->queued_same_job_ns += e->charged_ns;
    else
      out->queued_other_jobs_ns += e->charged_ns;
  }
  if (out->nby > 1) qsort(out->by, out->nby, sizeof(*out->by), cmp_by);
  return 0;
}

void siox_wait_release(struct siox_wait *w) {
  free(w->by);
  w->by = NULL;
  w->nby = 0;
}
