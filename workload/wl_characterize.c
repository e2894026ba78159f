/*
 * A trace -> its characterization: Darshan-like counters per (rank, file)
 * and per rank. Records are grouped by (rank, file) keeping stream order, so
 * "sequential" compares each access with the previous one of the same
 * direction on that file by that rank, as Darshan does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wl_model.h"

static const siox_workload *sort_w; /* qsort has no context argument */

static int by_rank_file(const void *a, const void *b) {
  const struct siox_wl_rec *x = &sort_w->recs[*(const size_t *)a], *y = &sort_w->recs[*(const size_t *)b];
  if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
  if (x->fid != y->fid) return x->fid < y->fid ? -1 : 1;
  return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static int by_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The SIOX_WL_COMMON most frequent sizes of sizes[0..n) (sorted here);
 * ties go to the larger size. */
static void common_sizes(uint64_t *sizes, size_t n, struct siox_wl_dir *d) {
  qsort(sizes, n, sizeof(*sizes), by_u64);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && sizes[j] == sizes[i]) j++;
    uint64_t cnt = j - i;
    for (int k = 0; k < SIOX_WL_COMMON; k++) {
      if (cnt < d->common_count[k]) continue;
      memmove(&d->common_size[k + 1], &d->common_size[k], (SIOX_WL_COMMON - 1 - (size_t)k) * sizeof(uint64_t));
      memmove(&d->common_count[k + 1], &d->common_count[k], (SIOX_WL_COMMON - 1 - (size_t)k) * sizeof(uint64_t));
      d->common_size[k] = sizes[i];
      d->common_count[k] = cnt;
      break;
    }
    i = j;
  }
}

static void add_access(struct siox_wl_dir *d, const struct siox_wl_rec *r, uint64_t *prev_end, int coll) {
  if (d->count == 0) d->first_offset = r->offset;
  else if (r->offset >= *prev_end) {
    d->seq++;
    if (r->offset == *prev_end) d->consec++;
  }
  d->count++;
  d->bytes += r->bytes;
  d->coll += (uint64_t)coll;
  d->hist[siox_wl_hist_bin(r->bytes)]++;
  *prev_end = r->offset + r->bytes;
  if (*prev_end > d->max_end) d->max_end = *prev_end;
  d->time_ns += r->dur_ns;
}

static void add_meta(struct siox_wl_counters *c, const struct siox_wl_rec *r) {
  switch (r->op) {
  case SIOX_WL_MPI_OPEN: c->mpi = 1, c->mpi_opens++; /* fall through */
  case SIOX_WL_OPEN: c->opens++; break;
  case SIOX_WL_MPI_CLOSE: c->mpi_closes++; /* fall through */
  case SIOX_WL_CLOSE: c->closes++; break;
  case SIOX_WL_SEEK: c->seeks++; break;
  case SIOX_WL_STAT: c->stats++; break;
  default: c->fsyncs++; break; /* fsync, mpi_sync */
  }
  c->meta_ns += r->dur_ns;
}

/* Counters of the records idx[0..n) (one rank, one file). */
static int group_counters(const siox_workload *t, const size_t *idx, size_t n, siox_workload *out) {
  struct siox_wl_counters c = {.rank = t->recs[idx[0]].rank, .fid = t->recs[idx[0]].fid, .mpi_split = 1};
  uint64_t *rs = malloc((n + 1) * sizeof(*rs)), *ws = malloc((n + 1) * sizeof(*ws));
  if (!rs || !ws) {
    free(rs);
    free(ws);
    return -ENOMEM;
  }
  size_t nr = 0, nw = 0;
  uint64_t rend = 0, wend = 0;
  for (size_t i = 0; i < n; i++) {
    const struct siox_wl_rec *r = &t->recs[idx[i]];
    int coll = r->op == SIOX_WL_MPI_READ_ALL || r->op == SIOX_WL_MPI_WRITE_ALL;
    if (r->op >= SIOX_WL_MPI_OPEN && r->op != SIOX_WL_BARRIER) c.mpi = 1;
    if (siox_wl_op_is_read((int)r->op)) {
      add_access(&c.rd, r, &rend, coll);
      rs[nr++] = r->bytes;
    } else if (siox_wl_op_is_data((int)r->op)) {
      add_access(&c.wr, r, &wend, coll);
      ws[nw++] = r->bytes;
    } else {
      add_meta(&c, r);
    }
  }
  common_sizes(rs, nr, &c.rd);
  common_sizes(ws, nw, &c.wr);
  free(rs);
  free(ws);
  return siox_wl_add_counters(out, &c);
}

static int rank_rows(const siox_workload *t, siox_workload *out) {
  for (uint32_t r = 0; r < t->ranks; r++) {
    struct siox_wl_rank k = {.rank = r};
    int rc = siox_wl_set_rank(out, &k); /* every rank has a row, idle ones too */
    if (rc) return rc;
  }
  for (size_t i = 0; i < t->nrecs; i++) {
    const struct siox_wl_rec *r = &t->recs[i];
    struct siox_wl_rank *k = &out->rank_info[r->rank];
    k->ops++;
    k->barriers += r->op == SIOX_WL_BARRIER;
    k->compute_ns += r->gap_ns;
    k->io_ns += r->dur_ns;
  }
  return 0;
}

int siox_wl_characterize(const siox_workload *t, siox_workload **out) {
  if (t->form != SIOX_WL_TRACE) return -EINVAL;
  siox_workload *c = siox_wl_new(SIOX_WL_CHARACTERIZATION, t->job, t->ranks);
  size_t *idx = malloc((t->nrecs + 1) * sizeof(*idx));
  int rc = c && idx ? 0 : -ENOMEM;
  for (size_t i = 0; !rc && i < t->nfiles; i++)
    if (siox_wl_add_file(c, t->files[i]) < 0) rc = -ENOMEM;
  if (!rc) {
    size_t n = 0;
    for (size_t i = 0; i < t->nrecs; i++)
      if (t->recs[i].op != SIOX_WL_BARRIER) idx[n++] = i;
    sort_w = t;
    qsort(idx, n, sizeof(*idx), by_rank_file);
    for (size_t i = 0; !rc && i < n;) {
      size_t j = i;
      while (j < n && t->recs[idx[j]].rank == t->recs[idx[i]].rank && t->recs[idx[j]].fid == t->recs[idx[i]].fid) j++;
      rc = group_counters(t, idx + i, j - i, c);
      i = j;
    }
  }
  if (!rc) rc = rank_rows(t, c);
  free(idx);
  if (rc) {
    siox_wl_free(c);
    return rc;
  }
  *out = c;
  return 0;
}
