/*
 * The kinds' latency models, kept (schema 024, siox-cli/README.md "A verdict
 * without peers"). Fitting a kind's model reads the latest
 * SIOX_KIND_HISTORY_PER_NODE operations of every component of the kind: up
 * to 32,000 rows scattered over the heap, seconds when cold, which was most
 * of a blame call's time on a large warehouse. The fold here fits each kind
 * once per minute of the timeline in which it had operations, on exactly
 * the history blame would read for a call starting at that minute's end;
 * blame reads the newest model at or before its call (siox_wh_kind_model).
 *
 * Incremental: kb_fold_state 'kind_models' holds the minute boundary up to
 * which every model is written. A pass fits the boundaries after it that
 * have settled (end before now minus the settle time, as the baselines),
 * each in its own transaction, so a long catch-up holds no lock for long
 * and an interrupted one resumes where it stopped. Operations that reach
 * the warehouse after their minute was folded are not in that minute's
 * model (they are in the next minutes', as history).
 */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blame_class.h"
#include "blame_wait.h"
#include "warehouse.h"
#include "wh_pg.h"

#include <siox/siox_wh.h>

/* Models are kept at minute boundaries of the timeline (activity time). */
#define STEP_NS ((int64_t)60000000000)

/* The watermark and the last settled instant. */
static const char window_sql[] =
    "SELECT s.watermark_ns,"
    "       (extract(epoch FROM clock_timestamp()) * 1e9)::bigint - greatest(s.settle_ns, $1::bigint)"
    "  FROM kb_fold_state s WHERE s.name = 'kind_models' FOR UPDATE";

/* The first operation that started at or after the watermark, by one probe
 * of the (type_id, start_ns) index per type: the timeline has idle gaps
 * (years between a test's fixed epoch and now), which are skipped, not
 * walked minute by minute. NULL: none. */
static const char next_sql[] =
    "SELECT min(f.start_ns) FROM activity_types ty CROSS JOIN LATERAL ("
    "  SELECT a.start_ns FROM activities a WHERE a.type_id = ty.type_id AND a.start_ns >= $1::bigint"
    "   ORDER BY a.start_ns LIMIT 1) f";

/* The kinds with operations in [$1, $2), on two components or more (a
 * model needs two): one probe of the (type_id, start_ns) index per type. */
static const char active_sql[] =
    "SELECT n.swid, ty.name FROM activity_types ty JOIN nodes n ON n.node_id = ty.node_id"
    " WHERE EXISTS (SELECT 1 FROM activities a WHERE a.type_id = ty.type_id"
    "                 AND a.start_ns >= $1::bigint AND a.start_ns < $2::bigint)"
    "   AND (SELECT count(*) FROM activity_types t2 JOIN nodes m ON m.node_id = t2.node_id"
    "         WHERE m.swid = n.swid AND t2.name = ty.name) >= 2"
    " GROUP BY 1, 2";

static const char insert_sql[] =
    "INSERT INTO kb_kind_models (swid, name, to_ns, fitted, a_s, b_s, nodes, samples, points)"
    " VALUES ($1, $2, $3::bigint, $4::boolean, $5::float8, $6::float8, $7::int, $8::int, $9::int)"
    " ON CONFLICT (swid, name, to_ns) DO UPDATE SET fitted = EXCLUDED.fitted, a_s = EXCLUDED.a_s,"
    "   b_s = EXCLUDED.b_s, nodes = EXCLUDED.nodes, samples = EXCLUDED.samples, points = EXCLUDED.points,"
    "   updated_at = now()";

static void rollback(PGconn *c) {
  PQclear(PQexec(c, "ROLLBACK"));
}

int siox_wh_kind_model_fit_at(PGconn *c, const char *swid, const char *name, int64_t to_ns,
                              struct siox_kind_model *m, char *err, size_t errlen) {
  struct siox_kind_set hist = {0};
  int rc = siox_wh_kind_samples(c, swid, name, to_ns, SIOX_KIND_HISTORY_PER_NODE, &hist, err, errlen);
  if (rc == 0 && (rc = siox_kind_model_fit(hist.s, hist.n, m)) == -ENOMEM) snprintf(err, errlen, "out of memory");
  siox_wh_kind_free(&hist);
  return rc;
}

static int store(PGconn *c, const char *swid, const char *name, int64_t to_ns, const struct siox_kind_model *m,
                 char *err, size_t errlen) {
  char to[24], a[40], b[40], nodes[24], samples[24], points[24];
  snprintf(to, sizeof(to), "%" PRId64, to_ns);
  snprintf(a, sizeof(a), "%.17g", m->a_s);
  snprintf(b, sizeof(b), "%.17g", m->b_s);
  snprintf(nodes, sizeof(nodes), "%zu", m->nodes);
  snprintf(samples, sizeof(samples), "%zu", m->samples);
  snprintf(points, sizeof(points), "%zu", m->points);
  const char *p[] = {swid, name, to, m->have ? "true" : "false", a, b, nodes, samples, points};
  PGresult *r = siox_wh_query(c, "storing a kind's model", insert_sql, 9, p, err, errlen);
  if (!r) return -EIO;
  PQclear(r);
  return 0;
}

/* Fits every kind active in the minute before boundary t, at t. */
static int fold_boundary(PGconn *c, int64_t t, int *fitted, char *err, size_t errlen) {
  char lo[24], hi[24];
  snprintf(lo, sizeof(lo), "%" PRId64, t - STEP_NS);
  snprintf(hi, sizeof(hi), "%" PRId64, t);
  const char *p[] = {lo, hi};
  PGresult *kinds = siox_wh_query(c, "finding the kinds to fit", active_sql, 2, p, err, errlen);
  if (!kinds) return -EIO;
  int rc = 0;
  for (int i = 0; i < PQntuples(kinds) && rc == 0; i++) {
    struct siox_kind_model m;
    const char *swid = PQgetvalue(kinds, i, 0), *name = PQgetvalue(kinds, i, 1);
    rc = siox_wh_kind_model_fit_at(c, swid, name, t, &m, err, errlen);
    if (rc == 0) rc = store(c, swid, name, t, &m, err, errlen);
    if (rc == 0) (*fitted)++;
  }
  PQclear(kinds);
  return rc;
}

/* One boundary in one transaction: 1 folded, 0 nothing settled to fold,
 * negative errno. */
static int fold_step(PGconn *c, int64_t settle_ns, int *fitted, char *err, size_t errlen) {
  int rc = siox_wh_exec(c, "starting the kind models' fold", "BEGIN", err, errlen);
  if (rc != 0) return rc;
  char settle[24];
  snprintf(settle, sizeof(settle), "%" PRId64, settle_ns);
  const char *p[] = {settle};
  PGresult *w = siox_wh_query(c, "reading the kind models' watermark", window_sql, 1, p, err, errlen);
  if (w && PQntuples(w) != 1) {
    snprintf(err, errlen, "kb_fold_state has no row 'kind_models' (schema older than 024?)");
    PQclear(w);
    w = NULL;
  }
  if (!w) return rollback(c), -EIO;
  int64_t t, settled = siox_wh_i64(w, 0, 1);
  char lo[24];
  snprintf(lo, sizeof(lo), "%" PRId64, siox_wh_i64(w, 0, 0));
  PQclear(w);
  const char *q0[] = {lo};
  PGresult *nx = siox_wh_query(c, "finding the next operation to fold", next_sql, 1, q0, err, errlen);
  if (!nx) return rollback(c), -EIO;
  bool none = PQgetisnull(nx, 0, 0);
  /* The boundary that ends the minute of that operation. */
  t = siox_wh_i64(nx, 0, 0) / STEP_NS * STEP_NS + STEP_NS;
  PQclear(nx);
  if (none || t > settled) {
    rollback(c);
    return 0;
  }
  char to[24];
  snprintf(to, sizeof(to), "%" PRId64, t);
  const char *q[] = {to};
  rc = fold_boundary(c, t, fitted, err, errlen);
  if (rc == 0) {
    PGresult *r = siox_wh_query(c, "moving the kind models' watermark",
                                "UPDATE kb_fold_state SET watermark_ns = $1::bigint, updated_at = now()"
                                " WHERE name = 'kind_models'",
                                1, q, err, errlen);
    rc = r ? 0 : -EIO;
    PQclear(r);
  }
  if (rc == 0) rc = siox_wh_exec(c, "committing the kind models", "COMMIT", err, errlen);
  else rollback(c);
  return rc == 0 ? 1 : rc;
}

int siox_wh_kind_models_update(PGconn *c, int64_t settle_ns, int max_steps, char *err, size_t errlen) {
  int fitted = 0, rc = 1;
  for (int i = 0; rc == 1 && (max_steps <= 0 || i < max_steps); i++) rc = fold_step(c, settle_ns, &fitted, err, errlen);
  return rc < 0 ? rc : fitted;
}

static const char read_sql[] =
    "SELECT m.to_ns, m.fitted, m.a_s, m.b_s, m.nodes, m.samples, m.points, s.watermark_ns"
    "  FROM kb_fold_state s LEFT JOIN LATERAL ("
    "    SELECT * FROM kb_kind_models WHERE swid = $1 AND name = $2 AND to_ns <= $3::bigint"
    "     ORDER BY to_ns DESC LIMIT 1) m ON true"
    " WHERE s.name = 'kind_models'";

int siox_wh_kind_model(PGconn *c, const char *swid, const char *name, int64_t to_ns, int64_t max_lag_ns,
                       struct siox_kind_model *m, int64_t *model_to_ns, char *err, size_t errlen) {
  char to[24];
  snprintf(to, sizeof(to), "%" PRId64, to_ns);
  const char *p[] = {swid, name, to};
  PGresult *r = PQexecParams(c, read_sql, 3, NULL, p, NULL, NULL, 0);
  if (PQresultStatus(r) != PGRES_TUPLES_OK) {
    /* A warehouse older than 024 has no stored models: blame fits. */
    const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    if (state && strcmp(state, "42P01") == 0) return PQclear(r), 0;
    return siox_wh_failed(r, c, "reading the kind's model", err, errlen);
  }
  /* The fold must have reached the call (less max_lag_ns: the settle time
   * of a live server), and the kind must have had a model fitted by then. */
  int found = PQntuples(r) == 1 && !PQgetisnull(r, 0, 0) && siox_wh_i64(r, 0, 7) >= to_ns - max_lag_ns;
  if (found) {
    memset(m, 0, sizeof(*m));
    *model_to_ns = siox_wh_i64(r, 0, 0);
    m->have = PQgetvalue(r, 0, 1)[0] == 't';
    m->a_s = siox_wh_f64(r, 0, 2);
    m->b_s = siox_wh_f64(r, 0, 3);
    m->nodes = (size_t)siox_wh_i64(r, 0, 4);
    m->samples = (size_t)siox_wh_i64(r, 0, 5);
    m->points = (size_t)siox_wh_i64(r, 0, 6);
  }
  PQclear(r);
  return found;
}
