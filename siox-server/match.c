/*
 * Implicit causal links across processes and hosts: the last step of the
 * server's data path, run on the database thread every --match-ms and soon
 * after each batch. SQL finds each receive's candidate senders (same object,
 * overlapping bytes, target names the receiver's node, and a timing class:
 * inside S's interval widened by both daemons' clock uncertainty (not when
 * one daemon recorded both), before S
 * (read-ahead), or after S within --late-ms); link.c decides confidences;
 * the links are upserted. Rules: README.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "link.h"
#include "server.h"

#define SLACK_NS "100000"         /* widening on top of the clock uncertainties (all of it within one daemon) */
#define READAHEAD_NS "1000000000" /* how far before S a read-ahead R may start */

/* x, a remote call of kind k on o's object, whose interval meets [a, b]
 * and whose bytes overlap o's: join conditions for one of the two indexes
 * of schema 036 each. NEAR_GIST: the GiST of schema 010, which holds the
 * calls the SQL matcher handles as new (and long ones). NEAR_WIN: the
 * btree remote_calls_win, which holds those the window decided; they are
 * at most WIN_NS long (siox_rc_window), so start in [a - WIN_NS, b]. A
 * query asks both, as two branches of the same join (a UNION ALL
 * subquery per receive made the planner take remote_calls_obj over the
 * GiST); tr, named by both, is NOT MATERIALIZED so that each is planned
 * as the one join was before (a materialized CTE's row estimate is its
 * plan's guess). */
#define WIN_NS "100000000"
#define NEAR_GIST(x, k, o, a, b) \
    " " x ".object_id = " o ".object_id AND " x ".kind = '" k "' AND " x ".start_ns IS NOT NULL" \
    "   AND NOT siox_rc_window(" x ".in_memory, " x ".start_ns, " x ".end_ns)" \
    "   AND int8range(" x ".start_ns, " x ".end_ns, '[]') && int8range(" a ", " b ", '[]')" \
    "   AND siox_rc_bytes(" x ".offset_b, " x ".length_b) && siox_rc_bytes(" o ".offset_b, " o ".length_b)"
#define NEAR_WIN(x, k, o, a, b) \
    " " x ".object_id = " o ".object_id AND " x ".kind = '" k "'" \
    "   AND siox_rc_window(" x ".in_memory, " x ".start_ns, " x ".end_ns)" \
    "   AND " x ".start_ns >= (" a ") - " WIN_NS " AND " x ".start_ns <= (" b ") AND " x ".end_ns >= (" a ")" \
    "   AND siox_rc_lo(" x ".offset_b, " x ".length_b) < siox_rc_hi(" o ".offset_b, " o ".length_b)" \
    "   AND siox_rc_hi(" x ".offset_b, " x ".length_b) > siox_rc_lo(" o ".offset_b, " o ".length_b)"

/* Receives to (re)examine: new ones (rc_id above the watermark: stored,
 * woken or moved by a merge since the last pass) and those near a new
 * sender on the same object, which is how a late sender finds its
 * receives. Nothing else can change a receive's candidates, so unmatched
 * receives are not rescanned every pass (they were, for 60 s: under load
 * thousands of them, each joined with all its object's senders).
 * Candidate senders come from an index search (NEAR_*, schemas 010, 036)
 * on the object, the byte ranges (siox_rc_bytes: length 0 overlaps all)
 * and time: every class below needs S's interval to meet
 * [R.start - w - $4, R.start + $3].
 * $1 watermark, $2 slack, $3 read-ahead window, $4 lateness window (0: off),
 * $5 the widest w of any pair of daemons (a plain parameter, so that the
 * bounds it takes part in are index conditions). A sender's process is its
 * aid's upper half (siox_global_aid), so only receives read activities.
 * Class 0 inside, 1 before-parent, 2 after-parent (R ends after S, and
 * starts at most $4 after S's widened end).
 * Rows the in-memory matcher decided at ingest (in_memory, schema 019)
 * are not new here; as candidates and as receives near a new sender they
 * count like any other (match_memory.c). compute() gives the same links
 * whatever order the rows of one (receive, sender) come in. */
#define TR_NEAR(near) \
    "  UNION SELECT r.aid FROM remote_calls s JOIN remote_calls r ON" \
    near("r", "R", "s", "s.start_ns - $3::bigint - $5::bigint", "s.end_ns + $4::bigint + $5::bigint") \
    "   WHERE s.kind = 'S' AND s.rc_id > $1 AND NOT s.in_memory AND s.start_ns IS NOT NULL"
#define CAND_HEAD \
    "WITH tr AS NOT MATERIALIZED (" \
    "  SELECT aid FROM remote_calls WHERE kind = 'R' AND rc_id > $1 AND NOT in_memory AND start_ns IS NOT NULL" \
    TR_NEAR(NEAR_GIST) TR_NEAR(NEAR_WIN) ")"
#define CAND_SELECT \
    " SELECT r.aid, s.aid," \
    "  CASE WHEN r.start_ns >= s.start_ns - w.w AND r.end_ns <= s.end_ns + w.w THEN 0" \
    "   WHEN r.start_ns < s.start_ns - w.w THEN 1 ELSE 2 END," \
    "  CASE WHEN s.length_b = 0 OR r.length_b = 0 THEN 0 ELSE GREATEST(0, LEAST(s.offset_b + s.length_b," \
    "   r.offset_b + r.length_b) - GREATEST(s.offset_b, r.offset_b)) END," \
    "  r.length_b," \
    "  (r.length_b = 0 OR (s.length_b > 0 AND s.offset_b <= r.offset_b" \
    "   AND s.offset_b + s.length_b >= r.offset_b + r.length_b))::int," \
    "  (s.length_b > 0)::int," \
    "  (r.start_ns >= s.start_ns AND r.end_ns <= s.end_ns)::int" \
    " FROM tr JOIN remote_calls r ON r.aid = tr.aid AND r.kind = 'R'"
#define CAND_SENDERS(near) \
    "  JOIN remote_calls s ON s.aid <> r.aid AND" \
    near("s", "S", "r", "r.start_ns - $4::bigint - $5::bigint", "r.start_ns + $3::bigint")
/* w from R's and S's daemons, then the target and the classes. Calls that
 * one daemon recorded are in one host clock, moved by that daemon's
 * offset: their order needs no clock widening, only the slack ($2).
 * Across daemons, or where a daemon is not known (NULL: a forwarded call,
 * see CAND_SHARD), both uncertainties widen it (match_window.c's
 * candidate(): the same rule). */
#define CAND_WHERE(r_d, r_unc, s_d, s_unc) \
    "  CROSS JOIN LATERAL (SELECT CASE WHEN " r_d " = " s_d " THEN 0 ELSE " r_unc " + " s_unc " END" \
    "   + $2::bigint AS w) w" \
    " WHERE (s.target_hwid IN ('', '*') OR s.target_hwid = rn.hwid)" \
    "  AND (s.target_swid IN ('', '*') OR s.target_swid = rn.swid)" \
    "  AND ((r.start_ns >= s.start_ns - w.w AND r.end_ns <= s.end_ns + w.w)" \
    "   OR (r.start_ns < s.start_ns - w.w AND r.start_ns >= s.start_ns - $3::bigint)" \
    "   OR ($4::bigint > 0 AND r.start_ns >= s.start_ns - w.w AND r.end_ns > s.end_ns + w.w" \
    "    AND r.start_ns <= s.end_ns + w.w + $4::bigint))"

#define CAND_LOCAL(near) \
    CAND_SELECT \
    "  JOIN activities ra ON ra.aid = r.aid JOIN nodes rn ON rn.node_id = ra.node_id" \
    "  JOIN processes rp ON rp.proc_id = ra.proc_id JOIN daemons rd ON rd.daemon_id = rp.daemon_id" \
    CAND_SENDERS(near) \
    "  JOIN processes sp ON sp.proc_id = (s.aid >> 32)::int JOIN daemons sd ON sd.daemon_id = sp.daemon_id" \
    CAND_WHERE("rd.daemon_id", "rd.clock_uncertainty_ns", "sd.daemon_id", "sd.clock_uncertainty_ns")

static const char candidates_sql[] =
    CAND_HEAD CAND_LOCAL(NEAR_GIST) " UNION ALL" CAND_LOCAL(NEAR_WIN) " ORDER BY 1, 2";

/* A shard with peers (forward.c): a remote call forwarded from shard
 * `origin` has its activity there, so its node and its daemon's
 * uncertainty come from shard_actors (schema 031); a local call's from
 * this warehouse as above. Exactly one of the two branches has a row. A
 * pair whose two calls came from the same origin is that origin's to link
 * (both are stored there), never the owner's. A local receive that went
 * to its owner elsewhere (away, schema 033) is decided there with the
 * other shards' senders: here only with this shard's own. */
#define CAND_SHARD(near) \
    CAND_SELECT \
    "  CROSS JOIN LATERAL (SELECT n.hwid, n.swid, d.daemon_id AS did, d.clock_uncertainty_ns AS unc FROM activities a" \
    "   JOIN nodes n ON n.node_id = a.node_id JOIN processes p ON p.proc_id = a.proc_id" \
    "   JOIN daemons d ON d.daemon_id = p.daemon_id WHERE a.aid = r.aid" \
    "   UNION ALL SELECT x.hwid, x.swid, NULL::bigint, x.unc_ns FROM shard_actors x WHERE x.aid = r.aid) rn" \
    CAND_SENDERS(near) \
    "  CROSS JOIN LATERAL (SELECT d.daemon_id AS did, d.clock_uncertainty_ns AS unc FROM processes p" \
    "   JOIN daemons d ON d.daemon_id = p.daemon_id WHERE p.proc_id = (s.aid >> 32)::int" \
    "   UNION ALL SELECT NULL::bigint, x.unc_ns FROM shard_actors x WHERE x.aid = s.aid) su" \
    CAND_WHERE("rn.did", "rn.unc", "su.did", "su.unc") \
    "  AND (r.origin IS NULL OR s.origin IS DISTINCT FROM r.origin) AND (s.origin IS NULL OR NOT r.away)"

static const char candidates_shard_sql[] =
    CAND_HEAD CAND_SHARD(NEAR_GIST) " UNION ALL" CAND_SHARD(NEAR_WIN) " ORDER BY 1, 2";

/* Remote calls whose activity row has arrived since they were parked: they
 * take its interval, and a fresh rc_id makes them new to this pass (and to
 * a restarted server). */
static const char wake_sql[] =
    "UPDATE remote_calls r SET waiting = false, rc_id = nextval('remote_calls_rc_id_seq'),"
    " start_ns = a.start_ns, end_ns = a.end_ns FROM activities a WHERE r.waiting AND a.aid = r.aid"
    " RETURNING r.kind, r.object_id, r.start_ns, r.end_ns, r.offset_b, r.length_b";

/* New remote calls ($1: watermark) stored under an object that has since
 * been merged away move to its root (objects are flattened: merged_into is
 * the root). ingest already writes roots; this keeps the candidate join's
 * r.object_id = s.object_id a comparison of roots whatever wrote the row. */
static const char canon_sql[] =
    "UPDATE remote_calls r SET object_id = o.merged_into, in_memory = false FROM objects o"
    " WHERE r.rc_id > $1 AND o.object_id = r.object_id AND o.merged_into IS NOT NULL"
    " RETURNING r.kind, r.object_id, r.start_ns, r.end_ns, r.offset_b, r.length_b";

/* Remote calls of this pass ($1, $2] stored without their interval (their
 * activity was not in the same batch) take it from an earlier batch's
 * activity row; those whose activity has not arrived are parked. */
static const char stamp_sql[] =
    "UPDATE remote_calls r SET start_ns = a.start_ns, end_ns = a.end_ns FROM activities a"
    " WHERE r.rc_id > $1 AND r.rc_id <= $2 AND r.start_ns IS NULL AND a.aid = r.aid"
    " RETURNING r.kind, r.object_id, r.start_ns, r.end_ns, r.offset_b, r.length_b";
static const char park_sql[] =
    "UPDATE remote_calls SET waiting = true WHERE rc_id > $1 AND rc_id <= $2 AND start_ns IS NULL";

static const char delete_sql[] =
    "DELETE FROM causal_links c WHERE c.child_aid = ANY($1::bigint[]) AND NOT EXISTS ("
    " SELECT 1 FROM unnest($2::bigint[], $1::bigint[]) n(p, ch) WHERE n.p = c.parent_aid AND n.ch = c.child_aid)";

static const char upsert_sql[] =
    "INSERT INTO causal_links (parent_aid, child_aid, confidence, overlap_bytes, flags)"
    " SELECT * FROM unnest($2::bigint[], $1::bigint[], $3::real[], $4::bigint[], $5::text[])"
    " ON CONFLICT (parent_aid, child_aid) DO UPDATE SET confidence = EXCLUDED.confidence,"
    " overlap_bytes = EXCLUDED.overlap_bytes, flags = EXCLUDED.flags RETURNING (xmax = 0)";

/* Growing text buffer for array literals "{a,b,...}". */
struct lit {
  char *s;
  size_t len, cap;
  int err;
};

static void lit_add(struct lit *l, const char *item) {
  size_t n = strlen(item);
  if (l->len + n + 3 > l->cap) {
    size_t ncap = l->cap ? l->cap * 2 : 256;
    while (ncap < l->len + n + 3) ncap *= 2;
    char *ns = realloc(l->s, ncap);
    if (!ns) return (void)(l->err = -ENOMEM);
    l->s = ns, l->cap = ncap;
  }
  l->s[l->len] = l->len == 0 ? '{' : ',';
  l->len++;
  memcpy(l->s + l->len, item, n);
  l->len += n;
  l->s[l->len] = '}';
  l->s[l->len + 1] = '\0';
}

static const char *lit_str(struct lit *l) { return l->len ? l->s : "{}"; }

struct batch {
  struct lit child, parent, conf, overlap, flags;
  size_t nlinks;
};

static void add_links(struct siox_db *db, struct batch *b, int64_t child, const struct siox_link *L, size_t n) {
  char v[64];
  for (size_t i = 0; i < n; i++) {
    siox_grant_queue_add(&db->grants, L[i].parent, child);
    snprintf(v, sizeof v, "%lld", (long long)child), lit_add(&b->child, v);
    snprintf(v, sizeof v, "%lld", (long long)L[i].parent), lit_add(&b->parent, v);
    snprintf(v, sizeof v, "%.9g", L[i].confidence), lit_add(&b->conf, v);
    snprintf(v, sizeof v, "%llu", (unsigned long long)L[i].overlap), lit_add(&b->overlap, v);
    snprintf(v, sizeof v, "\"%s\"", L[i].flags), lit_add(&b->flags, v);
  }
  b->nlinks += n;
}

/* Groups candidate rows (sorted by child, parent) per receive and computes
 * each receive's links. Owns nothing after return except b's buffers. */
static int compute(struct siox_db *db, PGresult *r, struct batch *b) {
  int rows = PQntuples(r);
  struct siox_link_cand *c = malloc(((size_t)rows + 1) * sizeof *c);
  struct siox_link *out = malloc(((size_t)rows + 1) * sizeof *out);
  if (!c || !out) return free(c), free(out), -ENOMEM;
  for (int i = 0; i < rows;) {
    int64_t child = strtoll(PQgetvalue(r, i, 0), NULL, 10);
    uint64_t r_len = 0; /* a receive with several records on the object: its longest range */
    for (int j = i; j < rows && strtoll(PQgetvalue(r, j, 0), NULL, 10) == child; j++) {
      uint64_t len = strtoull(PQgetvalue(r, j, 4), NULL, 10);
      if (len > r_len) r_len = len;
    }
    size_t n = 0;
    for (; i < rows && strtoll(PQgetvalue(r, i, 0), NULL, 10) == child; i++) {
      struct siox_link_cand k = {strtoll(PQgetvalue(r, i, 1), NULL, 10), atoi(PQgetvalue(r, i, 2)),
                                 strtoull(PQgetvalue(r, i, 3), NULL, 10), atoi(PQgetvalue(r, i, 5)),
                                 atoi(PQgetvalue(r, i, 6)), atoi(PQgetvalue(r, i, 7))};
      /* One sender with several records on the object: keep its best row. */
      if (n && c[n - 1].parent == k.parent) {
        if (siox_link_cand_better(&k, &c[n - 1], r_len)) c[n - 1] = k;
        continue;
      }
      c[n++] = k;
    }
    add_links(db, b, child, out, siox_link_confidence(c, n, r_len, out));
  }
  free(c);
  free(out);
  return 0;
}

static int write_links(struct siox_db *db, struct batch *b, struct siox_match_result *res) {
  const char *p[] = {lit_str(&b->child), lit_str(&b->parent), lit_str(&b->conf), lit_str(&b->overlap), lit_str(&b->flags)};
  PGresult *r = siox_db_query(db->conn, delete_sql, 2, p);
  if (!r) return -EIO;
  PQclear(r);
  if (!(r = siox_db_query(db->conn, upsert_sql, 5, p))) return -EIO;
  for (int i = 0; i < PQntuples(r); i++) {
    if (PQgetvalue(r, i, 0)[0] == 't') res->links_new++;
    else res->links_updated++;
  }
  PQclear(r);
  return 0;
}

static int scalar(struct siox_db *db, const char *sql, int n, const char *const *p, int64_t *out) {
  PGresult *r = siox_db_query(db->conn, sql, n, p);
  if (!r) return -EIO;
  *out = PQntuples(r) ? strtoll(PQgetvalue(r, 0, 0), NULL, 10) : 0;
  PQclear(r);
  return 0;
}

static int exec_params(struct siox_db *db, const char *sql, int n, const char *const *p) {
  PGresult *r = siox_db_query(db->conn, sql, n, p);
  PQclear(r);
  return r ? 0 : -EIO;
}

/* Runs an UPDATE ... RETURNING of remote calls that got an interval (or a
 * new object) here: the in-memory window must know them (ghosts). */
static int exec_ghosts(struct siox_db *db, const char *sql, int n, const char *const *p) {
  PGresult *r = siox_db_query(db->conn, sql, n, p);
  siox_match_memory_ghosts(db, r);
  PQclear(r);
  return r ? 0 : -EIO;
}

/* Parks this pass's remote calls that still have no interval; counts them
 * in db->parked (see wake). */
static int park(struct siox_db *db, const char *const *range) {
  PGresult *r = siox_db_query(db->conn, park_sql, 2, range);
  if (!r) return -EIO;
  if (db->parked >= 0) db->parked += strtoll(PQcmdTuples(r), NULL, 10);
  PQclear(r);
  return 0;
}

/* Wakes the parked remote calls whose activity row has arrived. Only this
 * thread parks (park), so it knows how many wait, and with none it skips
 * the scan, whose plan would also want fresh statistics of remote_calls
 * (the window's passes run no ANALYZE, see pass). Not known (start,
 * reconnect, a rolled-back pass: -1): it wakes, then counts what waits. */
static int wake(struct siox_db *db) {
  if (!db->activities_arrived || db->parked == 0) return 0;
  PGresult *r = siox_db_query(db->conn, wake_sql, 0, NULL);
  if (!r) return -EIO;
  siox_match_memory_ghosts(db, r);
  int64_t woken = PQntuples(r);
  PQclear(r);
  if (db->parked < 0) return scalar(db, "SELECT count(*) FROM remote_calls WHERE waiting", 0, NULL, &db->parked);
  db->parked = db->parked > woken ? db->parked - woken : 0;
  return 0;
}

/* The widest w of any pair: forwarded calls bring their daemons' too. */
#define MAXW_SQL "SELECT 2 * COALESCE(max(clock_uncertainty_ns), 0) + " SLACK_NS " FROM daemons"
#define MAXW_SHARD_SQL \
  "SELECT 2 * GREATEST(COALESCE(max(clock_uncertainty_ns), 0), (SELECT COALESCE(max(unc_ns), 0) FROM shard_actors))" \
  " + " SLACK_NS " FROM daemons"

/* Finds and writes the links of the receives in (watermark, top]. */
static int link_new(struct siox_db *db, struct siox_match_result *res, struct batch *b, int64_t late_ns, int64_t top) {
  char wm[24], tp[24], late[24], maxw[24];
  int64_t w = 0;
  snprintf(wm, sizeof wm, "%lld", (long long)db->match_watermark);
  snprintf(tp, sizeof tp, "%lld", (long long)top);
  snprintf(late, sizeof late, "%lld", (long long)late_ns);
  const char *p[] = {wm, SLACK_NS, READAHEAD_NS, late, maxw}, *range[] = {wm, tp};
  int rc = exec_ghosts(db, canon_sql, 1, p);
  if (rc == 0) rc = exec_ghosts(db, stamp_sql, 2, range);
  if (rc == 0) rc = park(db, range);
  if (rc == 0) rc = scalar(db, db->forward ? MAXW_SHARD_SQL : MAXW_SQL, 0, NULL, &w);
  snprintf(maxw, sizeof maxw, "%lld", (long long)w);
  PGresult *r = rc ? NULL : siox_db_query(db->conn, db->forward ? candidates_shard_sql : candidates_sql, 5, p);
  if (!r) return -EIO;
  rc = compute(db, r, b);
  PQclear(r);
  if (rc == 0 && b->nlinks) rc = write_links(db, b, res);
  const char *q[] = {tp};
  return rc ? rc : exec_params(db, "UPDATE match_state SET watermark = $1", 1, q);
}

/* The candidate search is only fast on the GiST indexes of schema 010, and
 * the planner picks them only when it knows how big remote_calls is. A busy
 * warehouse doubles it faster than autovacuum looks (once a minute), and a
 * plan made for "53 rows" is a nested loop over the whole object (or a
 * sequential scan of activities). So the matcher refreshes the statistics
 * of both each time remote_calls has grown by a quarter since it last did
 * (and on its first pass): a few dozen ANALYZEs over a warehouse's life,
 * each a sample of 30,000 rows per table, and only before a candidate
 * search. (It was each doubling: receives usually come first, so the
 * statistics of a young warehouse said "no senders" until it doubled
 * again, and with schema 036's partial indexes the planner then took
 * remote_calls_obj over the GiST or read every new receive once per
 * sender: bench_match's SQL-only rounds at a quarter of their speed.) A
 * pass whose rows the window decided runs only statements whose plans do
 * not depend on them (max and a LIMIT 1 on the rc_id index; the wake-up
 * scan only when something is parked, see wake), nor do the window's link
 * writes (match_memory.c). Those ANALYZEs were a fifth of the window's
 * time in bench_match. *at: max(rc_id) when that table was last analyzed. */
static int refresh_stats(struct siox_db *db, int64_t top, int64_t *at, const char *sql) {
  if (top < 1000 || (*at && top < *at + *at / 4)) return 0;
  int rc = siox_db_exec(db->conn, sql);
  if (rc == 0) *at = top;
  return rc;
}

static int pass(struct siox_db *db, struct siox_match_result *res, struct batch *b, int64_t late_ns, int64_t *top) {
  int rc = 0;
  if (db->match_watermark < 0) rc = scalar(db, "SELECT watermark FROM match_state", 0, NULL, &db->match_watermark);
  /* Only a batch brings activity rows: skip the wake-up scan when idle. */
  if (rc == 0) rc = wake(db);
  if (rc == 0) rc = scalar(db, "SELECT COALESCE(max(rc_id), 0) FROM remote_calls", 0, NULL, top);
  if (rc || *top <= db->match_watermark) return rc; /* nothing new since the last pass */
  /* Everything new was decided in memory (match_memory.c): only the
   * watermark moves. Rows without an interval, moved by a merge or left by
   * the window are stored with in_memory = false. */
  char wm[24], tp[24];
  snprintf(wm, sizeof wm, "%lld", (long long)db->match_watermark);
  snprintf(tp, sizeof tp, "%lld", (long long)*top);
  const char *p[] = {wm, tp};
  int64_t left = 1;
  if ((rc = scalar(db, "SELECT count(*) FROM (SELECT 1 FROM remote_calls WHERE rc_id > $1 AND rc_id <= $2"
                       " AND NOT in_memory LIMIT 1) x", 2, p, &left)))
    return rc;
  if (left == 0) return exec_params(db, "UPDATE match_state SET watermark = $1", 1, p + 1);
  if ((rc = refresh_stats(db, *top, &db->match_analyzed, "ANALYZE remote_calls"))) return rc;
  if ((rc = refresh_stats(db, *top, &db->match_analyzed_acts, "ANALYZE activities"))) return rc;
  return link_new(db, res, b, late_ns, *top);
}

/* The pass when the window decided everything new (the usual case), in
 * one round trip instead of six: its own transaction moves the watermark
 * to max(rc_id) unless a row in between is left to the SQL matcher, and
 * reads the count of unmatched receives. Only when nothing is to be woken
 * and without peers (whose pass takes a lock first). *done: 1 when that
 * was the whole pass, 0 when the full pass must run (the transaction then
 * changed nothing). The watermark is a number the server formatted. The
 * EXISTS is a probe of remote_calls_sql_new (schema 038), which holds only
 * the rows left to SQL, keyed by rc_id + 0 so that no other query's plan
 * takes it; on remote_calls_rc it read every row since the last pass. */
static const char quick_sql[] =
    "BEGIN; SET LOCAL synchronous_commit = off;"
    " WITH t AS (SELECT COALESCE(max(rc_id), 0) AS top FROM remote_calls),"
    " l AS (SELECT t.top, EXISTS (SELECT 1 FROM remote_calls r WHERE r.rc_id + 0 > %lld AND r.rc_id + 0 <= t.top"
    "  AND NOT r.in_memory) AS sql FROM t),"
    " u AS (UPDATE match_state SET watermark = l.top FROM l WHERE NOT l.sql AND l.top > %lld RETURNING 1)"
    " SELECT l.top, l.sql, (SELECT unmatched FROM match_state), (SELECT count(*) FROM u) FROM l;"
    " COMMIT";

static int quick_pass(struct siox_db *db, struct siox_match_result *res, int *done) {
  char sql[sizeof quick_sql + 48];
  snprintf(sql, sizeof sql, quick_sql, (long long)db->match_watermark, (long long)db->match_watermark);
  *done = 0;
  if (!PQsendQuery(db->conn, sql)) return siox_log("database: quick matcher pass: %s", PQerrorMessage(db->conn)), -EIO;
  int rc = 0, sql_left = 1;
  int64_t top = 0, unmatched = 0;
  for (PGresult *r; (r = PQgetResult(db->conn)); PQclear(r)) {
    ExecStatusType st = PQresultStatus(r);
    if (st == PGRES_TUPLES_OK && PQntuples(r) == 1) {
      top = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
      sql_left = PQgetvalue(r, 0, 1)[0] == 't';
      unmatched = strtoll(PQgetvalue(r, 0, 2), NULL, 10);
    } else if (st != PGRES_COMMAND_OK && rc == 0) {
      siox_log("database: quick matcher pass: %s", PQresultErrorMessage(r));
      rc = -EIO;
    }
  }
  if (rc) return PQclear(PQexec(db->conn, "ROLLBACK")), rc;
  if (sql_left) return 0;
  if (top > db->match_watermark) db->match_watermark = top;
  db->activities_arrived = 0;
  res->receives_unmatched = (uint64_t)unmatched;
  *done = 1;
  return 0;
}

int siox_match_wanted(const struct siox_db *db) {
  return db->forward || db->sql_left || db->parked != 0 || db->match_watermark < 0;
}

int siox_match_run(struct siox_db *db, int64_t late_ns, struct siox_match_result *res) {
  int64_t t0 = siox_limits_now();
  struct siox_match_cpu cpu;
  siox_match_cpu_start(db, &cpu);
  struct batch b;
  int64_t top = 0, unmatched = 0;
  memset(&b, 0, sizeof b);
  memset(res, 0, sizeof *res);
  /* Batches and passes run on this thread one after the other: whatever a
   * batch left to SQL is committed now, and this pass sees it. */
  db->sql_left = 0;
  if (!db->forward && db->match_watermark >= 0 && (!db->activities_arrived || db->parked == 0)) {
    int done = 0, rc = quick_pass(db, res, &done);
    if (rc == 0 && done) rc = siox_rc_waiting_reload(db);
    if (rc || done) {
      if (rc) db->match_watermark = -1, db->sql_left = 1;
      db->match_busy_ns += siox_limits_now() - t0;
      siox_match_cpu_end(db, &cpu);
      return rc;
    }
  }
  /* Mappings other shards told of join objects first (their own
   * transaction, as a batch's MAPs would): what they move is new to this
   * pass. */
  int rc = db->forward ? siox_objects_apply_maps(db) : 0;
  /* A pass need not wait for its WAL flush: it promises no daemon
   * anything, and one lost in a crash is lost whole (links and watermark
   * in one transaction), so the next pass does it again. The next batch's
   * synchronous commit flushes it anyway. */
  if (rc == 0) rc = siox_db_exec(db->conn, "BEGIN; SET LOCAL synchronous_commit = off");
  /* Other shards' forwarders insert remote calls here in their own
   * transactions, drawing rc_ids that commit in any order: a pass must not
   * move the watermark past an rc_id still uncommitted. Each of their
   * transactions holds this advisory lock shared from its start; the
   * pass's exclusive hold waits for them and holds back new ones until it
   * commits. */
  if (rc == 0 && db->forward)
    rc = siox_db_exec(db->conn, "SELECT pg_advisory_xact_lock(" SIOX_FORWARD_LOCK_KEY ")");
  if (rc == 0) rc = pass(db, res, &b, late_ns, &top);
  if (rc == 0)
    rc = scalar(db, "SELECT unmatched FROM match_state", 0, NULL, &unmatched); /* kept by triggers (schema 034) */
  if (rc == 0) rc = siox_db_exec(db->conn, "COMMIT");
  if (rc == 0) {
    siox_grant_queue_commit(&db->grants);
    if (top > db->match_watermark) db->match_watermark = top;
    db->activities_arrived = 0;
    res->receives_unmatched = (uint64_t)unmatched;
    rc = siox_rc_waiting_reload(db);
  } else {
    siox_grant_queue_rollback(&db->grants);
  }
  if (rc) {
    PQclear(PQexec(db->conn, "ROLLBACK"));
    db->match_watermark = -1;
    db->parked = -1;
    db->sql_left = 1;
  }
  free(b.child.s), free(b.parent.s), free(b.conf.s), free(b.overlap.s), free(b.flags.s);
  db->match_busy_ns += siox_limits_now() - t0;
  siox_match_cpu_end(db, &cpu);
  return rc;
}
