/*
 * Ordinary least squares of service time on request size, with the
 * classic standard errors: s^2 = SSR / (n - 2), se(b) = sqrt(s^2 / Sxx),
 * se(a) = sqrt(s^2 (1/n + mean(x)^2 / Sxx)). They assume independent
 * residuals of equal spread, which a queue-free exclusive time roughly has;
 * they are shown to the user as the model's uncertainty, not used as truth.
 */
#include <errno.h>
#include <math.h>

#include "siox_capacity.h"

/* a = mean(y), b = 0: for samples of one size, or a slope that came out
 * negative (a cost per byte below zero is noise). */
static void fit_mean(const double *y, size_t n, struct siox_cap_fit *f) {
  double sum = 0, ss = 0;
  for (size_t i = 0; i < n; i++) sum += y[i];
  double my = sum / (double)n;
  for (size_t i = 0; i < n; i++) ss += (y[i] - my) * (y[i] - my);
  f->a_ns = my;
  f->b_ns = 0;
  f->sd_ns = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
  f->se_a = n > 1 ? f->sd_ns / sqrt((double)n) : 0;
  f->se_b = 0;
}

int siox_cap_fit_line(const double *x, const double *y, size_t n, struct siox_cap_fit *out) {
  struct siox_cap_fit f = {.n = n};
  if (n == 0) return -EINVAL;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; i++) mx += x[i], my += y[i];
  mx /= (double)n;
  my /= (double)n;
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < n; i++) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
  }
  /* Sizes that differ by less than a byte in spread carry no slope. */
  if (sxx < 1.0 || sxy <= 0) {
    fit_mean(y, n, &f);
    *out = f;
    return 0;
  }
  f.b_ns = sxy / sxx;
  f.a_ns = my - f.b_ns * mx;
  if (f.a_ns < 0) { /* a fixed cost below zero: through the origin instead */
    double sxy0 = 0, sxx0 = 0;
    for (size_t i = 0; i < n; i++) sxy0 += x[i] * y[i], sxx0 += x[i] * x[i];
    f.a_ns = 0;
    f.b_ns = sxy0 / sxx0;
  }
  double ssr = 0;
  for (size_t i = 0; i < n; i++) {
    double r = y[i] - f.a_ns - f.b_ns * x[i];
    ssr += r * r;
  }
  if (n > 2) {
    double s2 = ssr / (double)(n - 2);
    f.sd_ns = sqrt(s2);
    f.se_b = sqrt(s2 / sxx);
    f.se_a = sqrt(s2 * (1.0 / (double)n + mx * mx / sxx));
    f.cov_ab = f.a_ns > 0 ? -mx * s2 / sxx : 0;
  }
  *out = f;
  return 0;
}

double siox_cap_fit_eval(const struct siox_cap_fit *f, double bytes) {
  if (!f || f->n == 0) return 0;
  double t = f->a_ns + f->b_ns * bytes;
  return t > 0 ? t : 0;
}

double siox_cap_fit_se(const struct siox_cap_fit *f, double bytes) {
  if (!f || f->n == 0) return 0;
  double v = f->se_a * f->se_a + bytes * bytes * f->se_b * f->se_b + 2 * bytes * f->cov_ab;
  return v > 0 ? sqrt(v) : 0;
}
