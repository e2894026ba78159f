/*
 * Critical files by IOMiner's sweep line: the job's busy time (the union of
 * its I/O intervals; idle gaps left out) is shared among the files being
 * accessed at each instant, equally; a file's exclusive time is its share.
 * The shares add up to the busy time, so the files that own most of it are
 * the ones whose I/O the job waited on.
 *
 * O(n log n): one sort of the 2n end points, then one pass. Dividing each
 * elementary segment among its k files directly would cost O(k) a segment;
 * instead the pass integrates 1/k over busy time into `potential` and a file
 * takes potential(leave) - potential(enter) for each span it is active in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "siox/siox_wh.h"

struct point {
  int64_t t;
  uint32_t file;
  int delta; /* +1 enter, -1 leave */
};

static int by_time(const void *a, const void *b) {
  const struct point *x = a, *y = b;
  return x->t < y->t ? -1 : x->t > y->t;
}

struct file_state {
  uint32_t active;  /* spans of this file open now */
  int64_t since;    /* when active last went 0 -> 1 */
  double potential; /* potential then */
};

int siox_wh_critical_files(const struct siox_wh_span *s, size_t n, size_t nfiles, struct siox_wh_file_share *out,
                           int64_t *busy_ns) {
  memset(out, 0, nfiles * sizeof(*out));
  *busy_ns = 0;
  struct point *p = malloc((2 * n + 1) * sizeof(*p));
  struct file_state *f = calloc(nfiles ? nfiles : 1, sizeof(*f));
  if (!p || !f) {
    free(p);
    free(f);
    return -ENOMEM;
  }
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i].end_ns <= s[i].start_ns || s[i].file >= nfiles) continue; /* empty: no time to share */
    p[m++] = (struct point){s[i].start_ns, s[i].file, +1};
    p[m++] = (struct point){s[i].end_ns, s[i].file, -1};
  }
  qsort(p, m, sizeof(*p), by_time);
  double potential = 0;
  uint32_t k = 0; /* files active in the segment that ends at p[i].t */
  for (size_t i = 0; i < m; i++) {
    if (i > 0 && k > 0) {
      int64_t len = p[i].t - p[i - 1].t;
      potential += (double)len / k;
      *busy_ns += len;
    }
    struct file_state *x = &f[p[i].file];
    if (p[i].delta > 0 && x->active++ == 0) {
      x->since = p[i].t;
      x->potential = potential;
      k++;
    } else if (p[i].delta < 0 && --x->active == 0) {
      out[p[i].file].busy_ns += p[i].t - x->since;
      out[p[i].file].exclusive_ns += potential - x->potential;
      k--;
    }
  }
  free(p);
  free(f);
  return 0;
}
