/* Internals of the extractor: the warehouse rows (wl_extract.c) and their
 * translation into operations (wl_extract_ops.c). */
#ifndef SIOX_WL_EXTRACT_H
#define SIOX_WL_EXTRACT_H

#include "wl_model.h"

#define WLX_NONE INT64_MIN /* an attribute the activity does not carry */

/* One activity of the job, as the query returns it. Strings are borrowed
 * from the PGresult. */
struct wlx_act {
  int64_t aid, parent, start_ns, end_ns;
  int proc, err;
  const char *swid, *name, *path, *sent_path; /* path, sent_path: NULL when absent */
  int64_t offset, bytes, result, fd, coll, rank, stdio;
  int64_t view_block, view_extent; /* MPI_File_set_view's shape (WLX_NONE: absent) */
  int inner;   /* below an MPI-IO call */
  int no_rank; /* of a process without an MPI rank in an MPI job (mpirun) */
};

/* A record before ranks are known. */
struct wlx_rec {
  struct siox_wl_rec r;
  int proc;
  int64_t aid;     /* of the activity (to patch a fid from a child) */
  size_t seq;      /* order in the job */
  int64_t start_ns, end_ns;
};

struct wlx {
  const struct siox_wl_extract_opts *o;
  struct siox_wl_extract_stats *st;
  siox_workload *w;          /* files go here as they are met */
  struct wlx_rec *recs;
  size_t nrecs, caprecs;
  /* descriptor -> fid, per process; kind 'f' fd, 's' stdio FILE*, 'm' MPI file (value = open order) */
  struct wlx_handle { int proc; char kind; int64_t value; uint32_t fid; } *h;
  size_t nh, caph;
};

/* Translates the job's activities (sorted by process, then start) into
 * records in x->recs. 0 or -ENOMEM. */
int wlx_translate(struct wlx *x, struct wlx_act *acts, size_t n);

#endif
