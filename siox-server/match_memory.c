/*
 * The in-memory matcher on the ingest path (issue 15 §1): objects.c hands
 * over a batch's remote calls before it COPYs them; match_window.c decides
 * their links where it can; this file stores those links inside the
 * batch's transaction, so a link is committed with the record that made
 * it, and says which calls the SQL matcher (match.c) must still treat as
 * new. Rules and reasons: README.md, "Implicit links in memory".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ingest.h"
#include "match_window.h"

/* The window's first batch: whatever the warehouse already holds lies
 * below its floor (one scan of remote_calls per server start). */
static int start(struct siox_db *db) {
  PGresult *r = siox_db_query(db->conn,
                              "SELECT max(end_ns), (SELECT COALESCE(max(clock_uncertainty_ns), 0) FROM daemons)"
                              " FROM remote_calls",
                              0, NULL);
  if (!r) return -EIO;
  int64_t floor = PQgetisnull(r, 0, 0) ? INT64_MIN : strtoll(PQgetvalue(r, 0, 0), NULL, 10) + 1;
  siox_mw_start(db->mw, floor, strtoll(PQgetvalue(r, 0, 1), NULL, 10));
  PQclear(r);
  return 0;
}

/* The (hwid, swid) ids of a receiver's node: cache, then nodes. */
int siox_match_memory_node(struct siox_db *db, int64_t node_id, uint32_t *hw, uint32_t *sw) {
  uint64_t *hit = siox_hmap_get(&db->node_names, &node_id, sizeof node_id);
  if (hit) return *hw = (uint32_t)hit[0], *sw = (uint32_t)hit[1], 0;
  char n[24];
  const char *p[] = {siox_i64s(n, node_id)};
  PGresult *r = siox_db_query(db->conn, "SELECT hwid, swid FROM nodes WHERE node_id = $1", 1, p);
  if (!r) return -EIO;
  int rc = PQntuples(r) == 1 ? 0 : -ENOENT;
  if (rc == 0) {
    *hw = siox_mw_intern(db->mw, PQgetvalue(r, 0, 0), 0);
    *sw = siox_mw_intern(db->mw, PQgetvalue(r, 0, 1), 0);
    rc = *hw == UINT32_MAX || *sw == UINT32_MAX ? -ENOMEM : siox_hmap_put(&db->node_names, &node_id, sizeof node_id, *hw, *sw);
  }
  PQclear(r);
  return rc;
}

/* ---- storing the links ---------------------------------------------------------- */

/* Links the window no longer chooses (a before-parent guess once a sender
 * that fits inside arrived): by primary key. */
static int delete_stale(struct siox_db *db, const struct siox_mw_out *o) {
  char *par = siox_int_array(&o->stale[0].parent, o->nstale, sizeof *o->stale);
  char *chi = siox_int_array(&o->stale[0].child, o->nstale, sizeof *o->stale);
  const char *p[] = {par, chi};
  PGresult *r = par && chi ? siox_db_query(db->conn,
                                           "DELETE FROM causal_links c USING unnest($1::bigint[], $2::bigint[]) d(p, ch)"
                                           " WHERE c.parent_aid = d.p AND c.child_aid = d.ch",
                                           2, p)
                           : NULL;
  free(par), free(chi);
  PQclear(r);
  return r ? 0 : -EIO;
}

/* The confidence as the SQL matcher stores it: "%.9g" read as a real. A
 * confidence that is a float already (1.0, 0.5: most links) comes back
 * unchanged, since 9 digits give back any float; the formatting took
 * 0.4 us a link, 4 % of bench_match's matcher time. */
static double as_real(double conf) {
  if ((double)(float)conf == conf) return conf;
  char v[32];
  snprintf(v, sizeof v, "%.9g", conf);
  return (double)strtof(v, NULL);
}

/* Binary COPY rows of causal_links' five columns, of the links whose
 * fresh is want (-1: all). Returns how many. */
static size_t link_rows(struct siox_copybuf *c, const struct siox_mw_out *o, int want) {
  size_t n = 0;
  siox_copybuf_start(c);
  for (size_t i = 0; i < o->nlinks; i++) {
    const struct siox_mw_link *l = &o->links[i];
    if (want >= 0 && l->fresh != want) continue;
    siox_copybuf_row(c, 5);
    siox_copybuf_i64(c, l->parent);
    siox_copybuf_i64(c, l->child);
    siox_copybuf_f32(c, (float)as_real(l->confidence));
    siox_copybuf_i64(c, (int64_t)l->overlap);
    siox_copybuf_text(c, l->flags, strlen(l->flags));
    n++;
  }
  return n;
}

#define LINK_COLUMNS " (parent_aid, child_aid, confidence, overlap_bytes, flags)"

/* The window's COPY of fresh links. Its WHERE is always true; being
 * volatile, it makes PostgreSQL (15) insert row by row instead of
 * buffering up to 1000 rows, which takes a tuple slot per buffered row,
 * each pinning the table's descriptor in the statement's resource owner,
 * whose hashed array is quadratic in equal pins (perf: a fifth of the
 * statement's backend CPU at 1000 links). Row by row costs a WAL record
 * a row instead of one a page, and was still 0.89 [0.88, 0.91] of the
 * backend CPU a link (bench_link_row's single against full, 9 rounds). */
#define LINK_COPY "COPY causal_links" LINK_COLUMNS " FROM STDIN (FORMAT binary) WHERE random() >= 0"

/* Links whose pair may exist already (want -1: all of them, 0: those the
 * window changed): staged, then upserted. */
static int upsert(struct siox_db *db, const struct siox_mw_out *o, int want) {
  struct siox_copybuf *c = &db->copy;
  if (link_rows(c, o, want) == 0) return 0;
  int rc = siox_copybuf_finish(c);
  if (rc == 0)
    rc = siox_db_exec(db->conn, "CREATE TEMP TABLE IF NOT EXISTS siox_link_stage (parent_aid bigint, child_aid bigint,"
                                " confidence real, overlap_bytes bigint, flags text) ON COMMIT DELETE ROWS");
  if (rc == 0)
    rc = siox_db_copy(db->conn, "COPY siox_link_stage" LINK_COLUMNS " FROM STDIN (FORMAT binary)", c->p, c->len) ? -EIO : 0;
  PGresult *r = rc ? NULL
                   : siox_db_query(db->conn,
                                   "WITH i AS (INSERT INTO causal_links" LINK_COLUMNS
                                   " SELECT parent_aid, child_aid, confidence, overlap_bytes, flags FROM siox_link_stage"
                                   " ON CONFLICT (parent_aid, child_aid) DO UPDATE SET confidence = EXCLUDED.confidence,"
                                   " overlap_bytes = EXCLUDED.overlap_bytes, flags = EXCLUDED.flags RETURNING (xmax = 0) AS fresh)"
                                   " SELECT count(*) FILTER (WHERE fresh) FROM i",
                                   0, NULL);
  if (!r) return rc ? rc : -EIO;
  db->links_memory += strtoll(PQgetvalue(r, 0, 0), NULL, 10);
  PQclear(r);
  return 0;
}

/* The savepoint, the setting that keeps schema 034's link triggers off the
 * window's statements (schema 035), and the window's own move of the
 * unmatched count, as one string: they go with the COPY in one round trip.
 * Returns the length written. */
static int counted_head(char *sql, size_t size, const struct siox_mw_out *o) {
  int k = snprintf(sql, size, "SAVEPOINT siox_links; SET LOCAL siox.links_counted = on;");
  if (o->unmatched)
    k += snprintf(sql + k, size - (size_t)k, " UPDATE match_state SET unmatched = unmatched + %lld;",
                  (long long)o->unmatched);
  return k;
}

static size_t changed_links(const struct siox_mw_out *o) {
  size_t n = 0;
  for (size_t i = 0; i < o->nlinks; i++) n += !o->links[i].fresh;
  return n;
}

/* The links of pairs the window never linked before go straight into
 * causal_links with the batch's own kind of COPY: no staging table, no
 * conflict check (the upsert cost 6 us a link). The window remembers every
 * link it stored, and the SQL matcher never links a receive the window
 * still decides, so such a pair is not stored yet, and the window knows
 * which receives get their first link: it moves match_state.unmatched
 * once for the batch, and the link triggers' two index probes a link are
 * skipped (schema 035). The usual batch is one round trip: the head, the
 * COPY and the setting's reset after it. Stale and changed links (rare)
 * go before the COPY, under the setting: they are other pairs than the
 * fresh ones, so the order does not matter. The savepoint is not released
 * (the batch's COMMIT ends it). -EEXIST: a fresh pair exists already
 * (below). */
static int store_counted(struct siox_db *db, const struct siox_mw_out *o) {
  char sql[384];
  int k = counted_head(sql, sizeof sql, o), rc = 0;
  if (o->nstale || changed_links(o)) {
    rc = siox_db_exec(db->conn, sql);
    if (rc == 0 && o->nstale) rc = delete_stale(db, o);
    if (rc == 0) rc = upsert(db, o, 0);
    k = 0;
  }
  struct siox_copybuf *c = &db->copy;
  size_t n = rc ? 0 : link_rows(c, o, 1);
  if (rc == 0) rc = siox_copybuf_finish(c);
  if (rc) return rc;
  if (n == 0) {
    snprintf(sql + k, sizeof sql - (size_t)k, " SET LOCAL siox.links_counted = off");
    return siox_db_exec(db->conn, sql);
  }
  snprintf(sql + k, sizeof sql - (size_t)k,
           " " LINK_COPY "; SET LOCAL siox.links_counted = off");
  rc = siox_db_copy(db->conn, sql, c->p, c->len);
  if (rc == 0) db->links_memory += (int64_t)n;
  return rc;
}

/* Should a pair the window thinks new exist all the same (a daemon's clock
 * uncertainty changed between the two matchers' decisions, see README),
 * its idea of which receives are matched is wrong too: the savepoint
 * undoes the batch's link writes, the count and the setting, and they are
 * done again as any other writer's, the upsert and the triggers' count.
 * Still exactly once, never a failed batch. */
static int store_links(struct siox_db *db, const struct siox_mw_out *o) {
  int rc = store_counted(db, o);
  if (rc != -EEXIST) return rc;
  siox_log("in-memory matcher: a link it had not stored exists already; upserting the batch's links");
  rc = siox_db_exec(db->conn, "ROLLBACK TO SAVEPOINT siox_links");
  if (rc == 0 && o->nstale) rc = delete_stale(db, o);
  return rc ? rc : upsert(db, o, -1);
}

/* ---- API ------------------------------------------------------------------------------ */

int siox_match_memory(struct siox_db *db, uint64_t daemon_id, int64_t unc_ns, struct siox_mw_call *calls, size_t n) {
  int64_t t0 = siox_limits_now();
  struct siox_match_cpu cpu;
  siox_match_cpu_start(db, &cpu);
  struct siox_mw_out out = {0};
  int rc = siox_mw_started(db->mw) ? 0 : start(db);
  uint32_t d = rc ? UINT32_MAX : siox_mw_daemon(db->mw, daemon_id, unc_ns);
  if (rc == 0 && d != UINT32_MAX) {
    for (size_t i = 0; i < n; i++) calls[i].daemon = d;
    if (siox_mw_batch(db->mw, calls, n, &out) != 0) siox_log("in-memory matcher: out of memory; the SQL matcher takes over");
    if (out.nlinks || out.nstale) rc = store_links(db, &out);
    for (size_t i = 0; rc == 0 && i < out.nlinks; i++) siox_grant_queue_add(&db->grants, out.links[i].parent, out.links[i].child);
  } else {
    for (size_t i = 0; i < n; i++) calls[i].in_memory = 0;
  }
  siox_mw_out_free(&out);
  db->match_busy_ns += siox_limits_now() - t0;
  siox_match_cpu_end(db, &cpu);
  return rc;
}

void siox_match_memory_ghosts(struct siox_db *db, PGresult *r) {
  if (!db->mw || !r) return;
  for (int i = 0; i < PQntuples(r); i++) {
    if (PQgetisnull(r, i, 2) || PQgetisnull(r, i, 3)) continue; /* still no interval: nothing can meet it */
    siox_mw_ghost(db->mw, PQgetvalue(r, i, 0)[0], strtoll(PQgetvalue(r, i, 1), NULL, 10),
                  strtoll(PQgetvalue(r, i, 2), NULL, 10), strtoll(PQgetvalue(r, i, 3), NULL, 10),
                  strtoll(PQgetvalue(r, i, 4), NULL, 10), strtoll(PQgetvalue(r, i, 5), NULL, 10));
  }
}
