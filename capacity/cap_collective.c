/*
 * The collective MPI-IO open and close (siox_cap_model_collective in
 * siox_capacity.h; README "Collective open and close"). An MPI_File_open
 * is a few metadata requests (the model's lookup and open) and, around
 * them, ROMIO's work among the ranks: the file system's type and the
 * access mode agreed on, one rank creating the file before the others open
 * it, each step a collective that waits for the last rank and, on a node
 * with fewer cores than ranks, for the CPU. That part is in no component of
 * the model; the calibration window's calls hold it as their time beyond
 * their requests, and that is what the simulation adds per call. The median
 * over the calls: one slow collective (every rank of it slow together) is
 * one of several, not the answer.
 */
#include <errno.h>
#include <stdlib.h>

#include "siox_capacity.h"

/* The model's time for requests of class cls with nothing queued: the
 * client's (the most sampled client) and the healthy brick reference's. */
static double request_ns(const siox_cap_model *m, int cls) {
  struct siox_cap_fit brick;
  siox_cap_model_healthy(m, cls, &brick);
  double t = brick.n ? siox_cap_fit_eval(&brick, 0) : 0;
  int64_t best = siox_cap_model_main_client(m);
  if (best >= 0 && m->comp[best].fit[cls].n) t += siox_cap_fit_eval(&m->comp[best].fit[cls], 0);
  return t;
}

/* The median of ns[0..n) beyond `model` ns (>= 0); *out unchanged when n is 0. */
static int beyond(const int64_t *ns, size_t n, double model, double *out) {
  if (!n) return 0;
  double *v = malloc(n * sizeof(*v));
  if (!v) return -ENOMEM;
  for (size_t i = 0; i < n; i++) v[i] = (double)ns[i];
  double med = siox_cap_median(v, n) - model;
  free(v);
  *out = med > 0 ? med : 0;
  return 0;
}

int siox_cap_model_collective(siox_cap_model *m, const int64_t *open_ns, size_t nopen, const int64_t *close_ns,
                              size_t nclose) {
  double open = request_ns(m, SIOX_CAP_LOOKUP) + request_ns(m, SIOX_CAP_OPEN), close = request_ns(m, SIOX_CAP_CLOSE);
  if (beyond(open_ns, nopen, open, &m->mpi_open_ns) < 0 || beyond(close_ns, nclose, close, &m->mpi_close_ns) < 0)
    return -ENOMEM;
  return 0;
}
