/*
 * The job's trace from the warehouse: its POSIX, stdio, MPI-IO and MPI
 * activities with the attributes the format needs (siox_wh_job_trace_rows,
 * libsiox-warehouse), the
 * translation into operations (wl_extract_ops.c), then ranks (MPI_Init's
 * mpi/rank; the process order when the job is not MPI) and gaps.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <siox/siox_wh.h>

#include "wl_extract.h"

/* Row i of the warehouse's rows as the extractor's activity (WLX_NONE is
 * SIOX_WH_NONE: absent attributes stay absent). */
static void decode(const struct siox_wh_job_rows *rows, size_t i, struct wlx_act *a) {
  struct siox_wh_job_row r;
  siox_wh_job_row(rows, i, &r);
  *a = (struct wlx_act){.aid = r.aid, .parent = r.parent, .proc = r.proc, .swid = r.swid, .name = r.name,
                        .start_ns = r.start_ns, .end_ns = r.end_ns, .err = r.err, .offset = r.offset,
                        .bytes = r.bytes, .result = r.result, .fd = r.fd, .coll = r.coll, .rank = r.rank, .view_block = r.view_block, .view_extent = r.view_extent,
                        .stdio = r.stdio, .path = r.path, .sent_path = r.sent_path};
}

static int by_aid(const void *a, const void *b) {
  int64_t x = (*(struct wlx_act *const *)a)->aid, y = (*(struct wlx_act *const *)b)->aid;
  return x < y ? -1 : x > y;
}

static struct wlx_act *find(struct wlx_act **byaid, size_t n, int64_t aid) {
  struct wlx_act key = {.aid = aid}, *kp = &key;
  struct wlx_act **p = bsearch(&kp, byaid, n, sizeof(*byaid), by_aid);
  return p ? *p : NULL;
}

/* An activity is inner when an MPI-IO call is among its explicit ancestors:
 * it is how that call was carried out, and replaying the call redoes it. */
static int mark_inner(struct wlx_act *acts, size_t n) {
  struct wlx_act **byaid = malloc((n + 1) * sizeof(*byaid));
  if (!byaid) return -ENOMEM;
  for (size_t i = 0; i < n; i++) byaid[i] = &acts[i];
  qsort(byaid, n, sizeof(*byaid), by_aid);
  for (size_t i = 0; i < n; i++) {
    int depth = 0;
    for (struct wlx_act *p = find(byaid, n, acts[i].parent); p && depth < 64; p = find(byaid, n, p->parent), depth++)
      if (strcmp(p->swid, "MPI-IO") == 0) {
        acts[i].inner = 1;
        break;
      }
  }
  free(byaid);
  return 0;
}

/* proc -> rank: MPI_Init's mpi/rank; processes without one (launchers) are
 * left out when any has one; else the process order. Returns the rank
 * count, or -EINVAL (two processes claim one rank; err). */
static int assign_ranks(const struct wlx_act *acts, size_t n, int **proc_rank, int *maxproc, char *err, size_t errlen) {
  int mp = 0;
  for (size_t i = 0; i < n; i++) mp = acts[i].proc > mp ? acts[i].proc : mp;
  int *pr = malloc(((size_t)mp + 1) * sizeof(*pr));
  if (!pr) return -ENOMEM;
  for (int i = 0; i <= mp; i++) pr[i] = -2; /* -2: no activity; -1: no rank */
  int any_rank = 0, ranks = 0;
  for (size_t i = 0; i < n; i++) {
    if (pr[acts[i].proc] == -2) pr[acts[i].proc] = -1;
    if (acts[i].rank != WLX_NONE && strncmp(acts[i].name, "MPI_Init", 8) == 0 && acts[i].rank >= 0 &&
        acts[i].rank < (1 << 24)) {
      pr[acts[i].proc] = (int)acts[i].rank;
      any_rank = 1;
    }
  }
  for (int p = 0; p <= mp; p++) {
    if (pr[p] == -2) continue;
    if (!any_rank) pr[p] = ranks++;
    else if (pr[p] >= ranks) ranks = pr[p] + 1;
  }
  for (int p = 0; p <= mp && any_rank; p++)
    for (int q = p + 1; q <= mp; q++)
      if (pr[p] >= 0 && pr[p] == pr[q]) {
        snprintf(err, errlen, "processes %d and %d both say they are rank %d: the job id names two MPI runs", p, q,
                 pr[p]);
        free(pr);
        return -EINVAL;
      }
  *proc_rank = pr;
  *maxproc = mp;
  return ranks;
}

static int by_rank_seq(const void *a, const void *b) {
  const struct wlx_rec *x = a, *y = b;
  if (x->r.rank != y->r.rank) return x->r.rank < y->r.rank ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Ranks, gaps (start minus the rank's previous end, or its MPI_Init end),
 * then the records into w in rank order. */
static int finish(struct wlx *x, const int *proc_rank, siox_workload *w, const int64_t *init_end) {
  size_t m = x->nrecs;
  for (size_t i = 0; i < m; i++) x->recs[i].r.rank = (uint32_t)proc_rank[x->recs[i].proc];
  qsort(x->recs, m, sizeof(*x->recs), by_rank_seq);
  int64_t prev_end = 0;
  for (size_t i = 0; i < m; i++) {
    struct wlx_rec *r = &x->recs[i];
    if (i == 0 || r->r.rank != x->recs[i - 1].r.rank) prev_end = init_end[r->proc] ? init_end[r->proc] : r->start_ns;
    r->r.gap_ns = r->start_ns > prev_end ? r->start_ns - prev_end : 0;
    r->r.dur_ns = r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0;
    if (r->end_ns > prev_end) prev_end = r->end_ns;
    int rc = siox_wl_add_rec(w, &r->r);
    if (rc) return rc;
  }
  return 0;
}

static int build(struct wlx_act *acts, size_t n, const struct siox_wl_extract_opts *o, siox_workload **out,
                 struct siox_wl_extract_stats *st, char *err, size_t errlen) {
  int rc = mark_inner(acts, n);
  if (rc) return rc;
  int *proc_rank = NULL, maxproc = 0;
  int ranks = assign_ranks(acts, n, &proc_rank, &maxproc, err, errlen);
  if (ranks < 0) return ranks;
  int64_t *init_end = calloc((size_t)maxproc + 1, sizeof(*init_end));
  struct wlx x = {.o = o, .st = st, .w = siox_wl_new(SIOX_WL_TRACE, o->job, (uint32_t)(ranks ? ranks : 1))};
  rc = x.w && init_end ? 0 : -ENOMEM;
  for (size_t i = 0; !rc && i < n; i++)
    if (strncmp(acts[i].name, "MPI_Init", 8) == 0) init_end[acts[i].proc] = acts[i].end_ns;
  for (int p = 0; p <= maxproc; p++) st->processes += proc_rank[p] >= 0;
  for (size_t i = 0; i < n; i++) acts[i].no_rank = proc_rank[acts[i].proc] < 0;
  if (!rc) rc = wlx_translate(&x, acts, n);
  if (!rc) rc = finish(&x, proc_rank, x.w, init_end);
  free(x.recs);
  free(x.h);
  free(proc_rank);
  free(init_end);
  if (rc) {
    siox_wl_free(x.w);
    return rc;
  }
  *out = x.w;
  return 0;
}

int siox_wl_extract(PGconn *c, const struct siox_wl_extract_opts *o, siox_workload **out,
                    struct siox_wl_extract_stats *st, char *err, size_t errlen) {
  memset(st, 0, sizeof(*st));
  struct siox_wh_job_rows *rows = NULL;
  long got = siox_wh_job_trace_rows(c, o->job, &rows, err, errlen);
  if (got < 0) return (int)got;
  size_t n = (size_t)got;
  if (n == 0) {
    siox_wh_job_rows_free(rows);
    snprintf(err, errlen, "job '%s': no POSIX, stdio or MPI-IO activity you may see is recorded for it", o->job);
    return -ENOENT;
  }
  struct wlx_act *acts = malloc(n * sizeof(*acts));
  if (!acts) {
    siox_wh_job_rows_free(rows);
    return -ENOMEM;
  }
  for (size_t i = 0; i < n; i++) decode(rows, i, &acts[i]);
  st->activities = n;
  int rc = build(acts, n, o, out, st, err, errlen);
  free(acts);
  siox_wh_job_rows_free(rows);
  return rc;
}
