/*
 * The cost model behind the MPI-IO hint decisions: latency of one
 * file-system operation = a + b * bytes, fitted to the POSIX operations a job
 * actually made, and ROMIO's data-sieving arithmetic (how many windows of
 * which size an access costs). Pure functions, no database: the unit tests
 * check their values exactly.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"

struct size_stat {
  double bytes, sum_ns;
  long n;
};

static int by_bytes(const void *a, const void *b) {
  double x = ((const struct size_stat *)a)->bytes, y = ((const struct size_stat *)b)->bytes;
  return (x > y) - (x < y);
}

/* Groups the samples by size; returns the number of distinct sizes in
 * st[0..n) (sorted by size). */
static size_t group_sizes(const double *bytes, const double *ns, size_t n, struct size_stat *st) {
  for (size_t i = 0; i < n; i++) st[i] = (struct size_stat){bytes[i], ns[i], 1};
  qsort(st, n, sizeof *st, by_bytes);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (k && st[k - 1].bytes == st[i].bytes) {
      st[k - 1].sum_ns += st[i].sum_ns;
      st[k - 1].n++;
    } else {
      st[k++] = st[i];
    }
  }
  return k;
}

/* Least squares over all samples; 0 when the line is usable (a, b >= 0). */
static int least_squares(const double *x, const double *y, size_t n, double *a, double *b) {
  double mx = 0, my = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < n; i++) mx += x[i], my += y[i];
  mx /= (double)n, my /= (double)n;
  for (size_t i = 0; i < n; i++) sxx += (x[i] - mx) * (x[i] - mx), sxy += (x[i] - mx) * (y[i] - my);
  if (sxx <= 0) return -1;
  *b = sxy / sxx;
  *a = my - *b * mx;
  return *a >= 0 && *b >= 0 ? 0 : -1;
}

static void one_size(const struct size_stat *s, const struct fnd_cost *floor, struct fnd_cost *out) {
  double lat = s->sum_ns / (double)s->n;
  out->one_size = s->bytes;
  if (floor && floor->a_ns < lat && s->bytes > 0) {
    out->a_ns = floor->a_ns;
    out->b_ns = (lat - floor->a_ns) / s->bytes;
    snprintf(out->how, sizeof out->how,
             "one size observed (%.0f B, mean %.0f us): fixed cost a taken from the smallest operations seen on "
             "the mount (%.200s), the rest per byte",
             s->bytes, lat / 1e3, floor->how);
  } else {
    out->a_ns = lat;
    out->b_ns = 0;
    snprintf(out->how, sizeof out->how,
             "one size observed (%.0f B, mean %.0f us) and nothing smaller on the mount: per-byte cost unknown, "
             "taken as 0",
             s->bytes, lat / 1e3);
  }
}

int fnd_cost_fit(const double *bytes, const double *ns, size_t n, const struct fnd_cost *floor, struct fnd_cost *out) {
  memset(out, 0, sizeof *out);
  if (n == 0) return -1;
  struct size_stat *st = malloc(n * sizeof *st);
  if (!st) return -1;
  size_t k = group_sizes(bytes, ns, n, st);
  out->samples = (long)n;
  out->sizes = (long)k;
  out->max_size = st[k - 1].bytes;
  if (k == 1) {
    one_size(&st[0], floor, out);
  } else if (least_squares(bytes, ns, n, &out->a_ns, &out->b_ns) == 0) {
    snprintf(out->how, sizeof out->how, "least squares over %zu operations of %zu sizes (%.0f..%.0f B)", n, k,
             st[0].bytes, st[k - 1].bytes);
  } else {
    /* Noise (or caching) can tilt the fit below zero; the mean latencies of
     * the extreme sizes still bound the line. */
    double l0 = st[0].sum_ns / (double)st[0].n, l1 = st[k - 1].sum_ns / (double)st[k - 1].n;
    out->b_ns = l1 > l0 ? (l1 - l0) / (st[k - 1].bytes - st[0].bytes) : 0;
    out->a_ns = fmax(0, l0 - out->b_ns * st[0].bytes);
    snprintf(out->how, sizeof out->how,
             "line through the mean latencies of the smallest (%.0f B) and largest (%.0f B) of %zu operations "
             "(least squares gave a negative term)",
             st[0].bytes, st[k - 1].bytes, n);
  }
  free(st);
  return 0;
}

double fnd_cost_op(const struct fnd_cost *m, double bytes) { return m->a_ns + m->b_ns * bytes; }

/* Mirrors ROMIO's ADIOI_BUFFERED_WRITE: a piece past the window starts a new
 * window at the piece; a piece running past the window's end continues in a
 * window that starts where the previous one ended. */
long fnd_ds_windows(const struct fnd_layout *l, int64_t w, int64_t *bytes) {
  long n = 0;
  int64_t total = 0, wend = 0;
  if (l->pieces <= 0 || l->piece <= 0 || w <= 0) {
    if (bytes) *bytes = 0;
    return 0;
  }
  int64_t end = (int64_t)(l->pieces - 1) * l->stride + l->piece;
  for (long i = 0; i < l->pieces; i++) {
    int64_t p = (int64_t)i * l->stride, pend = p + l->piece;
    if (n == 0 || p >= wend) {
      wend = p + w < end ? p + w : end;
      total += wend - p;
      n++;
    }
    while (pend > wend) {
      int64_t ws = wend;
      wend = ws + w < end ? ws + w : end;
      total += wend - ws;
      n++;
    }
  }
  if (bytes) *bytes = total;
  return n;
}

double fnd_cost_direct(const struct fnd_cost *m, const struct fnd_layout *l) {
  return (double)l->pieces * fnd_cost_op(m, (double)l->piece) / 1e9;
}

double fnd_cost_sieve(const struct fnd_cost *m, const struct fnd_layout *l, int64_t w, int write) {
  int64_t bytes = 0;
  long n = fnd_ds_windows(l, w, &bytes);
  double one_pass = (double)n * m->a_ns + m->b_ns * (double)bytes;
  return (write ? 2 : 1) * one_pass / 1e9;
}
