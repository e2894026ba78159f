/*
 * The outcome of an applied hint set, measured: the runs (jobs) of the same
 * application (executable and arguments) that opened a file of the set's
 * pattern are split into those whose opens applied the set (mpi/hint_set)
 * and those that applied none; runs with the same number of processes and
 * within 4x of the same bytes on the pattern are comparable. Each run's
 * MPI-IO data calls on files of the pattern (the calls the hints act on)
 * go to the outcome rule (outcome_rule.c). The judgement is stored in the
 * set (schema 016); a set measured slower beyond noise is withdrawn and the
 * set it superseded is live again; an experiment becomes live when
 * measured faster and is withdrawn otherwise.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <siox/siox_kb.h>

#include "hints_outcome.h"
#include "outcome_rule.h"

#define MAX_RUNS 16 /* per side, the newest */

/* Per job of the application with an open of the pattern: whether one of
 * those opens applied the set ($4), whether none applied any set. */
static const char runs_sql[] =
    "SELECT job, bool_or(hint_set = $4::bigint), bool_and(hint_set IS NULL) FROM siox_app_mpi_opens($1, $2)"
    " WHERE regexp_replace(path, '[0-9]+', '#', 'g') = $3"
    " GROUP BY job ORDER BY max(start_ns) DESC";

static int fail(char *err, size_t cap, const char *what, PGresult *r) {
  if (err && cap) snprintf(err, cap, "judging hint sets: %s: %s", what, r ? PQresultErrorMessage(r) : "out of memory");
  if (err && cap) err[strcspn(err, "\n")] = '\0';
  PQclear(r);
  return -1;
}

/* One run's affected calls. */
struct run_calls {
  struct kb_call *calls;
  size_t n;
  double bytes;
  size_t procs;
  char job[256];
};

static int load_run(PGconn *c, const char *job, const char *pattern, struct run_calls *r, char *err, size_t cap) {
  struct fnd_job j;
  memset(r, 0, sizeof *r);
  snprintf(r->job, sizeof r->job, "%s", job);
  long n = fnd_job_load(c, job, &j, err, cap);
  if (n < 0) {
    fnd_job_free(&j);
    return -1;
  }
  r->calls = malloc((j.ncalls + 1) * sizeof *r->calls);
  if (!r->calls) {
    fnd_job_free(&j);
    return fail(err, cap, "runs", NULL);
  }
  for (size_t a = 0; a < j.ncalls; a++) {
    const struct fnd_op *op = &j.ops[j.calls[a].op];
    if (op->file < 0 || strcmp(j.files[op->file].pattern, pattern) != 0) continue;
    double bytes = op->bytes > 0 ? (double)op->bytes : 0;
    r->calls[r->n++] = (struct kb_call){(double)(op->end_ns - op->start_ns) / 1e9, bytes};
    r->bytes += bytes;
  }
  r->procs = j.nprocs;
  fnd_job_free(&j);
  return 0;
}

static int by_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The runs without the set that are comparable to the runs with it: the
 * same number of processes as the first run with it, bytes on the pattern
 * within 4x of the with-runs' median. Returns how many are kept in place. */
static size_t comparable(struct run_calls *with, size_t nw, struct run_calls *wo, size_t nwo) {
  double b[MAX_RUNS];
  size_t n = 0, kept = 0;
  for (size_t i = 0; i < nw; i++)
    if (with[i].n) b[n++] = with[i].bytes;
  if (!n) return nwo;
  qsort(b, n, sizeof *b, by_dbl);
  double med = b[n / 2];
  for (size_t i = 0; i < nwo; i++) {
    int ok = wo[i].procs == with[0].procs && (med <= 0 || (wo[i].bytes >= med / 4 && wo[i].bytes <= med * 4));
    if (ok) wo[kept++] = wo[i];
    else free(wo[i].calls);
  }
  return kept;
}

static json_object *outcome_json(const struct kb_outcome *o, const struct run_calls *w, size_t nw,
                                 const struct run_calls *wo, size_t nwo) {
  json_object *x = json_object_new_object(), *jw = json_object_new_array(), *jwo = json_object_new_array();
  json_object_object_add(x, "verdict", json_object_new_string(kb_verdict_name(o->verdict)));
  if (o->verdict != KB_NOT_MEASURED) {
    fnd_jnum(x, "speedup", o->speedup);
    fnd_jnum(x, "ci_low", o->ci_low);
    fnd_jnum(x, "ci_high", o->ci_high);
  }
  json_object_object_add(x, "per", json_object_new_string(o->per_byte ? "byte" : "call"));
  fnd_jint(x, "runs_with", (int64_t)o->runs_with);
  fnd_jint(x, "runs_without", (int64_t)o->runs_without);
  fnd_jint(x, "calls_with", (int64_t)o->calls_with);
  fnd_jint(x, "calls_without", (int64_t)o->calls_without);
  for (size_t i = 0; i < nw; i++)
    if (w[i].n) json_object_array_add(jw, json_object_new_string(w[i].job));
  for (size_t i = 0; i < nwo; i++)
    if (wo[i].n) json_object_array_add(jwo, json_object_new_string(wo[i].job));
  json_object_object_add(x, "jobs_with", jw);
  json_object_object_add(x, "jobs_without", jwo);
  return x;
}

static int exec_p(PGconn *c, const char *sql, int n, const char *const *p, char *err, size_t cap) {
  PGresult *r = PQexecParams(c, sql, n, NULL, p, NULL, NULL, 0);
  if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK) return fail(err, cap, "store", r);
  PQclear(r);
  return 0;
}

/* What the judgement does to the set: its new status and why ('' keep). */
static const char *decide(const char *status, const struct kb_outcome *o, char *why, size_t cap) {
  char fig[160];
  snprintf(fig, sizeof fig, "%.2fx [%.2f, %.2f] over %zu run(s) with it and %zu without", o->speedup, o->ci_low,
           o->ci_high, o->runs_with, o->runs_without);
  why[0] = '\0';
  if (o->verdict == KB_SLOWER) {
    snprintf(why, cap, "measured slower than the runs without it beyond noise: %s", fig);
    return "withdrawn";
  }
  if (strcmp(status, "experiment") != 0 || o->verdict == KB_NOT_MEASURED) return NULL;
  if (o->verdict == KB_FASTER) {
    snprintf(why, cap, "experiment measured faster: %s", fig);
    return "live";
  }
  snprintf(why, cap, "experiment without a measured gain (%s): not worth the risk", fig);
  return "withdrawn";
}

/* Stores the outcome; withdraws or confirms. One transaction. */
static int store(PGconn *c, const char *id, const char *status, const struct kb_outcome *o, json_object *x,
                 char *err, size_t cap) {
  char why[400];
  const char *to = decide(status, o, why, sizeof why);
  const char *p[2] = {id, json_object_to_json_string_ext(x, JSON_C_TO_STRING_PLAIN)}, *pw[2] = {id, why};
  if (exec_p(c, "BEGIN", 0, NULL, err, cap) < 0) return -1;
  int rc = exec_p(c, "SELECT pg_advisory_xact_lock(hashtext('siox-kb-hint-set:' || $1))", 1, p, err, cap);
  if (!rc) rc = exec_p(c, "UPDATE kb_hint_sets SET outcome = $2::jsonb, judged_at = now() WHERE hint_set_id = $1::bigint",
                       2, p, err, cap);
  if (!rc && to && !strcmp(to, "live"))
    rc = exec_p(c, "UPDATE kb_hint_sets SET status = 'live', status_reason = $2 WHERE hint_set_id = $1::bigint", 2, pw, err,
                cap);
  if (!rc && to && !strcmp(to, "withdrawn")) {
    /* The set it superseded is served again, unless it was withdrawn too or
     * another set has been made live since. */
    rc = exec_p(c,
                "WITH w AS (UPDATE kb_hint_sets SET status = 'withdrawn', superseded = true, status_reason = $2"
                "            WHERE hint_set_id = $1::bigint RETURNING app_id, file_pattern, component, previous_set_id)"
                " UPDATE kb_hint_sets h SET superseded = false FROM w"
                "  WHERE h.hint_set_id = w.previous_set_id AND h.status <> 'withdrawn'"
                "    AND NOT EXISTS (SELECT 1 FROM kb_hint_sets o WHERE o.app_id = w.app_id AND o.file_pattern ="
                "        w.file_pattern AND o.component = w.component AND NOT o.superseded AND o.hint_set_id <> $1::bigint)",
                2, pw, err, cap);
  }
  if (!rc) rc = exec_p(c, "COMMIT", 0, NULL, err, cap);
  if (rc) PQclear(PQexec(c, "ROLLBACK"));
  return rc;
}

static void free_runs(struct run_calls *r, size_t n) {
  for (size_t i = 0; i < n; i++) free(r[i].calls);
}

/* Judges set id (of exe, args, pattern, in status); *withdrawn when it is
 * withdrawn after. */
static int judge_set(PGconn *c, const char *id, const char *exe, const char *args, const char *pattern,
                     const char *status, int *withdrawn, char *err, size_t cap) {
  const char *p[4] = {exe, args, pattern, id};
  PGresult *r = PQexecParams(c, runs_sql, 4, NULL, p, NULL, NULL, 0);
  if (PQresultStatus(r) != PGRES_TUPLES_OK) return fail(err, cap, "runs", r);
  struct run_calls w[MAX_RUNS], wo[MAX_RUNS];
  size_t nw = 0, nwo = 0;
  int rc = 0;
  for (int i = 0; i < PQntuples(r) && rc == 0; i++) {
    int with = PQgetvalue(r, i, 1)[0] == 't', plain = PQgetvalue(r, i, 2)[0] == 't';
    struct run_calls *dst = with && nw < MAX_RUNS ? &w[nw++] : plain && !with && nwo < MAX_RUNS ? &wo[nwo++] : NULL;
    if (dst && load_run(c, PQgetvalue(r, i, 0), pattern, dst, err, cap) < 0) rc = -1;
  }
  PQclear(r);
  struct kb_run rw[MAX_RUNS], rwo[MAX_RUNS];
  struct kb_outcome o;
  if (rc == 0) {
    nwo = comparable(w, nw, wo, nwo);
    for (size_t i = 0; i < nw; i++) rw[i] = (struct kb_run){w[i].calls, w[i].n};
    for (size_t i = 0; i < nwo; i++) rwo[i] = (struct kb_run){wo[i].calls, wo[i].n};
    rc = kb_outcome_judge(rw, nw, rwo, nwo, &o) < 0 ? fail(err, cap, "outcome", NULL) : 0;
  }
  if (rc == 0) {
    json_object *x = outcome_json(&o, w, nw, wo, nwo);
    rc = store(c, id, status, &o, x, err, cap);
    json_object_put(x);
    char why[400];
    const char *to = decide(status, &o, why, sizeof why);
    *withdrawn = rc == 0 && to && !strcmp(to, "withdrawn");
  }
  free_runs(w, nw);
  free_runs(wo, nwo);
  return rc;
}

/* The sets to judge for job: the ones it applied, else the app's live and
 * experiment sets. Column 4: the job applied it. */
static const char sets_sql[] =
    "WITH applied AS (SELECT DISTINCT hint_set AS id FROM siox_job_mpi_opens($1))"
    " SELECT h.hint_set_id, a.exe, a.args, h.file_pattern, h.status, h.hint_set_id IN (SELECT id FROM applied)"
    "   FROM kb_hint_sets h JOIN kb_apps a USING (app_id)"
    "  WHERE h.hint_set_id IN (SELECT id FROM applied)"
    "     OR (NOT EXISTS (SELECT 1 FROM applied WHERE id IS NOT NULL) AND a.exe = $2 AND a.args = $3"
    "         AND h.status <> 'withdrawn' AND h.judged_at IS NOT NULL)"
    "  ORDER BY h.hint_set_id";

int kb_judge_for_job(PGconn *c, const struct fnd_job *j, int *withdrawn_own, char *err, size_t errcap) {
  *withdrawn_own = 0;
  if (!j->exe[0]) return 0;
  const char *p[3] = {j->job, j->exe, j->args};
  PGresult *r = PQexecParams(c, sets_sql, 3, NULL, p, NULL, NULL, 0);
  if (PQresultStatus(r) != PGRES_TUPLES_OK) return fail(err, errcap, "sets", r);
  int n = 0, rc = 0;
  for (int i = 0; i < PQntuples(r) && rc == 0; i++) {
    int own = PQgetvalue(r, i, 5)[0] == 't', withdrawn = !strcmp(PQgetvalue(r, i, 4), "withdrawn");
    if (!withdrawn && judge_set(c, PQgetvalue(r, i, 0), PQgetvalue(r, i, 1), PQgetvalue(r, i, 2),
                                PQgetvalue(r, i, 3), PQgetvalue(r, i, 4), &withdrawn, err, errcap) < 0)
      rc = -1;
    else n++;
    if (own && withdrawn) *withdrawn_own = 1;
  }
  PQclear(r);
  return rc < 0 ? -1 : n;
}
