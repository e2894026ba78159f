/*
 * An object's owner shards and what a join changes about them (see
 * shard_class.h). The set of a root only grows, and each growth sends the
 * stored senders to the new owners once: a sender reaches every owner of
 * its object's names exactly once (at COPY for the batch's own senders,
 * objects.c's copy_outbox; here for those stored before the join).
 */
#include "shard_class.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "ingest.h"
#include "shard_owner.h"

int siox_class_owners(struct siox_db *db, int64_t root, struct siox_shards *out) {
  uint64_t *hit = siox_hmap_get(&db->owners, &root, sizeof root);
  if (hit) return out->m[0] = hit[0], out->m[1] = hit[1], 0;
  char id[24];
  const char *p[] = {siox_i64s(id, root)};
  /* Flattened: a root's descriptors name it (objects.c's join). */
  PGresult *r = siox_db_query(db->conn,
                              "SELECT type, value FROM descriptors WHERE object_id = $1 AND scope_key = '' AND NOT released",
                              1, p);
  if (!r) return -EIO;
  *out = (struct siox_shards){{0, 0}};
  for (int i = 0; i < PQntuples(r); i++)
    siox_shards_add(out, siox_shard_owner((uint32_t)strtoul(PQgetvalue(r, i, 0), NULL, 10), PQgetvalue(r, i, 1), db->nshards));
  PQclear(r);
  return siox_hmap_put(&db->owners, &root, sizeof root, out->m[0], out->m[1]);
}

/* "{j,...}": the shards in add but not in have, other than this one; NULL
 * when none. */
static char *new_owners(const struct siox_db *db, const struct siox_shards *add, const struct siox_shards *have,
                        char *buf, size_t cap) {
  size_t len = 0;
  for (int k = 1; k <= db->nshards; k++)
    if (k != db->shard && siox_shards_has(add, k) && !siox_shards_has(have, k))
      len += (size_t)snprintf(buf + len, cap - len, "%c%d", len ? ',' : '{', k);
  if (!len) return NULL;
  snprintf(buf + len, cap - len, "}");
  return buf;
}

/* This shard's own senders on object root named by a global descriptor
 * (what ingest forwards) get an outbox row for each owner in add but not
 * in have. */
static int send_senders(struct siox_db *db, int64_t root, const struct siox_shards *add, const struct siox_shards *have) {
  char owners[128 * 4 + 3], id[24];
  const char *p[] = {siox_i64s(id, root), new_owners(db, add, have, owners, sizeof owners)};
  if (!p[1]) return 0;
  PGresult *r = siox_db_query(
      db->conn,
      "INSERT INTO shard_outbox (owner, aid, kind, desc_id, offset_b, length_b, target_hwid, target_swid)"
      " SELECT o, r.aid, r.kind, r.desc_id, r.offset_b, r.length_b, r.target_hwid, r.target_swid"
      " FROM remote_calls r JOIN descriptors d ON d.desc_id = r.desc_id AND d.scope_key = ''"
      " CROSS JOIN unnest($2::int[]) o WHERE r.object_id = $1 AND r.kind = 'S' AND r.origin IS NULL",
      2, p);
  PQclear(r);
  return r ? 0 : -EIO;
}

/* Every peer learns that a global name of win and one of loser name one
 * object (any name of each side will do: the joins that made each side
 * were told too). */
static int tell_peers(struct siox_db *db, int64_t win, int64_t loser) {
  struct siox_shards all = {{0, 0}}, none = {{0, 0}};
  char owners[128 * 4 + 3], w[24], l[24];
  for (int k = 1; k <= db->nshards; k++) siox_shards_add(&all, k);
  const char *p[] = {siox_i64s(w, win), siox_i64s(l, loser), new_owners(db, &all, &none, owners, sizeof owners)};
  if (!p[2]) return 0;
  PGresult *r = siox_db_query(
      db->conn,
      "INSERT INTO shard_map_outbox (owner, desc_a, desc_b)"
      " SELECT o, (SELECT min(desc_id) FROM descriptors WHERE object_id = $1 AND scope_key = '' AND NOT released),"
      " (SELECT min(desc_id) FROM descriptors WHERE object_id = $2 AND scope_key = '' AND NOT released)"
      " FROM unnest($3::int[]) o",
      3, p);
  PQclear(r);
  return r ? 0 : -EIO;
}

static int empty(const struct siox_shards *s) { return !s->m[0] && !s->m[1]; }

int siox_class_join(struct siox_db *db, int64_t win, int64_t loser, int tell) {
  struct siox_shards w, l;
  int rc = siox_class_owners(db, win, &w);
  if (rc == 0) rc = siox_class_owners(db, loser, &l);
  if (rc) return rc;
  siox_hmap_del(&db->owners, &loser, sizeof loser);
  if (!empty(&w) && !empty(&l)) {
    rc = send_senders(db, win, &l, &w);
    if (rc == 0) rc = send_senders(db, loser, &w, &l);
    if (rc == 0 && tell) rc = tell_peers(db, win, loser);
  }
  return rc ? rc : siox_hmap_put(&db->owners, &win, sizeof win, w.m[0] | l.m[0], w.m[1] | l.m[1]);
}
