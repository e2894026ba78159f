/*
 * Activities with a receive record the in-memory window never saw (issue
 * 15 §1): a daemon's batch boundary can cut an activity's records, so one
 * receive record arrives without its activity (stored without interval,
 * for the SQL matcher: parked, then woken) and another with the activity
 * in a later batch. The SQL matcher decides the activity's receive records
 * together (match.c joins them all), so the later record must go to it
 * too: the window would decide it alone, and its count of unmatched rows
 * (schema 035) would miss the earlier one.
 *
 * db->rc_waiting holds the aids of such receive records until their
 * activity arrives. It is bounded (SIOX_RC_WAITING_MAX): when full, or
 * after a start or a rolled-back batch (when it may miss some), it is
 * "unknown", and each batch asks the warehouse about its own receives
 * instead (one query on remote_calls_aid) until a matcher pass knows how
 * many calls wait and reloads the waiting receives' aids (or none).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "server.h"

/* Aids of receives stored without interval: 64k (a few MB); more waiting
 * at once means clients drop many activities, and batches ask instead. */
#define SIOX_RC_WAITING_MAX 65536

static void forget_all(struct siox_db *db, int unknown) {
  siox_hmap_clear(&db->rc_waiting);
  db->rc_waiting_unknown = unknown;
}

void siox_rc_waiting_unknown(struct siox_db *db) { forget_all(db, 1); }

void siox_rc_waiting_add(struct siox_db *db, int64_t aid) {
  if (db->rc_waiting_unknown) return; /* the batches ask the warehouse */
  if (db->rc_waiting.n >= SIOX_RC_WAITING_MAX || siox_hmap_put(&db->rc_waiting, &aid, sizeof aid, 1, 0))
    forget_all(db, 1);
}

int siox_rc_waiting_has(const struct siox_db *db, int64_t aid) {
  return db->rc_waiting.n && siox_hmap_get(&db->rc_waiting, &aid, sizeof aid);
}

void siox_rc_waiting_arrived(struct siox_db *db, int64_t aid) {
  if (db->rc_waiting.n) siox_hmap_del(&db->rc_waiting, &aid, sizeof aid);
}

/* Unknown: which of these activities (n aids) have a receive record stored
 * already. They join the map (their activity is in the batch, so
 * siox_rc_waiting_arrived takes them out again). 0 or -EIO. */
int siox_rc_waiting_ask(struct siox_db *db, const int64_t *aids, size_t n) {
  if (!db->rc_waiting_unknown || n == 0) return 0;
  char *lit = siox_int_array(aids, n, sizeof *aids);
  if (!lit) return -EIO;
  const char *v[] = {lit};
  PGresult *r = siox_db_query(db->conn, "SELECT DISTINCT aid FROM remote_calls WHERE aid = ANY($1::bigint[]) AND kind = 'R'",
                              1, v);
  free(lit);
  if (!r) return -EIO;
  int rc = 0;
  for (int i = 0; rc == 0 && i < PQntuples(r); i++) {
    int64_t aid = strtoll(PQgetvalue(r, i, 0), NULL, 10);
    rc = siox_hmap_put(&db->rc_waiting, &aid, sizeof aid, 1, 0) ? -EIO : 0;
  }
  PQclear(r);
  return rc;
}

/* After a committed matcher pass: every remote call stored without its
 * interval is now parked (waiting), and db->parked counts them. Unknown
 * and few enough: the waiting receives' aids are the map. None waiting:
 * the map is empty (an entry whose activity was stored before its record
 * leaves here). 0 or -EIO. */
int siox_rc_waiting_reload(struct siox_db *db) {
  if (!db->mw || db->parked < 0 || (!db->rc_waiting_unknown && (db->parked || !db->rc_waiting.n))) return 0;
  if (db->parked == 0) return forget_all(db, 0), 0;
  if (db->parked > SIOX_RC_WAITING_MAX) return 0;
  PGresult *r = siox_db_query(db->conn, "SELECT DISTINCT aid FROM remote_calls WHERE waiting AND kind = 'R'", 0, NULL);
  if (!r) return -EIO;
  forget_all(db, 0);
  for (int i = 0; i < PQntuples(r); i++) siox_rc_waiting_add(db, strtoll(PQgetvalue(r, i, 0), NULL, 10));
  PQclear(r);
  return 0;
}
