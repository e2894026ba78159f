/*
 * The collective MPI-IO open and close, calibrated from a recorded trace
 * (siox_cap_model_collective in siox_capacity.h; README "Collective open
 * and close"). An MPI_File_open is a few metadata requests (the model's
 * lookup and open) and, around them, ROMIO's work among the ranks: the
 * file system's type and the access mode agreed on, one rank creating the
 * file before the others open it, each step a collective. That part is in
 * no component of the model; the recording holds it as the call's time
 * beyond its requests, and that is what the simulation adds per call.
 */
#include <errno.h>
#include <stdlib.h>

#include "siox_capacity.h"

/* The median over w's calls of op of their recorded time beyond the
 * model's (rec_ns), >= 0; -1 when w has none. */
static double median_beyond(const siox_workload *w, const int64_t *rec_ns, int op, int *nomem) {
  size_t n = 0, k = 0;
  for (size_t i = 0; i < siox_wl_nrecs(w); i++) n += siox_wl_rec(w, i)->op == (uint32_t)op;
  if (!n) return -1;
  double *v = malloc(n * sizeof(*v));
  if (!v) return *nomem = 1, -1;
  for (size_t i = 0; i < siox_wl_nrecs(w); i++) {
    const struct siox_wl_rec *r = siox_wl_rec(w, i);
    if (r->op != (uint32_t)op) continue;
    double d = (double)r->dur_ns - (double)rec_ns[i];
    v[k++] = d > 0 ? d : 0;
  }
  double med = siox_cap_median(v, k);
  free(v);
  return med;
}

int siox_cap_model_collective(siox_cap_model *m, const siox_workload *w, const char *mount, char *err, size_t errlen) {
  /* The model's time for each call on the recorded system, without what
   * this calibrates (else a second calibration would count it twice). */
  siox_cap_model *bare = siox_cap_model_clone(m);
  if (!bare) return -ENOMEM;
  bare->mpi_open_ns = bare->mpi_close_ns = 0;
  struct siox_cap_predict_opts o = {.mount = mount};
  struct siox_cap_answer a;
  int rc = siox_cap_predict(bare, w, NULL, 0, &o, &a, err, errlen);
  siox_cap_model_free(bare);
  if (rc < 0) return rc;
  int nomem = 0;
  double open = median_beyond(w, a.run.rec_ns, SIOX_WL_MPI_OPEN, &nomem);
  double close = median_beyond(w, a.run.rec_ns, SIOX_WL_MPI_CLOSE, &nomem);
  siox_cap_answer_free(&a);
  if (nomem) return -ENOMEM;
  if (open >= 0) m->mpi_open_ns = open;
  if (close >= 0) m->mpi_close_ns = close;
  return 0;
}
