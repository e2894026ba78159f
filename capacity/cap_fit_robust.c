/*
 * The fit of a client's service time (siox_cap_model_fit; a brick's is
 * plain least squares): least squares on the samples that are service, the
 * disturbed ones left out and counted (capacity/README.md, "Disturbed
 * samples").
 *
 * Why: a sample's exclusive time is service plus whatever delayed the
 * measured thread and is in no other activity: the process descheduled
 * (the recorded job's ranks and the GlusterFS threads share the cores), a
 * wait before the brick's translator saw the request. On the testbed
 * (2026-11-25) the client's writev samples of the recording had a median of
 * 303 us and a mean of 893 us, with single samples up to 20 ms; the
 * replays' had medians of 56-92 us. A least-squares line through the tail
 * made every predicted client request cost the tail's mean. Those delays
 * are not a cost of the request: whether a scenario's run has them depends
 * on what else runs on the machine, which the model does not know.
 *
 * How: ordinary least squares, then the residuals' median and their median
 * absolute deviation (MAD, x 1.4826: the standard deviation for normal
 * noise); samples more than 3 of those from the median are left out and the
 * line refitted, until none more leaves (at most MAX_ROUNDS; never below
 * half the samples). Normal noise loses 0.3 % of its samples this way, so a
 * clean component keeps its least-squares fit. The standard errors are
 * those of the kept samples. What the left-out samples added is kept apart
 * (excess_ns: the mean residual over all samples), for the simulation to
 * add or not (siox_cap_model.with_delays).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "siox_capacity.h"

#define MIN_JUDGED 5   /* fewer samples: too few to call one an outlier */
#define MAX_ROUNDS 20
#define CUT 3.0        /* robust standard deviations from the median residual */
#define MAD_TO_SD 1.4826
#define SCALE_FLOOR_NS 1.0 /* residuals of an exact line are rounding: no scale below 1 ns */

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, size_t n) {
  qsort(v, n, sizeof(*v), cmp_dbl);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The kept samples' x and y packed into kx, ky; their count. */
static size_t pack(const double *x, const double *y, const unsigned char *keep, size_t n, double *kx, double *ky) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (keep[i]) kx[k] = x[i], ky[k++] = y[i];
  return k;
}

/* One round: leaves out the kept samples beyond CUT robust SDs of f's
 * residuals; returns how many it left out (0: converged), or 0 when that
 * would keep fewer than half of all n. */
static size_t trim(const double *x, const double *y, unsigned char *keep, size_t n, size_t kept,
                   const struct siox_cap_fit *f, double *r, double *tmp) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (keep[i]) r[k++] = y[i] - (f->a_ns + f->b_ns * x[i]);
  memcpy(tmp, r, k * sizeof(*tmp));
  double med = median(tmp, k);
  for (size_t i = 0; i < k; i++) tmp[i] = fabs(r[i] - med);
  double scale = MAD_TO_SD * median(tmp, k);
  if (scale < SCALE_FLOOR_NS) scale = SCALE_FLOOR_NS;
  size_t out = 0;
  for (size_t i = 0; i < n; i++)
    if (keep[i] && fabs(y[i] - (f->a_ns + f->b_ns * x[i]) - med) > CUT * scale) out++;
  if (!out || 2 * (kept - out) < n) return 0;
  for (size_t i = 0; i < n; i++)
    if (keep[i] && fabs(y[i] - (f->a_ns + f->b_ns * x[i]) - med) > CUT * scale) keep[i] = 0;
  return out;
}

int siox_cap_fit_robust(const double *x, const double *y, size_t n, struct siox_cap_fit *out) {
  if (n == 0) return -EINVAL;
  if (n < MIN_JUDGED) return siox_cap_fit_line(x, y, n, out);
  unsigned char *keep = malloc(n);
  double *kx = malloc(n * sizeof(*kx)), *ky = malloc(n * sizeof(*ky));
  double *r = malloc(n * sizeof(*r)), *tmp = malloc(n * sizeof(*tmp));
  int rc = -ENOMEM;
  if (!keep || !kx || !ky || !r || !tmp) goto done;
  memset(keep, 1, n);
  size_t kept = n;
  struct siox_cap_fit f;
  if ((rc = siox_cap_fit_line(x, y, n, &f)) < 0) goto done;
  for (int round = 0; round < MAX_ROUNDS; round++) {
    size_t gone = trim(x, y, keep, n, kept, &f, r, tmp);
    if (!gone) break;
    kept -= gone;
    size_t k = pack(x, y, keep, n, kx, ky);
    if ((rc = siox_cap_fit_line(kx, ky, k, &f)) < 0) goto done;
  }
  f.left_out = n - kept;
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += y[i] - (f.a_ns + f.b_ns * x[i]);
  f.excess_ns = f.left_out ? sum / (double)n : 0;
  *out = f;
  rc = 0;
done:
  free(keep);
  free(kx);
  free(ky);
  free(r);
  free(tmp);
  return rc;
}
