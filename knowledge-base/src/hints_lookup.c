/*
 * Hint lookup: the knowledge-base side of hint delivery. siox-server calls
 * it (on its hint thread, never the ingest thread) when a daemon forwards an
 * MPI_File_open's question "which hints for this application and file?".
 * Reads kb_apps / kb_hint_sets (schema 006, 016); writes only the claim of
 * an experiment by the run it is tried on (schema 022).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <siox/siox_kb.h>

/* How long a run holds an experiment it claimed (see claim_sql). */
#define CLAIM_LAPSE "1 day"

/* The newest set of this executable, pattern and component; a set of the
 * exact command line wins over one of other arguments. Withdrawn sets
 * (measured slower, schema 016) are never served. */
static const char lookup_sql[] =
    "SELECT h.hint_set_id, h.component, h.hints::text, h.status, h.experiment_run, p.hint_set_id,"
    "       p.component, p.hints::text, h.experiment_claimed_at < now() - interval '" CLAIM_LAPSE "'"
    " FROM kb_hint_sets h JOIN kb_apps a USING (app_id)"
    " LEFT JOIN kb_hint_sets p ON p.hint_set_id = h.previous_set_id AND p.status = 'live'"
    " WHERE a.exe = $1 AND h.file_pattern = $3 AND h.component = $4 AND NOT h.superseded"
    "   AND h.status <> 'withdrawn'"
    " ORDER BY (a.args_hash = $2::bigint) DESC, h.created_at DESC, h.hint_set_id DESC LIMIT 1";

/* An experiment is tried on one run: the first run that asks claims it.
 * The row lock makes concurrent claims of two runs exclusive: the loser's
 * UPDATE re-reads the claim, finds it set and fresh, and returns nothing.
 * A claim lapses after CLAIM_LAPSE with the set still an experiment: its
 * run never ended or was never analysed, and the experiment would
 * otherwise never be judged (schema 025). */
static const char claim_sql[] =
    "UPDATE kb_hint_sets SET experiment_run = $2, experiment_claimed_at = now()"
    " WHERE hint_set_id = $1::bigint AND status = 'experiment'"
    " AND (experiment_run IS NULL OR experiment_claimed_at < now() - interval '" CLAIM_LAPSE "')"
    " RETURNING hint_set_id";

static int fail(char *err, size_t errcap, const char *fmt, const char *a, const char *b) {
  if (err && errcap) snprintf(err, errcap, fmt, a, b);
  return -1;
}

/* Copies src into dst[cap] whole, or fails: a cut hint value would be a
 * different (wrong) hint. */
static int copy_whole(char *dst, size_t cap, const char *src) {
  size_t n = strlen(src);
  if (n >= cap) return -1;
  memcpy(dst, src, n + 1);
  return 0;
}

/* Fills out->hints from the JSON object text of kb_hint_sets.hints. */
static int parse_hints(const char *text, struct siox_kb_hintset *out, char *err, size_t errcap) {
  json_object *o = json_tokener_parse(text);
  if (!o || !json_object_is_type(o, json_type_object)) {
    json_object_put(o);
    return fail(err, errcap, "hints is not a JSON object: %.200s%s", text, "");
  }
  int rc = 0;
  json_object_object_foreach(o, key, val) {
    const char *v = json_object_get_string(val); /* numbers become their text */
    if (out->n == SIOX_KB_MAX_HINTS) {
      rc = fail(err, errcap, "hint set has more than %s keys%s", "32", "");
      break;
    }
    struct siox_kb_hint *h = &out->hints[out->n];
    if (!v || copy_whole(h->key, sizeof h->key, key) < 0 || copy_whole(h->value, sizeof h->value, v) < 0) {
      rc = fail(err, errcap, "hint %s: key or value too long (or null)%s", key, "");
      break;
    }
    out->n++;
  }
  json_object_put(o);
  return rc;
}

/* 1 when run may have the experiment in row 0 of r: it claimed it before,
 * or claims it now (free, or another run's claim lapsed); 0 when another
 * run holds it; -1 when the claim failed
 * (err says why). A run without a job id never does: it could not be told
 * from the next run, and the experiment would reach many. */
static int experiment_is_ours(PGconn *c, PGresult *r, const char *run, char *err, size_t errcap) {
  if (!run || !*run) return 0;
  int lapsed = !PQgetisnull(r, 0, 8) && PQgetvalue(r, 0, 8)[0] == 't';
  if (!PQgetisnull(r, 0, 4) && (strcmp(PQgetvalue(r, 0, 4), run) == 0 || !lapsed))
    return strcmp(PQgetvalue(r, 0, 4), run) == 0;
  const char *params[2] = {PQgetvalue(r, 0, 0), run};
  PGresult *u = PQexecParams(c, claim_sql, 2, NULL, params, NULL, NULL, 0);
  int ours = PQresultStatus(u) == PGRES_TUPLES_OK ? PQntuples(u) == 1
                                                   : fail(err, errcap, "claiming experiment: %s%s",
                                                          PQresultErrorMessage(u), "");
  PQclear(u);
  return ours;
}

/* Fills out from the set in columns col.. (id, component, hints) of row 0. */
static int fill(PGresult *r, int col, struct siox_kb_hintset *out, char *err, size_t errcap) {
  out->hint_set_id = strtoll(PQgetvalue(r, 0, col), NULL, 10);
  if (copy_whole(out->component, sizeof out->component, PQgetvalue(r, 0, col + 1)) < 0)
    return fail(err, errcap, "hint set %s: component name too long%s", PQgetvalue(r, 0, col), "");
  return parse_hints(PQgetvalue(r, 0, col + 2), out, err, errcap) < 0 ? -1 : 1;
}

int siox_kb_hints_lookup(PGconn *c, const char *exe, const char *args, const char *path, const char *component,
                         const char *run, struct siox_kb_hintset *out, char *err, size_t errcap) {
  char pattern[4096], hash[24];
  if (!c || !exe || !path || !component || !out) return fail(err, errcap, "hints lookup: missing argument%s%s", "", "");
  if (siox_kb_file_pattern(path, pattern, sizeof pattern) < 0)
    return fail(err, errcap, "hints lookup: path too long: %.200s%s", path, "");
  snprintf(hash, sizeof hash, "%" PRId64, (int64_t)siox_kb_args_hash(args ? args : ""));
  const char *params[4] = {exe, hash, pattern, component};
  PGresult *r = PQexecParams(c, lookup_sql, 4, NULL, params, NULL, NULL, 0);
  if (PQresultStatus(r) != PGRES_TUPLES_OK) {
    fail(err, errcap, "hints lookup: %s%s", PQresultErrorMessage(r), "");
    PQclear(r);
    if (err && errcap) err[strcspn(err, "\n")] = '\0';
    return -1;
  }
  memset(out, 0, sizeof *out);
  int rc = 0;
  if (PQntuples(r) == 1) {
    /* Another run's experiment: this run gets the live set it superseded,
     * or none, as if the experiment did not exist yet. */
    int ours = strcmp(PQgetvalue(r, 0, 3), "experiment") == 0 ? experiment_is_ours(c, r, run, err, errcap) : 1;
    if (ours < 0)
      rc = -1;
    else if (ours)
      rc = fill(r, 0, out, err, errcap);
    else if (!PQgetisnull(r, 0, 5))
      rc = fill(r, 5, out, err, errcap);
  }
  PQclear(r);
  return rc;
}
