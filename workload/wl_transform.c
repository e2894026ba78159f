/*
 * Changed workloads for what-if questions about the application rather than
 * the storage (capacity/README.md, "Validation"): the same job at another
 * rank count (weak scaling), and its shared files split into one file per
 * process. Both keep every operation's size, gap and recorded duration, so
 * a replay of the result and a simulation of it do the same work.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "siox_workload.h"

/* Per file: how many ranks touch it, and the end of its furthest access. */
struct file_use {
  uint32_t nranks;
  uint8_t *seen;      /* [ranks] */
  uint64_t extent;
  uint64_t view_block, view_step; /* the smallest block and the largest step of its strided views; 0: none */
};

static void uses_free(struct file_use *u, size_t nf) {
  for (size_t f = 0; u && f < nf; f++) free(u[f].seen);
  free(u);
}

static struct file_use *uses_of(const siox_workload *w) {
  size_t nf = siox_wl_nfiles(w);
  uint32_t nr = siox_wl_ranks(w);
  struct file_use *u = calloc(nf ? nf : 1, sizeof(*u));
  if (!u) return NULL;
  for (size_t f = 0; f < nf; f++)
    if (!(u[f].seen = calloc(nr, 1))) return uses_free(u, nf), NULL;
  for (size_t i = 0; i < siox_wl_nrecs(w); i++) {
    const struct siox_wl_rec *r = siox_wl_rec(w, i);
    if (r->fid == SIOX_WL_NOFILE) continue;
    struct file_use *x = &u[r->fid];
    if (!x->seen[r->rank]) x->seen[r->rank] = 1, x->nranks++;
    if (siox_wl_view_strided(r)) {
      if (!x->view_block || r->bytes < x->view_block) x->view_block = r->bytes;
      if (r->extent > x->view_step) x->view_step = r->extent;
    }
  }
  /* An MPI-IO access under a strided view reaches past its bytes: over at
   * most bytes / block + 2 steps (an upper bound from the file's smallest
   * block and largest step: replicas of a shared file then lie apart,
   * never over each other). */
  for (size_t i = 0; i < siox_wl_nrecs(w); i++) {
    const struct siox_wl_rec *r = siox_wl_rec(w, i);
    struct file_use *x = r->fid == SIOX_WL_NOFILE ? NULL : &u[r->fid];
    uint64_t reach = x && x->view_block && r->op >= SIOX_WL_MPI_OPEN
                         ? (r->bytes / x->view_block + 2) * x->view_step
                         : r->bytes;
    if (x && siox_wl_op_is_data((int)r->op) && r->offset + reach > x->extent) x->extent = r->offset + reach;
  }
  return u;
}

static int trace_only(const siox_workload *w, const char *what, char *err, size_t errlen) {
  if (siox_wl_form(w) == SIOX_WL_TRACE) return 0;
  snprintf(err, errlen, "%s needs a trace, not a characterization (synthesize one first)", what);
  return -EINVAL;
}

/* Adds "NAME.rK" (or NAME itself when k is 0) to out; the new fid or <0. */
static int64_t add_copy(siox_workload *out, const char *name, uint32_t k) {
  if (k == 0) return siox_wl_add_file(out, name);
  size_t n = strlen(name) + 16;
  char *s = malloc(n);
  if (!s) return -ENOMEM;
  snprintf(s, n, "%s.r%u", name, k);
  int64_t fid = siox_wl_add_file(out, s);
  free(s);
  return fid;
}

int siox_wl_scale_ranks(const siox_workload *w, uint32_t n, siox_workload **out, char *err, size_t errlen) {
  *out = NULL;
  int rc = trace_only(w, "changing the rank count", err, errlen);
  if (rc) return rc;
  uint32_t nr = siox_wl_ranks(w);
  size_t nf = siox_wl_nfiles(w);
  if (n == 0 || n > (1u << 20)) {
    snprintf(err, errlen, "a rank count from 1 to %u, not %u", 1u << 20, n);
    return -EINVAL;
  }
  uint32_t replicas = (n + nr - 1) / nr;
  struct file_use *u = uses_of(w);
  siox_workload *o = siox_wl_new(SIOX_WL_TRACE, siox_wl_job(w), n);
  /* fid[k * nf + f]: replica k's file f (per-process files are copied, shared ones kept). */
  int64_t *fid = calloc((size_t)replicas * (nf ? nf : 1), sizeof(*fid));
  rc = -ENOMEM;
  if (!u || !o || !fid) goto out;
  for (uint32_t k = 0; k < replicas; k++)
    for (size_t f = 0; f < nf; f++) {
      int64_t id = k > 0 && u[f].nranks > 1 ? fid[f] : add_copy(o, siox_wl_file_name(w, (uint32_t)f), k);
      if (id < 0) goto out;
      fid[(size_t)k * nf + f] = id;
    }
  /* Rank by rank: replica k of old rank q is new rank k * nr + q. */
  for (uint32_t r = 0; r < n; r++) {
    uint32_t q = r % nr, k = r / nr;
    for (size_t i = 0; i < siox_wl_nrecs(w); i++) {
      struct siox_wl_rec x = *siox_wl_rec(w, i);
      if (x.rank != q) continue;
      x.rank = r;
      if (x.fid != SIOX_WL_NOFILE) {
        /* A shared file's replicas write beside each other, not over each other. */
        if (u[x.fid].nranks > 1 && (siox_wl_op_is_data((int)x.op) || x.op == SIOX_WL_SEEK || x.op == SIOX_WL_MPI_VIEW))
          x.offset += (uint64_t)k * u[x.fid].extent;
        x.fid = (uint32_t)fid[(size_t)k * nf + x.fid];
      }
      if ((rc = siox_wl_add_rec(o, &x)) < 0) goto out;
    }
  }
  *out = o;
  o = NULL;
  rc = 0;
out:
  if (rc == -ENOMEM) snprintf(err, errlen, "out of memory");
  uses_free(u, nf);
  free(fid);
  siox_wl_free(o);
  return rc;
}

int siox_wl_file_per_process(const siox_workload *w, siox_workload **out, char *err, size_t errlen) {
  *out = NULL;
  int rc = trace_only(w, "splitting shared files", err, errlen);
  if (rc) return rc;
  uint32_t nr = siox_wl_ranks(w);
  size_t nf = siox_wl_nfiles(w);
  struct file_use *u = uses_of(w);
  siox_workload *o = siox_wl_new(SIOX_WL_TRACE, siox_wl_job(w), nr);
  int64_t *fid = calloc((size_t)nr * (nf ? nf : 1), sizeof(*fid)); /* [rank * nf + f] */
  rc = -ENOMEM;
  if (!u || !o || !fid) goto out;
  for (size_t f = 0; f < nf; f++) {
    const char *name = siox_wl_file_name(w, (uint32_t)f);
    if (u[f].nranks <= 1) {
      int64_t id = siox_wl_add_file(o, name);
      if (id < 0) goto out;
      for (uint32_t r = 0; r < nr; r++) fid[(size_t)r * nf + f] = id;
      continue;
    }
    /* A shared file: rank r's part is NAME.rR (offsets kept: the same
     * requests, on a sparse file of its own). */
    for (uint32_t r = 0; r < nr; r++) {
      if (!u[f].seen[r]) continue;
      size_t n = strlen(name) + 16;
      char *s = malloc(n);
      if (!s) goto out;
      snprintf(s, n, "%s.r%u", name, r);
      int64_t id = siox_wl_add_file(o, s);
      free(s);
      if (id < 0) goto out;
      fid[(size_t)r * nf + f] = id;
    }
  }
  for (size_t i = 0; i < siox_wl_nrecs(w); i++) {
    struct siox_wl_rec x = *siox_wl_rec(w, i);
    if (x.fid != SIOX_WL_NOFILE) x.fid = (uint32_t)fid[(size_t)x.rank * nf + x.fid];
    if ((rc = siox_wl_add_rec(o, &x)) < 0) goto out;
  }
  *out = o;
  o = NULL;
  rc = 0;
out:
  if (rc == -ENOMEM) snprintf(err, errlen, "out of memory");
  uses_free(u, nf);
  free(fid);
  siox_wl_free(o);
  return rc;
}
