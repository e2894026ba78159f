/*
 * The findings of jobs as the front ends show them (`siox jobs`, the job
 * page of `siox web`): kb_findings read here, so that no front end reads
 * the knowledge base's tables itself.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "siox/siox_kb.h"

static int failed(PGresult *res, PGconn *c, const char *what, char *err, size_t errcap) {
  if (err) snprintf(err, errcap, "%s: %s", what, PQerrorMessage(c));
  if (err) err[strcspn(err, "\n")] = '\0';
  PQclear(res);
  return -1;
}

int siox_kb_count_findings(PGconn *c, json_object *jobs, char *err, size_t errcap) {
  PGresult *res = PQexec(c, "SELECT job, count(*) FROM kb_findings GROUP BY job");
  if (PQresultStatus(res) != PGRES_TUPLES_OK) return failed(res, c, "counting the jobs' findings", err, errcap);
  for (size_t i = 0; i < json_object_array_length(jobs); i++) {
    json_object *j = json_object_array_get_idx(jobs, i);
    const char *name = json_object_get_string(json_object_object_get(j, "job"));
    int64_t n = 0;
    for (int r = 0; name && r < PQntuples(res); r++)
      if (strcmp(PQgetvalue(res, r, 0), name) == 0) n = strtoll(PQgetvalue(res, r, 1), NULL, 10);
    json_object_object_add(j, "findings", json_object_new_int64(n));
  }
  PQclear(res);
  return 0;
}

static const char findings_sql[] =
    "SELECT f.kind, f.severity, f.summary, f.file_pattern, f.expected_gain_s, f.evidence::text,"
    "       h.hints::text, h.component"
    "  FROM kb_findings f LEFT JOIN kb_hint_sets h ON h.hint_set_id = f.hint_set_id"
    " WHERE f.job = $1 ORDER BY f.expected_gain_s DESC, f.finding_id";

int siox_kb_job_findings(PGconn *c, const char *job, json_object **out, char *err, size_t errcap) {
  const char *params[] = {job};
  PGresult *res = PQexecParams(c, findings_sql, 1, NULL, params, NULL, NULL, 0);
  if (PQresultStatus(res) != PGRES_TUPLES_OK) return failed(res, c, "reading the job's findings", err, errcap);
  json_object *arr = json_object_new_array();
  for (int r = 0; r < PQntuples(res); r++) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "kind", json_object_new_string(PQgetvalue(res, r, 0)));
    json_object_object_add(o, "severity", json_object_new_string(PQgetvalue(res, r, 1)));
    json_object_object_add(o, "summary", json_object_new_string(PQgetvalue(res, r, 2)));
    json_object_object_add(o, "file_pattern", json_object_new_string(PQgetvalue(res, r, 3)));
    json_object_object_add(o, "expected_gain_s", json_object_new_double(strtod(PQgetvalue(res, r, 4), NULL)));
    json_object_object_add(o, "evidence", json_tokener_parse(PQgetvalue(res, r, 5)));
    json_object_object_add(o, "hints", PQgetisnull(res, r, 6) ? NULL : json_tokener_parse(PQgetvalue(res, r, 6)));
    json_object_object_add(o, "component",
                           PQgetisnull(res, r, 7) ? NULL : json_object_new_string(PQgetvalue(res, r, 7)));
    json_object_array_add(arr, o);
  }
  PQclear(res);
  *out = arr;
  return 0;
}
