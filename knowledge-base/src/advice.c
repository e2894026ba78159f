/* The knowledge base's advice for a job or an application (siox_kb_advice.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "siox/siox_kb_advice.h"

#define FINDING_COLS "SELECT kind, severity, file_pattern, summary, evidence::text, expected_gain_s, coalesce(hint_set_id, 0), job"
#define FINDING_ORDER " ORDER BY severity = 'critical' DESC, severity = 'warning' DESC, expected_gain_s DESC, finding_id"
static const char findings_job_sql[] = FINDING_COLS " FROM kb_findings WHERE job = $1" FINDING_ORDER;
static const char findings_app_sql[] = FINDING_COLS
    " FROM kb_findings WHERE job = (SELECT f.job FROM kb_findings f JOIN kb_apps a USING (app_id)"
    "   WHERE a.exe = $1 ORDER BY f.created_at DESC LIMIT 1)" FINDING_ORDER;
#define SET_COLS                                                                                                    \
  "SELECT h.hint_set_id, a.exe, a.args, h.file_pattern, h.component, h.hints::text, h.rationale::text,"           \
  " h.evidence::text, h.expected_gain_s, h.source_job, h.superseded, h.created_at::text,"                         \
  " h.status, h.status_reason, coalesce(h.outcome::text, '')"                                                      \
  " FROM kb_hint_sets h JOIN kb_apps a USING (app_id)"
/* The sets of the job's latest analysis: those its findings refer to. */
static const char sets_job_sql[] = SET_COLS " WHERE h.hint_set_id IN (SELECT hint_set_id FROM kb_findings WHERE job = $1)"
                                            " ORDER BY h.expected_gain_s DESC, h.hint_set_id";
/* The live sets and the withdrawn ones (the evidence of what did not work). */
static const char sets_app_sql[] = SET_COLS " WHERE a.exe = $1 AND (NOT h.superseded OR h.status = 'withdrawn')"
                                            " ORDER BY h.status = 'withdrawn', h.expected_gain_s DESC, h.hint_set_id";
static const char sets_app_all_sql[] = SET_COLS " WHERE a.exe = $1 ORDER BY h.created_at DESC, h.hint_set_id DESC";

static PGresult *query(PGconn *c, const char *sql, const char *key, char *err, size_t errcap) {
  const char *p[1] = {key};
  PGresult *r = PQexecParams(c, sql, 1, NULL, p, NULL, NULL, 0);
  if (PQresultStatus(r) == PGRES_TUPLES_OK) return r;
  if (err && errcap) {
    snprintf(err, errcap, "reading the knowledge base: %s", PQresultErrorMessage(r));
    err[strcspn(err, "\n")] = '\0';
  }
  PQclear(r);
  return NULL;
}

static void finding(const PGresult *r, int i, struct siox_kb_finding *f) {
  *f = (struct siox_kb_finding){.kind = PQgetvalue(r, i, 0), .severity = PQgetvalue(r, i, 1),
                                .file_pattern = PQgetvalue(r, i, 2), .summary = PQgetvalue(r, i, 3),
                                .evidence_json = PQgetvalue(r, i, 4), .expected_gain_s = strtod(PQgetvalue(r, i, 5), NULL),
                                .hint_set_id = strtoll(PQgetvalue(r, i, 6), NULL, 10), .job = PQgetvalue(r, i, 7)};
}

static void hint_set(const PGresult *r, int i, struct siox_kb_hint_set *s) {
  *s = (struct siox_kb_hint_set){
      .id = strtoll(PQgetvalue(r, i, 0), NULL, 10), .exe = PQgetvalue(r, i, 1), .args = PQgetvalue(r, i, 2),
      .file_pattern = PQgetvalue(r, i, 3), .component = PQgetvalue(r, i, 4), .hints_json = PQgetvalue(r, i, 5),
      .rationale_json = PQgetvalue(r, i, 6), .evidence_json = PQgetvalue(r, i, 7),
      .expected_gain_s = strtod(PQgetvalue(r, i, 8), NULL), .source_job = PQgetvalue(r, i, 9),
      .superseded = PQgetvalue(r, i, 10)[0] == 't', .created_at = PQgetvalue(r, i, 11), .status = PQgetvalue(r, i, 12),
      .status_reason = PQgetvalue(r, i, 13), .outcome_json = PQgetvalue(r, i, 14)};
}

int siox_kb_advice_load(PGconn *c, enum siox_kb_advice_of of, const char *key, struct siox_kb_advice *out, char *err,
                        size_t errcap) {
  memset(out, 0, sizeof *out);
  const char *fsql = of == SIOX_KB_ADVICE_JOB ? findings_job_sql : findings_app_sql;
  const char *ssql = of == SIOX_KB_ADVICE_JOB ? sets_job_sql : of == SIOX_KB_ADVICE_APP ? sets_app_sql : sets_app_all_sql;
  if (!(out->res[0] = query(c, fsql, key, err, errcap)) || !(out->res[1] = query(c, ssql, key, err, errcap))) {
    siox_kb_advice_free(out);
    return -EIO;
  }
  out->nfindings = (size_t)PQntuples(out->res[0]);
  out->nsets = (size_t)PQntuples(out->res[1]);
  out->findings = calloc(out->nfindings + 1, sizeof *out->findings);
  out->sets = calloc(out->nsets + 1, sizeof *out->sets);
  if (!out->findings || !out->sets) {
    siox_kb_advice_free(out);
    return -ENOMEM;
  }
  for (size_t i = 0; i < out->nfindings; i++) finding(out->res[0], (int)i, &out->findings[i]);
  for (size_t i = 0; i < out->nsets; i++) hint_set(out->res[1], (int)i, &out->sets[i]);
  return 0;
}

void siox_kb_advice_free(struct siox_kb_advice *a) {
  free(a->findings);
  free(a->sets);
  PQclear(a->res[0]);
  PQclear(a->res[1]);
  memset(a, 0, sizeof *a);
}
