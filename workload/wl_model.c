/*
 * The workload handle: job, rank count, file table, the trace records and the
 * characterization rows, in growable arrays.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wl_model.h"

static const char *const op_names[SIOX_WL_NOPS] = {
    [SIOX_WL_OPEN] = "open",         [SIOX_WL_CLOSE] = "close",
    [SIOX_WL_READ] = "read",         [SIOX_WL_WRITE] = "write",
    [SIOX_WL_FSYNC] = "fsync",       [SIOX_WL_SEEK] = "seek",
    [SIOX_WL_STAT] = "stat",         [SIOX_WL_MPI_OPEN] = "mpi_open",
    [SIOX_WL_MPI_CLOSE] = "mpi_close", [SIOX_WL_MPI_READ] = "mpi_read",
    [SIOX_WL_MPI_WRITE] = "mpi_write", [SIOX_WL_MPI_READ_ALL] = "mpi_read_all",
    [SIOX_WL_MPI_WRITE_ALL] = "mpi_write_all", [SIOX_WL_MPI_SYNC] = "mpi_sync",
    [SIOX_WL_BARRIER] = "barrier",   [SIOX_WL_MPI_VIEW] = "mpi_view",
};

const char *siox_wl_op_name(int op) { return op >= 0 && op < SIOX_WL_NOPS ? op_names[op] : NULL; }

int siox_wl_op_parse(const char *name) {
  for (int i = 0; i < SIOX_WL_NOPS; i++)
    if (strcmp(op_names[i], name) == 0) return i;
  return -1;
}

int siox_wl_op_is_read(int op) {
  return op == SIOX_WL_READ || op == SIOX_WL_MPI_READ || op == SIOX_WL_MPI_READ_ALL;
}

int siox_wl_op_is_data(int op) {
  return siox_wl_op_is_read(op) || op == SIOX_WL_WRITE || op == SIOX_WL_MPI_WRITE || op == SIOX_WL_MPI_WRITE_ALL;
}

int siox_wl_hist_bin(uint64_t b) {
  static const uint64_t lim[SIOX_WL_HIST_BINS - 1] = {100, 1024, 10240, 102400, 1048576, 4194304, 10485760,
                                                       104857600, 1073741824};
  int i = 0;
  while (i < SIOX_WL_HIST_BINS - 1 && b >= lim[i]) i++;
  return i;
}

int siox_wl_grow(void **p, size_t *cap, size_t n, size_t sz) {
  if (n < *cap) return 0;
  size_t nc = *cap ? *cap * 2 : 64;
  void *q = realloc(*p, nc * sz);
  if (!q) return -ENOMEM;
  *p = q;
  *cap = nc;
  return 0;
}

siox_workload *siox_wl_new(enum siox_wl_form form, const char *job, uint32_t ranks) {
  siox_workload *w = calloc(1, sizeof(*w));
  if (!w) return NULL;
  w->form = form;
  w->ranks = ranks;
  w->job = strdup(job ? job : "");
  if (!w->job) {
    siox_wl_free(w);
    return NULL;
  }
  return w;
}

void siox_wl_free(siox_workload *w) {
  if (!w) return;
  for (size_t i = 0; i < w->nfiles; i++) free(w->files[i]);
  free(w->files);
  free(w->recs);
  free(w->ctr);
  free(w->rank_info);
  free(w->rank_set);
  free(w->job);
  free(w);
}

enum siox_wl_form siox_wl_form(const siox_workload *w) { return w->form; }
const char *siox_wl_job(const siox_workload *w) { return w->job; }
uint32_t siox_wl_ranks(const siox_workload *w) { return w->ranks; }
size_t siox_wl_nfiles(const siox_workload *w) { return w->nfiles; }
size_t siox_wl_nrecs(const siox_workload *w) { return w->nrecs; }
size_t siox_wl_ncounters(const siox_workload *w) { return w->nctr; }
const struct siox_wl_rec *siox_wl_rec(const siox_workload *w, size_t i) { return i < w->nrecs ? &w->recs[i] : NULL; }
const struct siox_wl_counters *siox_wl_counters_at(const siox_workload *w, size_t i) {
  return i < w->nctr ? &w->ctr[i] : NULL;
}
const char *siox_wl_file_name(const siox_workload *w, uint32_t fid) { return fid < w->nfiles ? w->files[fid] : NULL; }

int64_t siox_wl_add_file(siox_workload *w, const char *name) {
  if (siox_wl_grow((void **)&w->files, &w->capfiles, w->nfiles, sizeof(*w->files))) return -ENOMEM;
  char *s = strdup(name);
  if (!s) return -ENOMEM;
  w->files[w->nfiles] = s;
  return (int64_t)w->nfiles++;
}

int siox_wl_add_rec(siox_workload *w, const struct siox_wl_rec *r) {
  if (r->rank >= w->ranks || r->op >= SIOX_WL_NOPS) return -EINVAL;
  if (r->op == SIOX_WL_BARRIER ? r->fid != SIOX_WL_NOFILE : r->fid >= w->nfiles) return -EINVAL;
  if (siox_wl_grow((void **)&w->recs, &w->caprecs, w->nrecs, sizeof(*w->recs))) return -ENOMEM;
  w->recs[w->nrecs++] = *r;
  return 0;
}

int siox_wl_add_counters(siox_workload *w, const struct siox_wl_counters *c) {
  if (c->rank >= w->ranks || c->fid >= w->nfiles) return -EINVAL;
  if (siox_wl_grow((void **)&w->ctr, &w->capctr, w->nctr, sizeof(*w->ctr))) return -ENOMEM;
  w->ctr[w->nctr++] = *c;
  return 0;
}

/* Per-rank rows exist only in characterizations: allocated on first use. */
static int rank_rows(siox_workload *w) {
  if (w->rank_info) return 0;
  w->rank_info = calloc(w->ranks ? w->ranks : 1, sizeof(*w->rank_info));
  w->rank_set = calloc(w->ranks ? w->ranks : 1, 1);
  return w->rank_info && w->rank_set ? 0 : -ENOMEM;
}

int siox_wl_set_rank(siox_workload *w, const struct siox_wl_rank *r) {
  if (r->rank >= w->ranks) return -EINVAL;
  if (rank_rows(w)) return -ENOMEM;
  w->rank_info[r->rank] = *r;
  w->rank_set[r->rank] = 1;
  return 0;
}

const struct siox_wl_rank *siox_wl_rank_info(const siox_workload *w, uint32_t rank) {
  return rank < w->ranks && w->rank_set && w->rank_set[rank] ? &w->rank_info[rank] : NULL;
}
