/*
 * Validation (issue 13 section 5): a scenario's prediction against real
 * runs of it. The runs are read back from the warehouse like any job, so a
 * measured figure always comes from a trace SIOX stored; a run that is not
 * there, or that did not do the scenario's work, is an error, never a
 * silent zero.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "siox/siox_wh.h"
#include "siox_capacity.h"

#define MAX_PARTS 8

int64_t siox_cap_io_time(const siox_workload *w) {
  uint32_t nr = siox_wl_ranks(w);
  int64_t *t = calloc(nr ? nr : 1, sizeof(*t)), most = 0;
  if (!t) return -ENOMEM;
  for (size_t i = 0; i < siox_wl_nrecs(w); i++) {
    const struct siox_wl_rec *r = siox_wl_rec(w, i);
    t[r->rank] += r->dur_ns;
  }
  for (uint32_t r = 0; r < nr; r++) most = t[r] > most ? t[r] : most;
  free(t);
  return most;
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double siox_cap_median(double *v, size_t n) {
  if (!n) return 0;
  qsort(v, n, sizeof(*v), cmp_dbl);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int64_t siox_cap_measured(const int64_t *t, size_t n, uint32_t copies) {
  if (!n || !copies || n % copies) return -EINVAL;
  size_t reps = n / copies;
  double *mean = malloc(reps * sizeof(*mean));
  if (!mean) return -ENOMEM;
  for (size_t r = 0; r < reps; r++) {
    double sum = 0;
    for (uint32_t k = 0; k < copies; k++) sum += (double)t[r * copies + k];
    mean[r] = sum / copies;
  }
  int64_t m = (int64_t)llround(siox_cap_median(mean, reps));
  free(mean);
  return m;
}

static uint64_t bytes_moved(const siox_workload *w) {
  uint64_t b = 0;
  for (size_t i = 0; i < siox_wl_nrecs(w); i++) {
    const struct siox_wl_rec *r = siox_wl_rec(w, i);
    if (siox_wl_op_is_data((int)r->op)) b += r->bytes;
  }
  return b;
}

/* The predicted mean I/O time of one copy under c's scenario. */
static int predict(const siox_cap_model *m, const struct siox_cap_validate_case *c,
                   const struct siox_cap_predict_opts *opts, struct siox_cap_validate_result *out, char *err,
                   size_t errlen) {
  struct siox_cap_scenario s[MAX_PARTS];
  char spec[512];
  int ns = 0;
  if (c->spec && strcmp(c->spec, "as-is") != 0) {
    if (snprintf(spec, sizeof spec, "%s", c->spec) >= (int)sizeof spec) {
      snprintf(err, errlen, "scenario too long");
      return -EINVAL;
    }
    if ((ns = siox_cap_scenarios_parse(spec, s, MAX_PARTS, err, errlen)) < 0) return ns;
  }
  struct siox_cap_predict_opts po = *opts;
  po.replay_dir = c->replay_dir;
  /* A replay's files are placed by their path on the volume they ran on. */
  if (c->replay_dir && c->run_mount) po.mount = c->run_mount;
  struct siox_cap_answer ans;
  int rc = siox_cap_predict(m, c->w, s, (size_t)ns, &po, &ans, err, errlen);
  if (rc < 0) return rc;
  double sum = 0;
  for (uint32_t k = 0; k < ans.run.copies; k++) sum += (double)ans.run.job_io_ns[k];
  out->copies = ans.run.copies;
  out->ranks = ans.run.ranks;
  out->predicted_ns = (int64_t)llround(sum / ans.run.copies);
  out->unmatched_syncs = ans.run.unmatched_syncs;
  siox_cap_answer_free(&ans);
  return 0;
}

/* The I/O time of run `job`, checked to be a run of c. */
static int measure_one(PGconn *pg, const struct siox_cap_validate_case *c, const char *job, int64_t *io_ns,
                       char *err, size_t errlen) {
  char prefix[4096];
  const char *own[2] = {prefix, NULL};
  struct siox_wl_extract_opts xo = {.job = job, .prefixes = c->prefixes};
  if (c->replay_dir) {
    /* Only the replayed files: siox-replay's own reading of the workload file is not the workload. */
    snprintf(prefix, sizeof prefix, "%s/", c->replay_dir);
    xo.prefixes = own;
  }
  struct siox_wl_extract_stats st;
  siox_workload *got = NULL;
  char why[512] = "";
  int rc = siox_wl_extract(pg, &xo, &got, &st, why, sizeof why);
  if (rc == -ENOENT) {
    snprintf(err, errlen, "no run of job '%s' in the warehouse (run the scenario first)", job);
    return rc;
  }
  if (rc < 0) {
    snprintf(err, errlen, "job '%s': %s", job, why[0] ? why : strerror(-rc));
    return rc;
  }
  uint64_t want = bytes_moved(c->w), moved = bytes_moved(got);
  if (siox_wl_ranks(got) != siox_wl_ranks(c->w) || moved != want) {
    /* An incomplete trace is not a wrong run: say which, from the loss account. */
    struct siox_wh_loss l = {0};
    char lost[256] = "";
    if (siox_wh_loss(pg, job, 0, &l, why, sizeof why) == 0 &&
        l.dropped_client + l.dropped_exit + l.dropped_daemon_spool + l.dropped_daemon_invalid + l.unaccounted + l.unreported > 0)
      snprintf(lost, sizeof lost,
               " (its trace is incomplete: %lld activities dropped by the client, %lld at exit, %lld by the daemon, "
               "%lld unaccounted, %lld processes unreported)",
               (long long)l.dropped_client, (long long)l.dropped_exit,
               (long long)(l.dropped_daemon_spool + l.dropped_daemon_invalid), (long long)l.unaccounted,
               (long long)l.unreported);
    snprintf(err, errlen,
             "job '%s' is not a run of this scenario: %u ranks moved %llu bytes%s%s, the scenario's workload has %u "
             "ranks and %llu bytes%s",
             job, siox_wl_ranks(got), (unsigned long long)moved, c->replay_dir ? " under " : "",
             c->replay_dir ? c->replay_dir : "", siox_wl_ranks(c->w), (unsigned long long)want, lost);
    siox_wl_free(got);
    return -EINVAL;
  }
  *io_ns = siox_cap_io_time(got);
  siox_wl_free(got);
  return *io_ns < 0 ? (int)*io_ns : 0;
}

int siox_cap_validate(PGconn *pg, const siox_cap_model *m, const struct siox_cap_validate_case *c,
                      const struct siox_cap_predict_opts *opts, struct siox_cap_validate_result *out, char *err,
                      size_t errlen) {
  char why[1024] = "";
  memset(out, 0, sizeof(*out));
  int rc = predict(m, c, opts, out, why, sizeof why);
  if (rc == 0 && (c->nmeasured < out->copies || c->nmeasured % out->copies)) {
    snprintf(why, sizeof why,
             "the scenario runs %u concurrent copies: give %u measured runs, not %zu (or a multiple of %u for "
             "repeats of the scenario, each repeat's copies in a row)",
             out->copies, out->copies, c->nmeasured, out->copies);
    rc = -EINVAL;
  }
  int64_t *t = rc == 0 ? calloc(c->nmeasured, sizeof(*t)) : NULL;
  if (rc == 0 && !t) rc = -ENOMEM;
  for (size_t i = 0; rc == 0 && i < c->nmeasured; i++) {
    if ((rc = measure_one(pg, c, c->measured[i], &t[i], why, sizeof why)) < 0) break;
    if (i == 0 || t[i] < out->measured_min_ns) out->measured_min_ns = t[i];
    if (t[i] > out->measured_max_ns) out->measured_max_ns = t[i];
  }
  if (rc == 0) {
    out->repeats = (uint32_t)(c->nmeasured / out->copies);
    out->measured_ns = siox_cap_measured(t, c->nmeasured, out->copies);
  }
  free(t);
  if (rc < 0) {
    snprintf(err, errlen, "%s: %s", c->name, why[0] ? why : strerror(-rc));
    return rc;
  }
  if (out->measured_ns <= 0) {
    snprintf(err, errlen, "%s: the runs spent no time in I/O: nothing to compare with", c->name);
    return -EINVAL;
  }
  out->error_pct = 100.0 * fabs((double)(out->predicted_ns - out->measured_ns)) / (double)out->measured_ns;
  return 0;
}
