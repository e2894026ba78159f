/*
 * "From characterization": a trace whose characterization has the same
 * operation counts, bytes, collective counts, first offsets, most common
 * sizes, per-rank compute and barrier counts as the given one (README.md,
 * "Generators", says what is approximate: sizes outside the common ones,
 * the order of accesses and where barriers fall).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "wl_model.h"

struct gen {
  siox_workload *out;
  uint32_t rank;
  int64_t gap_ns; /* per operation: the rank's compute spread evenly */
  /* Per file, for version 1 characterizations, which do not count MPI
   * opens apart: the fewest opens and closes any rank of it made, taken as
   * the ones made collectively (MPI_File_open/close are collective over
   * the file's ranks; a rank that also opened the file with POSIX, e.g.
   * rank 0 reading it back, counts more: those are POSIX opens). A file
   * that one rank alone opens (file per process) defeats the guess: every
   * open is taken for MPI's, and the replay closed the MPI file twice. */
  const uint64_t *coll_opens, *coll_closes;
};

static int emit(struct gen *g, uint32_t op, uint32_t fid, uint64_t off, uint64_t bytes, int64_t dur) {
  struct siox_wl_rec r = {.rank = g->rank, .op = op, .fid = fid, .offset = off, .bytes = bytes,
                          .gap_ns = g->gap_ns, .dur_ns = dur};
  return siox_wl_add_rec(g->out, &r);
}

/* Size of the i-th access of d: the common sizes first, then the rest of
 * the bytes spread over the remaining accesses. */
static uint64_t size_at(const struct siox_wl_dir *d, uint64_t i) {
  uint64_t used_n = 0, used_b = 0;
  for (int k = 0; k < SIOX_WL_COMMON; k++) {
    if (i < used_n + d->common_count[k]) return d->common_size[k];
    used_n += d->common_count[k];
    used_b += d->common_size[k] * d->common_count[k];
  }
  uint64_t rest_n = d->count - used_n, rest_b = d->bytes > used_b ? d->bytes - used_b : 0;
  uint64_t j = i - used_n;
  return rest_b / rest_n + (j < rest_b % rest_n ? 1 : 0);
}

/* The accesses of one direction: the first at first_offset, then `consec`
 * contiguous ones, then `seq - consec` forward with a hole of one access,
 * then the rest going backwards. */
static int emit_dir(struct gen *g, const struct siox_wl_counters *c, const struct siox_wl_dir *d, int read) {
  uint64_t off = d->first_offset, prev_end = 0;
  uint32_t op_ind = read ? (c->mpi ? SIOX_WL_MPI_READ : SIOX_WL_READ) : (c->mpi ? SIOX_WL_MPI_WRITE : SIOX_WL_WRITE);
  uint32_t op_coll = read ? SIOX_WL_MPI_READ_ALL : SIOX_WL_MPI_WRITE_ALL;
  int64_t dur = d->count ? d->time_ns / (int64_t)d->count : 0;
  for (uint64_t i = 0; i < d->count; i++) {
    uint64_t sz = size_at(d, i);
    if (i == 0) off = d->first_offset;
    else if (i <= d->consec) off = prev_end;
    else if (i <= d->seq) off = prev_end + sz;
    else off = off >= sz ? off - sz : 0;
    int rc = emit(g, i < d->coll ? op_coll : op_ind, c->fid, off, sz, dur);
    if (rc) return rc;
    prev_end = off + sz;
  }
  return 0;
}

static int emit_file(struct gen *g, const struct siox_wl_counters *c) {
  uint64_t meta = c->opens + c->closes + c->seeks + c->stats + c->fsyncs;
  int64_t md = meta ? c->meta_ns / (int64_t)meta : 0;
  int rc = 0;
  for (uint64_t i = 0; !rc && i < c->stats; i++) rc = emit(g, SIOX_WL_STAT, c->fid, 0, 0, md);
  uint64_t mo = !c->mpi ? 0 : c->mpi_split ? c->mpi_opens : g->coll_opens[c->fid];
  uint64_t mc = !c->mpi ? 0 : c->mpi_split ? c->mpi_closes : g->coll_closes[c->fid];
  for (uint64_t i = 0; !rc && i < c->opens; i++) rc = emit(g, i < mo ? SIOX_WL_MPI_OPEN : SIOX_WL_OPEN, c->fid, 0, 0, md);
  for (uint64_t i = 0; !rc && i < c->seeks; i++) rc = emit(g, SIOX_WL_SEEK, c->fid, c->wr.first_offset, 0, md);
  if (!rc) rc = emit_dir(g, c, &c->wr, 0);
  if (!rc) rc = emit_dir(g, c, &c->rd, 1);
  for (uint64_t i = 0; !rc && i < c->fsyncs; i++) rc = emit(g, c->mpi ? SIOX_WL_MPI_SYNC : SIOX_WL_FSYNC, c->fid, 0, 0, md);
  /* POSIX closes first: the MPI file stays open for the MPI accesses above. */
  for (uint64_t i = 0; !rc && i < c->closes; i++)
    rc = emit(g, i + mc >= c->closes ? SIOX_WL_MPI_CLOSE : SIOX_WL_CLOSE, c->fid, 0, 0, md);
  return rc;
}

#define MAX_OPS (1ULL << 30) /* a synthesized trace is held in memory */

static int check_counters(const struct siox_wl_counters *c, uint64_t *total, char *err, size_t errlen) {
  const struct siox_wl_dir *d[2] = {&c->rd, &c->wr};
  uint64_t n_ops = 0;
  const uint64_t parts[] = {c->opens, c->closes, c->seeks, c->stats, c->fsyncs, c->rd.count, c->wr.count};
  for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
    if (parts[i] > MAX_OPS || (n_ops += parts[i]) > MAX_OPS || (*total += parts[i]) > MAX_OPS) {
      snprintf(err, errlen, "the counters ask for more than %llu operations", (unsigned long long)MAX_OPS);
      return -EINVAL;
    }
  }
  for (int k = 0; k < 2; k++) {
    uint64_t n = 0, b = 0, p;
    int over = 0;
    for (int i = 0; i < SIOX_WL_COMMON; i++) {
      over |= __builtin_add_overflow(n, d[k]->common_count[i], &n);
      over |= __builtin_mul_overflow(d[k]->common_size[i], d[k]->common_count[i], &p);
      over |= __builtin_add_overflow(b, p, &b);
    }
    if (over || n > d[k]->count || b > d[k]->bytes || (n == d[k]->count && b != d[k]->bytes) || d[k]->consec > d[k]->seq) {
      snprintf(err, errlen, "rank %u file %u: the %s counters contradict each other (common sizes vs count and bytes)",
               c->rank, c->fid, k ? "write" : "read");
      return -EINVAL;
    }
  }
  return 0;
}

int siox_wl_synthesize(const siox_workload *ch, siox_workload **out, char *err, size_t errlen) {
  if (ch->form != SIOX_WL_CHARACTERIZATION) {
    snprintf(err, errlen, "not a characterization");
    return -EINVAL;
  }
  siox_workload *t = siox_wl_new(SIOX_WL_TRACE, ch->job, ch->ranks);
  if (!t) return -ENOMEM;
  int rc = 0;
  for (size_t i = 0; !rc && i < ch->nfiles; i++)
    if (siox_wl_add_file(t, ch->files[i]) < 0) rc = -ENOMEM;
  uint64_t total = 0;
  for (size_t i = 0; !rc && i < ch->nctr; i++) rc = check_counters(&ch->ctr[i], &total, err, errlen);
  for (uint32_t r = 0; !rc && r < ch->ranks; r++) {
    const struct siox_wl_rank *k = siox_wl_rank_info(ch, r);
    if (k && (k->barriers > MAX_OPS || (total += k->barriers) > MAX_OPS)) {
      snprintf(err, errlen, "the counters ask for more than %llu operations", (unsigned long long)MAX_OPS);
      rc = -EINVAL;
    }
  }
  uint64_t *co = calloc(ch->nfiles ? ch->nfiles : 1, sizeof(*co)), *cc = calloc(ch->nfiles ? ch->nfiles : 1, sizeof(*cc));
  unsigned char *seen = calloc(ch->nfiles ? ch->nfiles : 1, 1);
  if (!co || !cc || !seen) rc = -ENOMEM;
  for (size_t i = 0; !rc && i < ch->nctr; i++) {
    const struct siox_wl_counters *c = &ch->ctr[i];
    if (!c->mpi) continue;
    if (!seen[c->fid] || c->opens < co[c->fid]) co[c->fid] = c->opens;
    if (!seen[c->fid] || c->closes < cc[c->fid]) cc[c->fid] = c->closes;
    seen[c->fid] = 1;
  }
  for (uint32_t r = 0; !rc && r < ch->ranks; r++) {
    const struct siox_wl_rank *k = siox_wl_rank_info(ch, r);
    struct gen g = {.out = t, .rank = r, .gap_ns = k && k->ops ? k->compute_ns / (int64_t)k->ops : 0,
                    .coll_opens = co, .coll_closes = cc};
    for (size_t i = 0; !rc && i < ch->nctr; i++)
      if (ch->ctr[i].rank == r) rc = emit_file(&g, &ch->ctr[i]);
    /* every rank calls the same barriers: at the end no file collective can cross them */
    for (uint64_t b = 0; !rc && k && b < k->barriers; b++) rc = emit(&g, SIOX_WL_BARRIER, SIOX_WL_NOFILE, 0, 0, 0);
  }
  free(co);
  free(cc);
  free(seen);
  if (rc) {
    siox_wl_free(t);
    return rc;
  }
  *out = t;
  return 0;
}
