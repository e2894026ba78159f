/*
 * Writes one analysis of a job to the knowledge base (schema 006/007) in one
 * transaction: the application, one romio321 hint set per file pattern that
 * got keys (an identical live set is kept, other live sets of that
 * application, pattern and component are superseded), the job's findings
 * (replacing the previous analysis's) and the job's kb_analysis_runs row.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <siox/siox_kb.h>

#include "findings.h"

static int q(PGconn *c, const char *sql, int n, const char *const *p, PGresult **out, char *err, size_t errcap) {
  PGresult *r = PQexecParams(c, sql, n, NULL, p, NULL, NULL, 0);
  ExecStatusType st = PQresultStatus(r);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    if (err && errcap) snprintf(err, errcap, "analysis: storing: %s", PQresultErrorMessage(r));
    if (err && errcap) err[strcspn(err, "\n")] = '\0';
    PQclear(r);
    return -1;
  }
  if (out) *out = r;
  else PQclear(r);
  return 0;
}

static int64_t one_id(PGresult *r) {
  int64_t v = PQntuples(r) == 1 ? strtoll(PQgetvalue(r, 0, 0), NULL, 10) : 0;
  PQclear(r);
  return v;
}

static int64_t app_id(PGconn *c, const struct fnd_job *j, char *err, size_t errcap) {
  char hash[24];
  PGresult *r;
  snprintf(hash, sizeof hash, "%" PRId64, (int64_t)siox_kb_args_hash(j->args));
  const char *p[3] = {j->exe, hash, j->args};
  if (q(c,
        "INSERT INTO kb_apps (exe, args_hash, args) VALUES ($1, $2::bigint, $3)"
        " ON CONFLICT (exe, args_hash) DO UPDATE SET args = EXCLUDED.args RETURNING app_id",
        3, p, &r, err, errcap) < 0)
    return -1;
  return one_id(r);
}

/* Stores set s (when it has keys); sets *id to its hint_set_id, else 0.
 * A live set with the same keys and values keeps its id and takes the new
 * evidence: analyses repeat (a job's late rows make it pending again, the
 * user runs --analyze), and a run that applied "set 7" must still find set 7
 * live when nothing about the advice changed. Different values supersede it. */
static int store_set(PGconn *c, const struct fnd_job *j, const char *app, struct fnd_hintset *s, int64_t *id,
                     char *err, size_t errcap) {
  char gain[32];
  PGresult *r;
  *id = 0;
  if (json_object_object_length(s->hints) == 0) return 0;
  snprintf(gain, sizeof gain, "%.9g", s->gain_s > 0 && !s->experiment ? s->gain_s : 0);
  const char *p[9] = {app,
                      j->files[s->file].pattern,
                      json_object_to_json_string_ext(s->hints, JSON_C_TO_STRING_PLAIN),
                      json_object_to_json_string_ext(s->rationale, JSON_C_TO_STRING_PLAIN),
                      gain,
                      j->job,
                      json_object_to_json_string_ext(s->evidence, JSON_C_TO_STRING_PLAIN),
                      s->experiment ? "experiment" : "live",
                      s->experiment ? s->experiment_why : ""};
  /* Values measured worse once are not suggested again: the withdrawn set
   * stays as the evidence, and whatever is served now stays. */
  if (q(c,
        "SELECT hint_set_id FROM kb_hint_sets WHERE app_id = $1::int AND file_pattern = $2 AND component = 'romio321'"
        " AND status = 'withdrawn' AND hints = $3::jsonb ORDER BY hint_set_id DESC LIMIT 1",
        3, p, &r, err, errcap) < 0)
    return -1;
  if (one_id(r) > 0) return 0;
  if (q(c,
        "UPDATE kb_hint_sets SET rationale = $4::jsonb, expected_gain_s = $5::float8, source_job = $6,"
        " evidence = $7::jsonb WHERE app_id = $1::int AND file_pattern = $2 AND component = 'romio321'"
        " AND NOT superseded AND hints = $3::jsonb RETURNING hint_set_id",
        7, p, &r, err, errcap) < 0)
    return -1;
  if ((*id = one_id(r)) > 0) return 0;
  /* The set being superseded is remembered: a withdrawal of the new one
   * serves it again. */
  if (q(c,
        "INSERT INTO kb_hint_sets (app_id, file_pattern, component, hints, rationale, expected_gain_s, source_job,"
        " evidence, status, status_reason, previous_set_id) VALUES ($1::int, $2, 'romio321', $3::jsonb, $4::jsonb,"
        " $5::float8, $6, $7::jsonb, $8, $9, (SELECT max(hint_set_id) FROM kb_hint_sets WHERE app_id = $1::int"
        " AND file_pattern = $2 AND component = 'romio321' AND NOT superseded)) RETURNING hint_set_id",
        9, p, &r, err, errcap) < 0)
    return -1;
  *id = one_id(r);
  const char *pu[3] = {app, j->files[s->file].pattern, gain};
  snprintf(gain, sizeof gain, "%" PRId64, *id);
  return q(c,
           "UPDATE kb_hint_sets SET superseded = true WHERE app_id = $1::int AND file_pattern = $2"
           " AND component = 'romio321' AND NOT superseded AND hint_set_id <> $3::bigint",
           3, pu, NULL, err, errcap);
}

static int store_finding(PGconn *c, const struct fnd_job *j, const char *app, const struct fnd_finding *f,
                         int64_t set_id, char *err, size_t errcap) {
  char gain[32], set[24];
  snprintf(gain, sizeof gain, "%.9g", f->gain_s);
  snprintf(set, sizeof set, "%" PRId64, set_id);
  const char *p[8] = {j->job,
                      app,
                      f->file >= 0 ? j->files[f->file].pattern : "",
                      f->kind,
                      f->severity,
                      f->summary,
                      json_object_to_json_string_ext(f->evidence, JSON_C_TO_STRING_PLAIN),
                      gain};
  const char *pp[9] = {p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], set_id ? set : NULL};
  return q(c,
           "INSERT INTO kb_findings (job, app_id, file_pattern, kind, severity, summary, evidence, expected_gain_s,"
           " hint_set_id) VALUES ($1, $2::int, $3, $4, $5, $6, $7::jsonb, $8::float8, $9::bigint)",
           9, pp, NULL, err, errcap);
}

static int store_all(PGconn *c, const struct fnd_job *j, struct fnd_out *o, char *err, size_t errcap) {
  char app[24] = "";
  int64_t ids[FND_MAX_SETS] = {0};
  const char *pj[1] = {j->job};
  if (q(c, "SELECT pg_advisory_xact_lock(hashtext('siox-kb-analysis:' || $1))", 1, pj, NULL, err, errcap) < 0 ||
      q(c, "DELETE FROM kb_findings WHERE job = $1", 1, pj, NULL, err, errcap) < 0)
    return -1;
  if (j->exe[0]) {
    int64_t id = app_id(c, j, err, errcap);
    if (id < 0) return -1;
    snprintf(app, sizeof app, "%" PRId64, id);
    for (size_t i = 0; i < o->nsets; i++)
      if (store_set(c, j, app, &o->sets[i], &ids[i], err, errcap) < 0) return -1;
  }
  for (size_t i = 0; i < o->n; i++) {
    int64_t set = 0;
    for (size_t k = 0; k < o->nsets; k++)
      if (o->f[i].file >= 0 && o->sets[k].file == o->f[i].file) set = ids[k];
    if (store_finding(c, j, app[0] ? app : NULL, &o->f[i], set, err, errcap) < 0) return -1;
  }
  return 0;
}

int fnd_store(PGconn *c, const struct fnd_job *j, struct fnd_out *o, char *err, size_t errcap) {
  if (q(c, "BEGIN", 0, NULL, NULL, err, errcap) < 0) return -1;
  char end[24], nf[24], na[24];
  snprintf(end, sizeof end, "%" PRId64, j->last_end_ns);
  snprintf(nf, sizeof nf, "%zu", o->n);
  snprintf(na, sizeof na, "%zu", j->nops);
  const char *p[4] = {j->job, end, nf, na};
  /* analysed_end_ns: what the scan had seen when this analysis began (set by
   * the caller in j->last_end_ns), so that later rows make the job pending. */
  if (store_all(c, j, o, err, errcap) < 0 ||
      q(c,
        "INSERT INTO kb_analysis_runs AS r (job, seen_end_ns, analysed_end_ns, analysed_at, findings, activities)"
        " VALUES ($1, $2::bigint, $2::bigint, now(), $3::int, $4::bigint) ON CONFLICT (job) DO UPDATE SET"
        " analysed_end_ns = $2::bigint, analysed_at = now(), findings = $3::int, activities = $4::bigint,"
        " seen_end_ns = greatest(r.seen_end_ns, $2::bigint)",
        4, p, NULL, err, errcap) < 0 ||
      q(c, "COMMIT", 0, NULL, NULL, err, errcap) < 0) {
    PQclear(PQexec(c, "ROLLBACK"));
    return -1;
  }
  return 0;
}
